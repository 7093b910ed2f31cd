// What a supervisor records and reports: the turn record (one line of turns.jsonl) and the progress
// events that `--json` prints and the daemon streams.

import type { BreakerName, FailureReason, GoalStatus, PauseReason } from '../../machines/goal.machine.js';
import type { TurnOutcome, Usage } from '../agents/types.js';
import type { BreakerState, Trip } from '../breakers/types.js';
import type { EvaluationResult } from '../evaluator/types.js';
import type { DriftResult } from '../prompt/drift.js';
import type { CheckResult, FileChange } from '../workspace/types.js';

/** The evaluator's result, stored as it came back. */
export type EvaluationRecord = EvaluationResult;

/** One line of goals/<id>/turns.jsonl. Turn 0 is the pre-check (no agent). */
export interface TurnRecord {
  goalId: string;
  turn: number;
  startedAt: string;
  finishedAt: string;
  /** Null for turn 0 (no agent ran). */
  agent: {
    outcome: TurnOutcome | 'interrupted';
    exitCode: number | null;
    signal: string | null;
    durationMs: number;
    usage: Usage;
    /** True when usage.costUsd was priced from goald's table rather than reported by the CLI (Codex). */
    costComputed?: boolean;
    finalMessage: string;
    error: string | null;
  } | null;
  tree: string;
  files: FileChange[];
  patchId: string | null;
  checks: CheckResult[];
  evaluation: EvaluationRecord;
  /** Agent + evaluator tokens of this turn. */
  tokens: number;
  achieved: boolean;
  breakers: BreakerState;
  trip: Trip | null;
  /** Status after the turn. */
  status: GoalStatus;
  /** Relative to the goal's directory. */
  promptFile: string | null;
  transcriptFile: string | null;
  /** Drift measured from the turn's tool calls (structured adapters); null when there were none. */
  drift?: (DriftResult & { consecutiveHigh: number; pause: boolean }) | null;
}

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
    }
  | { type: 'goal.paused'; id: string; reason: PauseReason }
  | { type: 'goal.resumed'; id: string }
  | {
      type: 'goal.finished';
      id: string;
      status: 'achieved' | 'failed';
      reason: FailureReason | null;
      breaker: BreakerName | null;
      turns: number;
      tokens: number;
    };

/** Observers get every event; a throwing observer never disturbs the goal. */
export interface SupervisorObserver {
  onEvent?(event: ProgressEvent): void;
}
