// The regression guard's rules as a table: scores, falling below the best, and which turn becomes the best.

import { describe, expect, it } from 'vitest';
import { fellBelow, nextBest, scoreOf, type BestTurn } from '../../src/checkpoints/keep-best.js';
import type { CheckResult } from '../../src/workspace/types.js';

function check(passed: boolean, tests?: { passed: number; failed: number }): CheckResult {
  return {
    name: 'test',
    command: 'npm test',
    exitCode: passed ? 0 : 1,
    passed,
    timedOut: false,
    durationMs: 1,
    outputTail: '',
    ...(tests ? { tests: { runner: 'vitest', skipped: 0, ...tests } } : {}),
  };
}

const turnOf = (turn: number, checks: CheckResult[]): BestTurn => ({ turn, tree: `tree-${turn}`, score: scoreOf(checks) });

describe('keep-best', () => {
  it('scores passing checks, then passing tests counted only where they agree with the exit status', () => {
    expect(scoreOf([check(false, { passed: 3, failed: 2 }), check(true)])).toEqual({ passingChecks: 1, passingTests: 3, allPassed: false });
    // A failing check that claims no failure: its counts are not trusted.
    expect(scoreOf([check(false, { passed: 999, failed: 0 })])).toEqual({ passingChecks: 0, passingTests: 0, allPassed: false });
    expect(scoreOf([check(true, { passed: 5, failed: 0 })])).toEqual({ passingChecks: 1, passingTests: 5, allPassed: true });
  });

  it('falls below the best with fewer passing checks, or as many and fewer passing tests', () => {
    const best = turnOf(2, [check(false, { passed: 3, failed: 2 })]);
    expect(fellBelow(scoreOf([check(false, { passed: 2, failed: 3 })]), best)).toBe(true);
    expect(fellBelow(scoreOf([check(false)]), best)).toBe(true);
    expect(fellBelow(scoreOf([check(false, { passed: 3, failed: 9 })]), best)).toBe(false);
    expect(fellBelow(scoreOf([check(true, { passed: 1, failed: 0 })]), best)).toBe(false);
  });

  it('never makes a failing check the best by its test count alone; all passing, more checks or a tie do', () => {
    const best = turnOf(0, [check(false, { passed: 3, failed: 2 })]);
    expect(nextBest(best, turnOf(1, [check(false, { passed: 998, failed: 1 })]))).toBe(best);
    expect(nextBest(best, turnOf(1, [check(false, { passed: 3, failed: 1 })])).turn).toBe(1);
    expect(nextBest(best, turnOf(1, [check(true, { passed: 4, failed: 0 })])).turn).toBe(1);
    expect(nextBest(best, turnOf(1, [check(false, { passed: 1, failed: 4 })]))).toBe(best);
    expect(nextBest(null, turnOf(0, [])).turn).toBe(0);
  });
});
