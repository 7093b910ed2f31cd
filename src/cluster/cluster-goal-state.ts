// What a cluster goal carries from turn to turn, in the `state` field of its hash (turn-commit.ts): the
// goal's record as the control plane registered it and as each committed turn left it (settings, machine
// snapshot, summary), its last turn record, the tree it started from, and where its files are: the shared
// remote and the commit the next turn starts at. Whatever reads it parses it here first; a worker never
// takes settings from anywhere else (not from the turn's worktree, which the agent writes).

import { z } from '../zod.js';

import { jsonSchema } from '../../state/json.js';
import { goalEditSchema, goalRecordSchema, goalRollbackSchema } from '../../state/state-schema.js';
import { turnRecordSchema } from '../../state/turn-record.js';
import type { GoalEdit, GoalRecord, GoalRollback, Json } from '../../state/types.js';
import type { TurnRecord } from '../supervisor/types.js';

const commitSchema = z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id');

const clusterGoalStateSchema = z.object({
  goal: goalRecordSchema,
  lastTurn: z.nullable(turnRecordSchema),
  /** The tree of the goal's pre-check (turn 0); null before it. */
  initialTree: z.string().nullable(),
  /** The git remote every worker fetches the goal's commits from and pushes them to. */
  remote: z.string().min(1),
  /** The commit the next turn starts at: the goal's base, then the last committed turn's commit. */
  base: commitSchema,
  /** The commit the goal started from (the workspace's HEAD at start); absent in states from before it was kept. */
  startCommit: commitSchema.optional(),
  /** Set by `goald edit --resume` on a goal that failed on a budget: the turns it had run (a fresh machine goes on after them). */
  reopenedAfterTurn: z.number().int().nonnegative().optional(),
});

/** A cluster goal's state between turns. */
export interface ClusterGoalState {
  goal: GoalRecord;
  lastTurn: TurnRecord | null;
  initialTree: string | null;
  remote: string;
  base: string;
  startCommit?: string;
  reopenedAfterTurn?: number;
}

/** Parses a goal hash's `state`; throws naming the goal and the first problem when it is not one. */
function parseClusterGoalState(goalId: string, text: string): ClusterGoalState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`the cluster state of goal ${goalId} is not JSON`);
  }
  const parsed = clusterGoalStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`the cluster state of goal ${goalId} is invalid at ${issue?.path.join('.') || '(top)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** The owner's edit of a cluster goal (`goald edit`), kept beside its state: the settings and history. */
export interface ClusterGoalEdit {
  settings: Json;
  edits: GoalEdit[];
}

const clusterGoalEditSchema = z.object({ settings: jsonSchema, edits: z.array(goalEditSchema) }) satisfies z.ZodType<ClusterGoalEdit>;

/**
 * A goal hash's state with the owner's edit (its `edit` field) in force: every reader, the worker that runs
 * the next turn as well as `status`, sees the settings the owner gave last.
 */
export function clusterGoalStateOf(goalId: string, stored: { state: string; edit?: string | undefined; rollbacks?: string | undefined }): ClusterGoalState {
  const state = parseClusterGoalState(goalId, stored.state);
  const edit = stored.edit === undefined ? null : parseField(goalId, 'edit', stored.edit, clusterGoalEditSchema);
  const rollbacks = stored.rollbacks === undefined ? null : parseField(goalId, 'rollbacks', stored.rollbacks, rollbacksSchema);
  return {
    ...state,
    goal: { ...state.goal, ...(edit === null ? {} : { settings: edit.settings, edits: edit.edits }), ...(rollbacks === null ? {} : { rollbacks }) },
  };
}

const rollbacksSchema = z.array(goalRollbackSchema) satisfies z.ZodType<GoalRollback[]>;

// One JSON field of a goal's hash beside its state, checked; throws naming the goal and the field.
function parseField<T>(goalId: string, field: string, text: string, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`the ${field} of cluster goal ${goalId} is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new Error(`the ${field} of cluster goal ${goalId} is invalid: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}
