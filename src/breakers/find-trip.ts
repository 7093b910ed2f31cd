// Which breaker, if any, ends the goal: after a turn (findTrip) and before starting one (refuseNextTurn).
//
// | breaker            | trips after a turn when                                  | refuses the next turn when      |
// |--------------------|----------------------------------------------------------|---------------------------------|
// | turn-token-limit   | the turn was killed for passing the per-turn limit       | -                               |
// | tamper             | turns with tamper findings (in a row or not) >= limit    | -                               |
// | token-budget       | tokens >= budget (reached)                               | tokens + projected > budget     |
// | cost-budget        | USD > budget (passed); null = off                        | USD + projected > budget        |
// | wall-clock         | active time > limit (passed); null = off                 | active time >= limit (none left)|
// | permission-denied  | turns in a row with denied tool calls >= limit           | -                               |
// | agent-failures     | consecutive failed agent turns >= limit                  | -                               |
// | evaluator-failures | consecutive evaluator errors >= limit (skips don't count)| -                               |
// | repeated-diff      | one non-empty patch id >= count times in the last window | -                               |
// | oscillation        | returns to a tree seen 2+ turns ago >= limit             | -                               |
// | stagnation         | consecutive turns without meaningful change >= limit     | -                               |
// | no-progress        | turns changing files, distance not below its fewest >= limit | -                           |
// | max-turns          | turns >= limit                                           | turns >= limit                  |
//
// After a turn the rules run in that order and the first trip wins: the turn's own hard failure first,
// then the budgets the user set, then broken machinery, then loop patterns from the most specific to the
// most general, and max-turns last, because when a pattern explains why the turns ran out it is the more
// useful reason. A numeric limit of 0 or less turns its breaker off (cost and wall-clock use null).
// The projection is the average of the recent turns (projectNextTurn).

import { PATCH_HISTORY_LIMIT, projectNextTurn } from './breaker-state.js';
import { noProgressTrip } from './no-progress.js';
import { formatDuration, toDurationText } from '../config/duration.js';
import { formatCount, formatUsd, pluralize } from './format-quantity.js';
import type { BreakerName, BreakerState, Trip, TurnFacts } from './types.js';
import type { Limits } from '../config/types.js';

type Rule = (state: BreakerState, limits: Limits, facts: TurnFacts) => Trip | null;

const PATCH_ID_SHOWN_CHARS = 7; // as git abbreviates commit ids

const AFTER_TURN_RULES: readonly [BreakerName, Rule][] = [
  [
    'turn-token-limit',
    (_state, limits, facts) =>
      facts.turnTokenLimitHit
        ? trip(
            'turn-token-limit',
            `turn ${facts.turn} was killed at ${formatCount(facts.tokens)} tokens (per-turn limit ${formatCount(limits.turnTokenLimit)})`,
            facts.tokens,
            limits.turnTokenLimit,
          )
        : null,
  ],
  [
    'tamper',
    (state, limits) =>
      isOn(limits.tamper) && (state.tamperTurns ?? 0) >= limits.tamper
        ? trip(
            'tamper',
            `${pluralize(state.tamperTurns ?? 0, 'turn')} weakened the goal's own grading (limit ${limits.tamper}): protected paths, deleted or skipped tests, or a check's script`,
            state.tamperTurns ?? 0,
            limits.tamper,
          )
        : null,
  ],
  [
    'token-budget',
    (state, limits) =>
      isOn(limits.tokenBudget) && state.tokens >= limits.tokenBudget
        ? trip(
            'token-budget',
            `used ${formatCount(state.tokens)} tokens (budget ${formatCount(limits.tokenBudget)})`,
            state.tokens,
            limits.tokenBudget,
          )
        : null,
  ],
  [
    'cost-budget',
    (state, limits) =>
      limits.costBudgetUsd !== null && toMicroUsd(state.costUsd) > toMicroUsd(limits.costBudgetUsd)
        ? trip(
            'cost-budget',
            `spent ${formatUsd(state.costUsd)} (budget ${formatUsd(limits.costBudgetUsd)})`,
            state.costUsd,
            limits.costBudgetUsd,
          )
        : null,
  ],
  [
    'wall-clock',
    (state, limits) =>
      limits.wallClockMs !== null && state.activeMs > limits.wallClockMs
        ? trip(
            'wall-clock',
            `active for ${formatDuration(state.activeMs)} (limit ${toDurationText(limits.wallClockMs)})`,
            state.activeMs,
            limits.wallClockMs,
          )
        : null,
  ],
  [
    'permission-denied',
    (state, limits) =>
      isOn(limits.permissionDenials) && (state.consecutivePermissionDenials ?? 0) >= limits.permissionDenials
        ? trip(
            'permission-denied',
            `the agent's tool calls were denied ${state.consecutivePermissionDenials ?? 0} turns in a row (limit ${limits.permissionDenials}); grant them with --permission-mode / --allowedTools in agent.args`,
            state.consecutivePermissionDenials ?? 0,
            limits.permissionDenials,
          )
        : null,
  ],
  [
    'agent-failures',
    (state, limits) =>
      isOn(limits.agentFailures) && state.consecutiveAgentFailures >= limits.agentFailures
        ? trip(
            'agent-failures',
            `the agent failed ${pluralize(state.consecutiveAgentFailures, 'turn')} in a row (limit ${limits.agentFailures})`,
            state.consecutiveAgentFailures,
            limits.agentFailures,
          )
        : null,
  ],
  [
    'evaluator-failures',
    (state, limits) =>
      isOn(limits.evaluatorFailures) && state.consecutiveEvaluatorFailures >= limits.evaluatorFailures
        ? trip(
            'evaluator-failures',
            `the evaluator failed ${pluralize(state.consecutiveEvaluatorFailures, 'time')} in a row (limit ${limits.evaluatorFailures})`,
            state.consecutiveEvaluatorFailures,
            limits.evaluatorFailures,
          )
        : null,
  ],
  [
    'repeated-diff',
    (state, limits) => {
      const { count, window } = limits.repeatedDiff;
      if (!isOn(count) || !isOn(window)) return null;
      const repeated = mostRepeatedPatch(state.recentPatchIds, window);
      if (repeated === null || repeated.times < count) return null;
      return trip(
        'repeated-diff',
        `same diff ${repeated.times} times in the last ${pluralize(window, 'turn')} (patch ${repeated.patchId.slice(0, PATCH_ID_SHOWN_CHARS)})`,
        repeated.times,
        count,
      );
    },
  ],
  [
    'oscillation',
    (state, limits) =>
      isOn(limits.oscillation) && state.oscillations >= limits.oscillation
        ? trip(
            'oscillation',
            `the tree returned to an earlier state ${pluralize(state.oscillations, 'time')} (limit ${limits.oscillation})`,
            state.oscillations,
            limits.oscillation,
          )
        : null,
  ],
  [
    'stagnation',
    (state, limits) =>
      isOn(limits.stagnation) && state.consecutiveStagnantTurns >= limits.stagnation
        ? trip(
            'stagnation',
            `no meaningful change for ${state.consecutiveStagnantTurns} consecutive turns (limit ${limits.stagnation})`,
            state.consecutiveStagnantTurns,
            limits.stagnation,
          )
        : null,
  ],
  ['no-progress', (state, limits, facts) => noProgressTrip(state, limits, facts.distance)],
  [
    'max-turns',
    (state, limits) =>
      isOn(limits.maxTurns) && state.turns >= limits.maxTurns
        ? trip(
            'max-turns',
            `ran ${pluralize(state.turns, 'turn')} without meeting the goal (limit ${limits.maxTurns})`,
            state.turns,
            limits.maxTurns,
          )
        : null,
  ],
];

