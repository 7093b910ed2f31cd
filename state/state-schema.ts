// The zod schema of state.json: every read is checked against it, and so is every write, so the file on
// disk always has the shape of StateFile. Objects are loose (unknown keys kept) so a newer goald's extra
// fields survive a write by an older one. The schemas only check, never change (no defaults, no transforms):
// a state read back is its file's JSON as it stands, in the file's own key order.

import { z } from '../src/zod-mini.js';
import { FAILURE_REASONS } from '../machines/goal.machine.js';
import { TAMPER_KINDS } from '../src/guard/types.js';
import { jsonSchema } from './json.js';
import type { GoalRecord, GoalSummary, LoopRecord, StateFile } from './types.js';

/** A goal's top-level status (machines/goal.machine.ts GoalStatus). */
export const goalStatusSchema = z.enum(['active', 'paused', 'achieved', 'failed']);
/** A tamper guard finding (src/guard/types.ts TamperFinding). */
export const tamperFindingSchema = z.object({ path: z.string(), kind: z.enum(TAMPER_KINDS), detail: z.string() });
/** Why a goal is paused (machines/goal.machine.ts PauseReason). */
export const pauseReasonSchema = z.enum(['requested', 'blocked', 'usage-limited', 'drift']);

const summarySchema = z.looseObject({
  turns: z.number(),
  tokens: z.number(),
  costUsd: z.number(),
  files: z.array(
    z.looseObject({ path: z.string(), added: z.nullable(z.number()), deleted: z.nullable(z.number()) }),
  ),
  filesOmitted: z.optional(z.number()),
  lastVerdictReason: z.nullable(z.string()),
  remaining: z.array(z.string()),
  checksPassing: z.number(),
  checksFailing: z.number(),
  activeMs: z.number(),
  tamper: z.optional(z.looseObject({ turns: z.number(), last: z.array(tamperFindingSchema) })),
});

const heldConfigSchema = z.looseObject({
  hash: z.nullable(z.string()),
  inForceHash: z.nullable(z.string()),
  since: z.string(),
  turn: z.nullable(z.number()),
  settings: z.array(z.string()),
});

export const goalEditSchema = z.looseObject({
  at: z.string(),
  by: z.enum(['goald edit', 'goald edit --apply-config', 'goal.config.json']),
  changes: z.array(z.looseObject({ setting: z.string(), from: jsonSchema, to: jsonSchema })),
  resumed: z.boolean(),
});

export const goalRollbackSchema = z.looseObject({
  at: z.string(),
  by: z.enum(['goald rollback', 'keep-best']),
  toTurn: z.number(),
  afterTurn: z.number(),
  tree: z.string(),
  written: z.array(z.string()),
  removed: z.array(z.string()),
  writtenCount: z.number(),
  removedCount: z.number(),
  commit: z.optional(z.string()),
  fromCommit: z.optional(z.string()),
});

export const goalRecordSchema = z.looseObject({
  id: z.string(),
  condition: z.string(),
  workspace: z.string(),
  status: goalStatusSchema,
  phase: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: z.nullable(z.string()),
  finishedAt: z.nullable(z.string()),
  reason: z.nullable(z.enum(FAILURE_REASONS)),
  reasonMessage: z.nullable(z.string()),
  pauseReason: z.nullable(pauseReasonSchema),
  loopId: z.nullable(z.string()),
  settings: jsonSchema,
  machine: z.nullable(jsonSchema),
  summary: summarySchema,
  owner: z.nullable(z.looseObject({ kind: z.enum(['daemon', 'foreground']), pid: z.number() })),
  runningAgent: z.nullable(z
    .looseObject({ pid: z.number(), startTime: z.nullable(z.string()), turn: z.number(), token: z.optional(z.string()) })),
  request: z.optional(jsonSchema),
  configError: z.optional(z.nullable(z.string())),
  notRecovered: z.optional(z.string()),
  contract: z.optional(z.looseObject({ configHash: z.nullable(z.string()), loops: jsonSchema, sealedAt: z.string() })),
  heldConfig: z.optional(z.nullable(heldConfigSchema)),
  edits: z.optional(z.array(goalEditSchema)),
  worktree: z.optional(z
    .looseObject({ repo: z.string(), dir: z.string(), branch: z.string(), base: z.string(), author: z.string(), discardOnFail: z.boolean() })),
  rollbacks: z.optional(z.array(goalRollbackSchema)),
}) satisfies z.ZodMiniType<GoalRecord>;

export const loopRecordSchema = z.looseObject({
  id: z.string(),
  workspace: z.string(),
  every: z.string(),
  condition: z.nullable(z.string()),
  options: jsonSchema,
  source: z.enum(['cli', 'config']),
  createdAt: z.string(),
  nextRunAt: z.nullable(z.string()),
  lastRunAt: z.nullable(z.string()),
  lastGoalId: z.nullable(z.string()),
  lastOutcome: z.nullable(goalStatusSchema),
  runs: z.number(),
  skipped: z.number(),
  waiting: z.boolean(),
  catchUp: z.enum(['once', 'skip']),
  stopped: z.boolean(),
  name: z.optional(z.nullable(z.string())),
  configError: z.optional(z.nullable(z.string())),
}) satisfies z.ZodMiniType<LoopRecord>;

export const stateFileSchema = z.looseObject({
  version: z.literal(1),
  goals: z.array(goalRecordSchema),
  loops: z.array(loopRecordSchema),
}) satisfies z.ZodMiniType<StateFile>;

/** The state of a home that has never been written. */
export function createEmptyState(): StateFile {
  return { version: 1, goals: [], loops: [] };
}

/** The summary of a goal that has not run a turn yet. */
export function createEmptySummary(): GoalSummary {
  return {
    turns: 0,
    tokens: 0,
    costUsd: 0,
    files: [],
    lastVerdictReason: null,
    remaining: [],
    checksPassing: 0,
    checksFailing: 0,
    activeMs: 0,
  };
}

/**
 * Describes the first problem of a failed parse in one line: `goals.0.status: Invalid option ...`; `at`:
 * where the parsed value sits in a larger one (its path is put before the issue's).
 */
export function describeSchemaProblem(error: z.core.$ZodError, at: readonly (string | number)[] = []): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'unknown schema error';
  const path = [...at, ...issue.path];
  const where = path.length === 0 ? '(root)' : path.map(String).join('.');
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${where}: ${issue.message}${more}`.replace(/\s+/g, ' ');
}

/** Parses raw state.json text: the state, or a one-line description of what is wrong with it. */
export function parseStateText(text: string): { ok: true; state: StateFile } | { ok: false; problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: `invalid JSON: ${message}`.replace(/\s+/g, ' ') };
  }
  const parsed = stateFileSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problem: describeSchemaProblem(parsed.error) };
  // The JSON as it stands rather than zod's copy (equal, since the schemas only check, but with its keys
  // in the schema's order): the state then prints back as the text it came from (state-text.ts).
  return { ok: true, state: raw as StateFile };
}
