// Folding each finished turn into the breaker state: pure, JSON in and JSON out, so the state can be
// persisted in the machine context and in every turn record.

import { isNoisePath } from './noise.js';
import { nextProgressTrack, startProgressTrack, type Distance } from './no-progress.js';
import type { BreakerState, TurnFacts, TurnUsage } from './types.js';

/**
 * Trees kept for oscillation: with the default 20 turns this is never reached; past it, a return to a
 * tree older than 200 turns is no longer noticed, which keeps a long goal's persisted state small.
 */
export const TREE_HISTORY_LIMIT = 200;

/** Patch ids kept for repeated-diff; a configured window beyond this is read as this many turns. */
export const PATCH_HISTORY_LIMIT = 50;

/** Turns averaged to project the next one: enough to smooth one outlier, few enough to follow a trend. */
const PROJECTION_TURNS = 3;

/**
 * The state before turn 1. `checksSignature` is the precheck's; without it the first turn's checks are
 * compared with nothing and count as unchanged.
 */
export function initialBreakerState(initialTree: string, checksSignature: string | null = null, distance: Distance | null = null): BreakerState {
  return {
    turns: 0,
    tokens: 0,
    costUsd: 0,
    activeMs: 0,
    consecutiveAgentFailures: 0,
    consecutiveEvaluatorFailures: 0,
    consecutiveStagnantTurns: 0,
    recentPatchIds: [],
    treeHistory: [initialTree],
    oscillations: 0,
    lastChecksSignature: checksSignature,
    lastTurnTokenLimitHit: false,
    recentTurns: [],
    noProgress: startProgressTrack(distance),
  };
}

/**
 * The state after one finished turn. Meaningful change means the tree changed in at least one path that
 * is not noise (commits by the agent change the tree too), or the check results changed; anything else
 * is a stagnant turn. An evaluator skip leaves the evaluator-failure streak as it was: a skip is neither
 * a failure nor evidence that the evaluator works again.
 */
export function nextBreakerState(state: BreakerState, facts: TurnFacts, noisePaths: readonly string[]): BreakerState {
  const previousTree = state.treeHistory.at(-1);
  const treeChanged = previousTree === undefined || facts.tree !== previousTree;
  // A changed tree without a path list cannot be judged noise: count it as change rather than kill a goal.
  const onlyNoise =
    facts.changedPaths.length > 0 && facts.changedPaths.every((path) => isNoisePath(path, noisePaths));
  const meaningfulTreeChange = treeChanged && !onlyNoise;
  const checksChanged = state.lastChecksSignature !== null && facts.checksSignature !== state.lastChecksSignature;
  // The previous tree is "unchanged" (stagnation's business); only older ones are a return.
  const returned = treeChanged && state.treeHistory.slice(0, -1).includes(facts.tree);
  const usage: TurnUsage = { tokens: facts.tokens, costUsd: facts.costUsd, activeMs: facts.activeMs };

  return {
    // A turn interrupted by a crash is not folded in but still ran: trust the turn number when it is ahead.
    turns: Math.max(state.turns + 1, facts.turn),
    tokens: state.tokens + facts.tokens,
    costUsd: state.costUsd + facts.costUsd,
    activeMs: state.activeMs + facts.activeMs,
    consecutiveAgentFailures: facts.agentFailed ? state.consecutiveAgentFailures + 1 : 0,
    consecutivePermissionDenials: facts.permissionDenied ? (state.consecutivePermissionDenials ?? 0) + 1 : 0,
    consecutiveEvaluatorFailures: facts.evaluatorFailed
      ? state.consecutiveEvaluatorFailures + 1
      : facts.evaluatorSkipped
        ? state.consecutiveEvaluatorFailures
        : 0,
    consecutiveStagnantTurns: meaningfulTreeChange || checksChanged ? 0 : state.consecutiveStagnantTurns + 1,
    recentPatchIds: [...state.recentPatchIds, facts.patchId].slice(-PATCH_HISTORY_LIMIT),
    treeHistory: [...state.treeHistory, facts.tree].slice(-TREE_HISTORY_LIMIT),
    oscillations: state.oscillations + (returned ? 1 : 0),
    lastChecksSignature: facts.checksSignature,
    lastTurnTokenLimitHit: facts.turnTokenLimitHit,
    recentTurns: [...(state.recentTurns ?? []), usage].slice(-PROJECTION_TURNS),
    tamperTurns: (state.tamperTurns ?? 0) + (facts.tampered === true ? 1 : 0),
    noProgress: nextProgressTrack(state.noProgress, { turn: facts.turn, distance: facts.distance, changedFiles: meaningfulTreeChange, tampered: facts.tampered === true }),
  };
}

/**
 * The state after a turn that ended before its checks and verdict (stopped, let go at shutdown,
 * usage-limited) or after the pre-check: no pattern breaker learns from it, but its turn number and all it
 * spent (tokens, USD, active time) count toward the budgets like any turn's.
 */
export function accountUnevaluatedTurn(state: BreakerState, turn: number, usage: TurnUsage): BreakerState {
  return {
    ...state,
    turns: Math.max(state.turns, turn),
    tokens: state.tokens + usage.tokens,
    costUsd: state.costUsd + usage.costUsd,
    activeMs: state.activeMs + usage.activeMs,
  };
}

/**
 * The state after goald restored an earlier turn's files between turns (a rollback): the restored tree is
 * the one the next turn starts from, so a next turn that changes nothing is stagnant, not a return.
 */
export function afterRestoredTree(state: BreakerState, tree: string): BreakerState {
  return { ...state, treeHistory: [...state.treeHistory, tree].slice(-TREE_HISTORY_LIMIT) };
}

/** The expected cost of the next turn: the average of the recent turns (all turns for older states). */
export function projectNextTurn(state: BreakerState): TurnUsage {
  const recent = state.recentTurns ?? [];
  if (recent.length > 0) {
    const average = (pick: (usage: TurnUsage) => number): number =>
      recent.reduce((total, usage) => total + pick(usage), 0) / recent.length;
    return {
      tokens: average((usage) => usage.tokens),
      costUsd: average((usage) => usage.costUsd),
      activeMs: average((usage) => usage.activeMs),
    };
  }
  if (state.turns === 0) return { tokens: 0, costUsd: 0, activeMs: 0 };
  return {
    tokens: state.tokens / state.turns,
    costUsd: state.costUsd / state.turns,
    activeMs: state.activeMs / state.turns,
  };
}
