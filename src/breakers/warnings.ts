// Warnings for the prompt's recitation when a breaker is close, so the agent can change course before
// goald stops it.

import { projectNextTurn } from './breaker-state.js';
import { mostRepeatedPatch } from './find-trip.js';
import { noProgressWarning } from './no-progress.js';
import { formatDuration, toDurationText } from '../config/duration.js';
import { formatCount, formatUsd, pluralize } from './format-quantity.js';
import type { BreakerState } from './types.js';
import type { Limits } from '../config/types.js';

/** How close counts as close: a breaker at most this many turns (or steps) from tripping. */
const WARN_WITHIN = 2;

/**
 * One line per breaker within WARN_WITHIN of tripping ("3 turns without meaningful change; goald stops
 * at 5"), in findTrip's order. Counters warn once they are at least 1; budgets and wall-clock warn when at
 * most WARN_WITHIN more turns fit at the recent average. A breaker that would already trip says nothing:
 * it ends the goal before a prompt is built.
 */
export function nearBreakerWarnings(state: BreakerState, limits: Limits): string[] {
  const warnings: string[] = [];
  const projected = projectNextTurn(state);

  // Turns that still fit at the recent rate when that is between 1 and WARN_WITHIN; null otherwise.
  const fewTurnsLeft = (used: number, limit: number, perTurn: number): number | null => {
    if (perTurn <= 0 || used >= limit) return null;
    // The epsilon keeps float dollars from losing a whole turn ((1.6 - 1.2) / 0.4 = 0.9999999999999998).
    const left = Math.floor((limit - used) / perTurn + 1e-9);
    return left >= 1 && left <= WARN_WITHIN ? left : null;
  };

  if (limits.tokenBudget > 0) {
    const left = fewTurnsLeft(state.tokens, limits.tokenBudget, projected.tokens);
    if (left !== null) {
      warnings.push(
        `${formatCount(state.tokens)} of ${formatCount(limits.tokenBudget)} tokens used, about ${pluralize(left, 'turn')} left at the recent rate; goald stops at the budget`,
      );
    }
  }
  if (limits.costBudgetUsd !== null) {
    const left = fewTurnsLeft(state.costUsd, limits.costBudgetUsd, projected.costUsd);
    if (left !== null) {
      warnings.push(
        `${formatUsd(state.costUsd)} of ${formatUsd(limits.costBudgetUsd)} spent, about ${pluralize(left, 'turn')} left at the recent rate; goald stops at the budget`,
      );
    }
  }
  if (limits.wallClockMs !== null) {
    const left = fewTurnsLeft(state.activeMs, limits.wallClockMs, projected.activeMs);
    if (left !== null) {
      warnings.push(
        `active for ${formatDuration(state.activeMs)} of ${toDurationText(limits.wallClockMs)}, about ${pluralize(left, 'turn')} left at the recent pace; goald stops at the limit`,
      );
    }
  }

  const near = (value: number, limit: number): boolean =>
    limit > 0 && value >= 1 && value < limit && limit - value <= WARN_WITHIN;

  if (near(state.tamperTurns ?? 0, limits.tamper)) {
    warnings.push(`${pluralize(state.tamperTurns ?? 0, 'tamper turn')}; goald stops at ${limits.tamper}`);
  }
  if (near(state.consecutiveAgentFailures, limits.agentFailures)) {
    warnings.push(
      `${pluralize(state.consecutiveAgentFailures, 'agent failure')} in a row; goald stops at ${limits.agentFailures}`,
    );
  }
  if (near(state.consecutiveEvaluatorFailures, limits.evaluatorFailures)) {
    warnings.push(
      `${pluralize(state.consecutiveEvaluatorFailures, 'evaluator failure')} in a row; goald stops at ${limits.evaluatorFailures}`,
    );
  }
  const { count, window } = limits.repeatedDiff;
  const repeated = window > 0 ? mostRepeatedPatch(state.recentPatchIds, window) : null;
  if (repeated !== null && repeated.times >= 2 && near(repeated.times, count)) {
    warnings.push(
      `the same diff ${pluralize(repeated.times, 'time')} in the last ${pluralize(window, 'turn')}; goald stops at ${count}`,
    );
  }
  if (near(state.oscillations, limits.oscillation)) {
    warnings.push(
      `the tree returned to an earlier state ${pluralize(state.oscillations, 'time')}; goald stops at ${limits.oscillation}`,
    );
  }
  if (near(state.consecutiveStagnantTurns, limits.stagnation)) {
    warnings.push(
      `${pluralize(state.consecutiveStagnantTurns, 'turn')} without meaningful change; goald stops at ${limits.stagnation}`,
    );
  }
  const noProgress = noProgressWarning(state, limits, WARN_WITHIN);
  if (noProgress !== null) warnings.push(noProgress);
  if (near(state.turns, limits.maxTurns)) {
    warnings.push(`${formatCount(state.turns)} of ${pluralize(limits.maxTurns, 'turn')} used; goald stops at ${limits.maxTurns}`);
  }
  return warnings;
}
