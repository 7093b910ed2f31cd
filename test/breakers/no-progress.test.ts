// The no-progress breaker as a table: distances turn by turn through nextBreakerState and findTrip.

import { describe, expect, it } from 'vitest';
import { distanceOf, failingTestsOf, trustedCounts } from '../../src/breakers/no-progress.js';
import { nearBreakerWarnings } from '../../src/breakers/index.js';
import type { TurnFacts } from '../../src/breakers/types.js';
import type { CheckResult } from '../../src/workspace/types.js';
import { renderDistanceLine } from '../../src/prompt/distance-line.js';
import { firstTripTurn, LIMITS, limitsWith, runTurns } from './fixtures.js';

const at = (remaining: number | null, failingTests: number | null = null): Partial<TurnFacts> => ({ distance: { remaining, failingTests } });

function check(passed: boolean, tests?: CheckResult['tests']): CheckResult {
  return { name: 'npm test', command: 'npm test', exitCode: passed ? 0 : 1, passed, timedOut: false, durationMs: 1, outputTail: '', ...(tests ? { tests } : {}) };
}

describe('no-progress', () => {
  it('trips after 4 turns that change files while the same items remain, with the numbers', () => {
    const outcomes = runTurns([at(3), at(3), at(3), at(3), at(3)]);
    // Turn 1 measures the first distance (nothing to shrink from), so turns 1-4 are the four without progress.
    expect(firstTripTurn(outcomes)).toBe(4);
    expect(outcomes[3]?.trip).toEqual({
      breaker: 'no-progress',
      message: 'the distance to the goal did not shrink in 4 turns that changed files (limit 4): 3 items remain',
      value: 4,
      limit: 4,
    });
  });

  it('does not trip while the remaining list shrinks, or the failing tests do', () => {
    expect(firstTripTurn(runTurns([at(5), at(5), at(4), at(4), at(4), at(3), at(3), at(3), at(2)]))).toBeNull();
    expect(firstTripTurn(runTurns([at(3, 9), at(3, 9), at(3, 8), at(3, 8), at(3, 8), at(3, 7)]))).toBeNull();
  });

  it('measures against the fewest so far: worse, then back, is not progress', () => {
    const outcomes = runTurns([at(2), at(4), at(2), at(4), at(2)]);
    expect(firstTripTurn(outcomes)).toBe(4);
    expect(outcomes[3]?.trip?.message).toContain('4 items remain (fewest 2)');
  });

  it('counts neither turns that changed nothing (stagnation) nor turns that measured nothing', () => {
    const unchanged = { tree: 'tree-0', patchId: null, changedPaths: [] };
    expect(firstTripTurn(runTurns([at(3), at(3), { ...at(3), ...unchanged }, { ...at(3), ...unchanged }, at(null)], limitsWith({ stagnation: 0 })))).toBeNull();
    expect(runTurns([at(3), at(3), at(null), at(null)]).at(-1)?.state.noProgress?.turnsWithout).toBe(2);
  });

  it('never counts a tampered turn as progress', () => {
    const outcomes = runTurns([at(3, 5), at(3, 5), at(3, 5), { ...at(3, 0), tampered: true }], limitsWith({ tamper: 0 }));
    expect(outcomes[3]?.trip?.breaker).toBe('no-progress');
  });

  it('is off at 0, and warns two turns before it trips', () => {
    expect(firstTripTurn(runTurns([at(3), at(3), at(3), at(3), at(3), at(3)], limitsWith({ noProgress: 0 })))).toBeNull();
    const [, second] = runTurns([at(3), at(3)]);
    expect(nearBreakerWarnings(second?.state ?? runTurns([])[0]!.state, LIMITS)).toContain(
      '2 turns changed files without fewer items remaining or fewer tests failing; goald stops at 4',
    );
  });
});

describe('distance of a turn', () => {
  const verdict = { achieved: false, blocked: false, reason: 'no', remaining: ['a', 'b'] };

  it('is the verdict\'s remaining items and the failing tests of trusted counts', () => {
    expect(distanceOf(verdict, [check(false, { runner: 'vitest', passed: 3, failed: 2, skipped: 0 }), check(true)])).toEqual({ remaining: 2, failingTests: 2 });
    expect(distanceOf(null, [])).toEqual({ remaining: null, failingTests: null });
  });

  it('does not trust counts that disagree with the exit status: a failing check reporting 0 failed, or a passing one reporting failures', () => {
    const forged = check(false, { runner: 'vitest', passed: 999, failed: 0, skipped: 0 });
    expect(trustedCounts(forged)).toBeNull();
    expect(failingTestsOf([forged])).toBeNull();
    expect(trustedCounts(check(true, { runner: 'jest', passed: 1, failed: 1, skipped: 0 }))).toBeNull();
    // A failing check without counts: the failing tests are unknown, not 0.
    expect(failingTestsOf([check(false), check(true, { runner: 'jest', passed: 4, failed: 0, skipped: 0 })])).toBeNull();
  });
});

describe('the recitation distance line', () => {
  it('compares the last turn with the turn the window began', () => {
    const outcomes = runTurns([at(5, 7), at(5, 7), at(4, 7), at(3, 7), at(3, 6)]);
    expect(renderDistanceLine(outcomes.at(-1)?.state.noProgress, 4)).toBe('Distance: 3 items remain, 2 fewer than turn 1; 6 tests fail, 1 fewer than turn 1');
    expect(renderDistanceLine(outcomes.at(-1)?.state.noProgress, 2)).toBe('Distance: 3 items remain, 1 fewer than turn 3; 6 tests fail, 1 fewer than turn 3');
    expect(renderDistanceLine(runTurns([at(1), at(2)]).at(-1)?.state.noProgress, 4)).toBe('Distance: 2 items remain, 1 more than turn 1');
    expect(renderDistanceLine(runTurns([at(null)]).at(-1)?.state.noProgress, 4)).toBeNull();
  });
});
