// The breakers' counters as a view shows them ("stagnation 2 of 5"): each breaker that counts toward a
// limit, by name, read from the breaker state after a turn.

import type { Limits } from '../config/types.js';
import { mostRepeatedPatch } from './find-trip.js';
import type { BreakerName, BreakerState } from './types.js';

/** The counter of each counting breaker after a turn (budgets and max-turns are shown from the totals). */
export function breakerCounters(state: BreakerState, limits: Limits): Partial<Record<BreakerName, number>> {
  const { window } = limits.repeatedDiff;
  const repeated = window > 0 ? mostRepeatedPatch(state.recentPatchIds, window) : null;
  return {
    stagnation: state.consecutiveStagnantTurns,
    'repeated-diff': repeated?.times ?? 0,
    oscillation: state.oscillations,
    'agent-failures': state.consecutiveAgentFailures,
    'evaluator-failures': state.consecutiveEvaluatorFailures,
    'permission-denied': state.consecutivePermissionDenials ?? 0,
    tamper: state.tamperTurns ?? 0,
    'no-progress': state.noProgress?.turnsWithout ?? 0,
  };
}
