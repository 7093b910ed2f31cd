// Breakers: pure rules that end a goal before it burns more time or tokens.

import type { BreakerName } from '../../machines/goal.machine.js';
import type { Distance, ProgressTrack } from './no-progress.js';
export type { BreakerName } from '../../machines/goal.machine.js';

/** What one finished turn contributes to the breakers. */
export interface TurnFacts {
  turn: number;
  /** Agent tokens + evaluator tokens of this turn. */
  tokens: number;
  /** USD of this turn (agent + evaluator) when known, else 0. */
  costUsd: number;
  /** Snapshot tree after the turn. */
  tree: string;
  /** Patch id of this turn's delta; null when the delta is empty. */
  patchId: string | null;
  /** Paths changed by this turn. */
  changedPaths: string[];
  /** A stable signature of the check results (names + pass/fail), to tell "checks changed". */
  checksSignature: string;
  agentFailed: boolean;
  /** The evaluator returned an error (not a skip). */
  evaluatorFailed: boolean;
  /** The evaluator was not called (skipped, or `none`): leaves the evaluator-failure streak unchanged. */
  evaluatorSkipped?: boolean;
  /** The turn was killed for passing the per-turn token limit. */
  turnTokenLimitHit: boolean;
  /** The agent's CLI denied tool calls for lack of permission (Claude Code's permission_denials). */
  permissionDenied?: boolean;
  /** Wall time spent active in this turn (paused time excluded). */
  activeMs: number;
  /** The tamper guard found the turn weakening its own grading (src/guard/). */
  tampered?: boolean;
  /** How far the turn left the goal (no-progress.ts); absent: not measured. */
  distance?: Distance;
}

/** Plain JSON; persisted in the machine context and in every turn record. */
export interface BreakerState {
  turns: number;
  tokens: number;
  costUsd: number;
  activeMs: number;
  consecutiveAgentFailures: number;
  /** Consecutive turns whose tool calls were denied for lack of permission (absent in older records). */
  consecutivePermissionDenials?: number;
  consecutiveEvaluatorFailures: number;
  consecutiveStagnantTurns: number;
  /** Patch ids of the most recent turns (null for empty deltas), newest last, bounded (breaker-state.ts). */
  recentPatchIds: (string | null)[];
  /** Every snapshot tree seen, oldest first, starting with the pre-turn snapshot; bounded (breaker-state.ts). */
  treeHistory: string[];
  oscillations: number;
  lastChecksSignature: string | null;
  lastTurnTokenLimitHit: boolean;
  /** What the most recent turns cost, newest last (a few); the next turn's projection averages them. */
  recentTurns?: TurnUsage[];
  /** Turns with tamper findings so far, in a row or not (absent in older records). */
  tamperTurns?: number;
  /** The no-progress breaker's fewest distances and turns without progress (absent in older records). */
  noProgress?: ProgressTrack;
}

/** The resources one finished turn used. */
export interface TurnUsage {
  tokens: number;
  costUsd: number;
  activeMs: number;
}

export interface Trip {
  breaker: BreakerName;
  /** One line: what tripped and the numbers ("5 turns without meaningful change (limit 5)"). */
  message: string;
  /** The numbers that tripped it. */
  value: number;
  limit: number;
}
