// What a supervisor records and reports: the turn record (one line of turns.jsonl, declared in state/) and
// the progress events that `--json` prints and the daemon streams.

import type { BreakerName, FailureReason, PauseReason } from '../../machines/goal.machine.js';
import type { GoalEdit } from '../../state/types.js';
import type { TurnOutcome } from '../agents/types.js';
import type { TamperFinding } from '../guard/types.js';

/** Who changed a goal's contract (an entry of its edit history says the same). */
export type GoalEditSource = GoalEdit['by'];

// One line of goals/<id>/turns.jsonl: declared by its schema beside the store (state/turn-record.ts).
export type { TurnRecord } from '../../state/turn-record.js';

export interface CheckBrief {
  name: string;
  passed: boolean;
}

/** Progress events: one JSON object per line with `--json`. */
export type ProgressEvent =
  | { type: 'goal.started'; id: string; condition: string; workspace: string; maxTurns: number }
  | { type: 'precheck.finished'; id: string; checks: CheckBrief[]; achieved: boolean }
  | { type: 'turn.started'; id: string; turn: number; maxTurns: number }
  | {
      type: 'turn.finished';
      id: string;
      turn: number;
      maxTurns: number;
      outcome: TurnOutcome | 'interrupted';
      durationMs: number;
      tokens: number;
      tokensEstimated: boolean;
      filesChanged: number;
      checks: CheckBrief[];
      verdict: { achieved: boolean; reason: string } | null;
      evaluatorError: string | null;
      agentError: string | null;
      /** The tamper guard's findings: always present, [] when the turn was clean (or the guard is off). */
      tamper: TamperFinding[];
      /** What the views show (goald watch, the dashboard); absent in events older than them. */
      view?: TurnViewFacts;
      /** Items the evaluator says remain and tests the checks fail (null: not measured); absent in older events. */
      distance?: { remaining: number | null; failingTests: number | null };
    }
  | { type: 'goal.paused'; id: string; reason: PauseReason }
  | { type: 'goal.resumed'; id: string }
  /** An edit of goal.config.json made while a turn ran (or in a turn's delta): held, not applied. */
  | { type: 'config.held'; id: string; turn: number | null; settings: string[] }
  /** The goal's contract changed: `goald edit`, a held config applied by the owner, or an idle file edit. */
  | { type: 'goal.edited'; id: string; by: GoalEditSource; settings: string[]; resumed: boolean }
  | {
      type: 'goal.finished';
      id: string;
      status: 'achieved' | 'failed';
      reason: FailureReason | null;
      breaker: BreakerName | null;
      turns: number;
      tokens: number;
    };

/** The per-turn facts a view needs beyond the rest of `turn.finished`: cost, the verdict's remaining items, the files, the breakers' counters. */
export interface TurnViewFacts {
  /** USD of the agent's turn, null when unknown. */
  costUsd: number | null;
  /** The evaluator's remaining items (empty without a verdict). */
  remaining: string[];
  /** The paths this turn changed (the first 20). */
  files: string[];
  /** Breaker counters after the turn, by breaker name (`stagnation`: turns in a row without meaningful change...). */
  breakers: Partial<Record<BreakerName, number>>;
}

/** Observers get every event; a throwing observer never disturbs the goal. */
export interface SupervisorObserver {
  onEvent?(event: ProgressEvent): void;
}