/** The breakers in the order findTrip checks them. */
export const TRIP_PRIORITY: readonly BreakerName[] = AFTER_TURN_RULES.map(([name]) => name);

/** The breaker a finished turn trips, given the state after that turn (nextBreakerState), or null. */
export function findTrip(state: BreakerState, limits: Limits, facts: TurnFacts): Trip | null {
  for (const [, rule] of AFTER_TURN_RULES) {
    const found = rule(state, limits, facts);
    if (found) return found;
  }
  return null;
}

/**
 * The breaker that forbids starting another turn, or null. `activeMs` is the active time so far when the
 * caller measures it more precisely than the state (cool-downs included); it defaults to the state's.
 * Checked in order: max-turns, token-budget, cost-budget, wall-clock.
 */
export function refuseNextTurn(
  state: BreakerState,
  limits: Limits,
  activeMs: number = state.activeMs,
): Trip | null {
  if (isOn(limits.maxTurns) && state.turns >= limits.maxTurns) {
    return trip(
      'max-turns',
      `${pluralize(state.turns, 'turn')} already run (limit ${limits.maxTurns})`,
      state.turns,
      limits.maxTurns,
    );
  }
  const projected = projectNextTurn(state);
  if (isOn(limits.tokenBudget)) {
    const expected = state.tokens + projected.tokens;
    if (state.tokens >= limits.tokenBudget || expected > limits.tokenBudget) {
      return trip(
        'token-budget',
        `the next turn would cross the token budget: ${formatCount(state.tokens)} used + about ${formatCount(projected.tokens)} projected > ${formatCount(limits.tokenBudget)}`,
        expected,
        limits.tokenBudget,
      );
    }
  }
  if (limits.costBudgetUsd !== null) {
    const expected = state.costUsd + projected.costUsd;
    if (toMicroUsd(expected) > toMicroUsd(limits.costBudgetUsd)) {
      return trip(
        'cost-budget',
        `the next turn would cross the cost budget: ${formatUsd(state.costUsd)} spent + about ${formatUsd(projected.costUsd)} projected > ${formatUsd(limits.costBudgetUsd)}`,
        expected,
        limits.costBudgetUsd,
      );
    }
  }
  if (limits.wallClockMs !== null && activeMs >= limits.wallClockMs) {
    return trip(
      'wall-clock',
      `no time left for another turn: active for ${formatDuration(activeMs)} (limit ${toDurationText(limits.wallClockMs)})`,
      activeMs,
      limits.wallClockMs,
    );
  }
  return null;
}

/** The non-empty patch id seen most often in the last `window` turns, with its count (on a tie, the later one). */
export function mostRepeatedPatch(
  recentPatchIds: readonly (string | null)[],
  window: number,
): { patchId: string; times: number } | null {
  const counts = new Map<string, number>();
  let best: { patchId: string; times: number } | null = null;
  for (const patchId of recentPatchIds.slice(-Math.min(window, PATCH_HISTORY_LIMIT))) {
    if (patchId === null || patchId === '') continue;
    const times = (counts.get(patchId) ?? 0) + 1;
    counts.set(patchId, times);
    if (best === null || times >= best.times) best = { patchId, times };
  }
  return best;
}

// Sums of float dollars drift (0.4 + 0.4 + 0.4 + 0.4 = 1.6000000000000003): compare whole micro-dollars.
function toMicroUsd(usd: number): number {
  return Math.round(usd * 1_000_000);
}

function isOn(limit: number): boolean {
  return limit > 0;
}

function trip(breaker: BreakerName, message: string, value: number, limit: number): Trip {
  return { breaker, message, value, limit };
}
