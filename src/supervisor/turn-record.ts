// The one builder of turn records (one line of goals/<id>/turns.jsonl each): evaluated turns, the
// pre-check (turn 0), turns that ended before their verdict, and turns a crash interrupted (recovery).

import type { GoalStatus } from '../../machines/goal.machine.js';
import type { TurnResult } from '../agents/types.js';
import type { Distance } from '../breakers/no-progress.js';
import type { BreakerState, Trip } from '../breakers/types.js';
import type { EvaluationResult } from '../evaluator/types.js';
import type { GuardReport } from '../guard/types.js';
import type { SandboxUse } from '../sandbox/types.js';
import type { CheckResult, FileChange } from '../workspace/types.js';
import type { TurnRecord } from './types.js';

/** The agent part of a turn record. */
export type TurnAgentRecord = NonNullable<TurnRecord['agent']>;

/** Where a turn's files live, relative to the goal's directory. */
export interface TurnFiles {
  promptFile: string;
  transcriptFile: string;
  /** Adapter and hook files of the turn (a directory). */
  stateDir: string;
}

/** The names of turn N's files in the goal's directory. */
export function turnFiles(turn: number): TurnFiles {
  return { promptFile: `turn-${turn}.prompt.txt`, transcriptFile: `turn-${turn}.log`, stateDir: `turn-${turn}.state` };
}

/** The agent part of a turn record from the adapter's result; `override` marks an interrupted turn. */
export function agentRecordOf(result: TurnResult, override: { outcome?: 'interrupted'; error?: string } = {}): TurnAgentRecord {
  return {
    outcome: override.outcome ?? result.outcome,
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs: result.durationMs,
    usage: result.usage,
    ...(result.costComputed === true ? { costComputed: true } : {}),
    ...(result.window === undefined ? {} : { window: result.window }),
    finalMessage: result.finalMessage,
    error: override.error ?? result.error ?? null,
  };
}

/** The agent part of a turn whose result was lost with the process that ran it (a daemon crash). */
export function lostAgentRecord(error: string): TurnAgentRecord {
  return {
    outcome: 'interrupted',
    exitCode: null,
    signal: null,
    durationMs: 0,
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: null, estimated: true },
    finalMessage: '',
    error,
  };
}

/** What every turn record states; the rest defaults to "nothing observed" (see buildTurnRecord). */
export interface TurnRecordFields {
  goalId: string;
  turn: number;
  /** Epoch milliseconds. */
  startedAt: number;
  finishedAt: number;
  /** Null for turn 0 (no agent ran). */
  agent: TurnAgentRecord | null;
  tree: string;
  evaluation: EvaluationResult;
  tokens: number;
  breakers: BreakerState;
  /** The goal's status after the turn. */
  status: GoalStatus;
  files?: FileChange[];
  patchId?: string | null;
  checks?: CheckResult[];
  achieved?: boolean;
  trip?: Trip | null;
  drift?: TurnRecord['drift'];
  /** The tamper guard's report; a turn it did not inspect records none found. */
  guard?: GuardReport;
  /** How the turn's agent and checks ran (src/sandbox/); absent when the runner has no sandbox to tell of. */
  sandbox?: SandboxUse;
  /** The regression guard's view of the turn (src/checkpoints/keep-best.ts); absent when it is off. */
  keepBest?: TurnRecord['keepBest'];
  /** How far the turn left the goal (breakers/no-progress.ts); absent for turns that ended before their verdict. */
  distance?: Distance;
  /** The guidance (`goald say`) the turn's prompt carried. */
  guidance?: string[];
}

/**
 * A turn record. Turn 0 (the pre-check) has no prompt or transcript; a turn that ended before its snapshot
 * changed no files, ran no checks and tripped nothing.
 */
export function buildTurnRecord(fields: TurnRecordFields): TurnRecord {
  const files = fields.turn === 0 ? null : turnFiles(fields.turn);
  return {
    goalId: fields.goalId,
    turn: fields.turn,
    startedAt: new Date(fields.startedAt).toISOString(),
    finishedAt: new Date(fields.finishedAt).toISOString(),
    agent: fields.agent,
    tree: fields.tree,
    files: fields.files ?? [],
    patchId: fields.patchId ?? null,
    checks: fields.checks ?? [],
    evaluation: fields.evaluation,
    tokens: fields.tokens,
    achieved: fields.achieved ?? false,
    breakers: fields.breakers,
    trip: fields.trip ?? null,
    status: fields.status,
    promptFile: files?.promptFile ?? null,
    transcriptFile: files?.transcriptFile ?? null,
    drift: fields.drift ?? null,
    tamper: fields.guard?.tamper ?? [],
    guardNotes: fields.guard?.notes ?? [],
    ...(fields.sandbox === undefined ? {} : { sandbox: fields.sandbox }),
    ...(fields.keepBest === undefined ? {} : { keepBest: fields.keepBest }),
    ...(fields.distance === undefined ? {} : { distance: { remaining: fields.distance.remaining, failingTests: fields.distance.failingTests } }),
    ...(fields.guidance === undefined || fields.guidance.length === 0 ? {} : { guidance: fields.guidance }),
  };
}
