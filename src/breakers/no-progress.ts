// The no-progress breaker: distance, not activity. A turn's distance from the goal is the number of items
// the evaluator says remain and the number of tests the checks fail; when neither has gone below its
// fewest so far for `limits.noProgress` turns in which the agent kept changing files, the goal fails.
//
// Against the fewest so far, not the previous turn: an agent that makes things worse and then undoes it
// has not progressed. A turn that changed nothing is stagnation's business and neither counts nor
// resets; neither does a turn whose distance could not be measured at all (no verdict, and a failing check
// without test counts). A turn the tamper guard caught never counts as progress.

import type { CheckResult } from '../workspace/types.js';
import type { Verdict } from '../evaluator/types.js';
import { pluralize } from './format-quantity.js';
import type { BreakerState, Trip } from './types.js';
import type { Limits } from '../config/types.js';

/** How far a turn left the goal: null where it was not measured this turn. */
export interface Distance {
  /** The evaluator's `remaining` items; null when the evaluator gave no verdict this turn. */
  remaining: number | null;
  /** Tests the checks fail; null when a failing check showed no test counts goald could trust. */
  failingTests: number | null;
}

/** The breaker's memory, kept in BreakerState (and so in every turn record). */
export interface ProgressTrack {
  /** The fewest remaining items and failing tests seen so far (null: never measured). */
  fewestRemaining: number | null;
  fewestFailingTests: number | null;
  /** Turns in a row that changed files and measured a distance without going below either fewest. */
  turnsWithout: number;
  /** The distance of the most recent turns, oldest first (RECENT_DISTANCES at most), for the recitation. */
  recent: DistanceAt[];
}

/** One turn's distance. */
export interface DistanceAt extends Distance {
  turn: number;
}

/** Distances kept in the track: enough to compare with the turn a no-progress window (default 4) began. */
const RECENT_DISTANCES = 10;

/**
 * The tests a set of check results fails. A check's counts are trusted only when they agree with its exit
 * status (a failing check that reports no failed test ran something else, or printed a made-up summary);
 * a passing check without counts fails nothing.
 */
export function failingTestsOf(checks: readonly CheckResult[]): number | null {
  let failing = 0;
  for (const check of checks) {
    const counts = trustedCounts(check);
    if (counts !== null) failing += counts.failed;
    else if (!check.passed) return null;
  }
  return failing;
}

/** A check's test counts when they agree with its exit status, else null. */
export function trustedCounts(check: CheckResult): NonNullable<CheckResult['tests']> | null {
  const { tests } = check;
  if (tests === undefined) return null;
  return check.passed === (tests.failed === 0) ? tests : null;
}

/** A turn's distance from its verdict (null when none) and its checks (none configured: not measured). */
export function distanceOf(verdict: Verdict | null, checks: readonly CheckResult[]): Distance {
  return { remaining: verdict === null ? null : verdict.remaining.length, failingTests: checks.length === 0 ? null : failingTestsOf(checks) };
}

/** The track before turn 1: the pre-check's distance is the first fewest. */
export function startProgressTrack(distance: Distance | null): ProgressTrack {
  return {
    fewestRemaining: distance?.remaining ?? null,
    fewestFailingTests: distance?.failingTests ?? null,
    turnsWithout: 0,
    recent: distance === null ? [] : [{ turn: 0, ...distance }],
  };
}

/** The track after one evaluated turn. `changedFiles`: the turn changed the tree meaningfully. */
export function nextProgressTrack(
  track: ProgressTrack | undefined,
  turn: { turn: number; distance: Distance | undefined; changedFiles: boolean; tampered: boolean },
): ProgressTrack {
  const before = track ?? startProgressTrack(null);
  const distance = turn.distance ?? { remaining: null, failingTests: null };
  const shrank = (now: number | null, fewest: number | null): boolean => now !== null && fewest !== null && now < fewest;
  const lower = (now: number | null, fewest: number | null): number | null => (now === null ? fewest : fewest === null ? now : Math.min(now, fewest));
  const measured = distance.remaining !== null || distance.failingTests !== null;
  const progressed =
    !turn.tampered && (shrank(distance.remaining, before.fewestRemaining) || shrank(distance.failingTests, before.fewestFailingTests));
  let turnsWithout = before.turnsWithout;
  if (progressed) turnsWithout = 0;
  else if (turn.changedFiles && measured) turnsWithout += 1;
  return {
    fewestRemaining: lower(distance.remaining, before.fewestRemaining),
    fewestFailingTests: lower(distance.failingTests, before.fewestFailingTests),
    turnsWithout,
    recent: [...before.recent, { turn: turn.turn, remaining: distance.remaining, failingTests: distance.failingTests }].slice(-RECENT_DISTANCES),
  };
}

/** The no-progress trip for a breaker state, or null (a limit of 0 or less turns it off). */
export function noProgressTrip(state: BreakerState, limits: Limits, distance: Distance | undefined): Trip | null {
  const track = state.noProgress;
  if (track === undefined || limits.noProgress <= 0 || track.turnsWithout < limits.noProgress) return null;
  return {
    breaker: 'no-progress',
    message: `the distance to the goal did not shrink in ${pluralize(track.turnsWithout, 'turn')} that changed files (limit ${limits.noProgress}): ${describeDistance(distance, track)}`,
    value: track.turnsWithout,
    limit: limits.noProgress,
  };
}

/** "3 items remain (fewest 2), 5 tests fail (fewest 4)": what was measured last, against the fewest. */
function describeDistance(distance: Distance | undefined, track: ProgressTrack): string {
  const parts: string[] = [];
  const remaining = distance?.remaining ?? null;
  const failing = distance?.failingTests ?? null;
  if (remaining !== null) parts.push(`${pluralize(remaining, 'item')} ${remaining === 1 ? 'remains' : 'remain'}${fewest(track.fewestRemaining, remaining)}`);
  if (failing !== null) parts.push(`${pluralize(failing, 'test')} ${failing === 1 ? 'fails' : 'fail'}${fewest(track.fewestFailingTests, failing)}`);
  return parts.length === 0 ? 'not measured this turn' : parts.join(', ');
}

function fewest(best: number | null, now: number): string {
  return best === null || best === now ? '' : ` (fewest ${best})`;
}

/** Near-breaker warning for the recitation, or null. */
export function noProgressWarning(state: BreakerState, limits: Limits, within: number): string | null {
  const turns = state.noProgress?.turnsWithout ?? 0;
  if (limits.noProgress <= 0 || turns < 1 || turns >= limits.noProgress || limits.noProgress - turns > within) return null;
  return `${pluralize(turns, 'turn')} changed files without fewer items remaining or fewer tests failing; goald stops at ${limits.noProgress}`;
}
