// A rollback of a goal's files to an earlier turn's snapshot (`goald rollback <goal> --to-turn n`): which
// tree turn n left, what the goal left last, the restore itself (restore-tree.ts) and its entry on the
// goal's history (GoalRecord.rollbacks). The supervisor uses the same steps for a paused goal and for the
// regression guard; a finished goal is rolled back here, from its stored records (a worktree goal's branch
// in rollback-worktree.ts).

import { readTurnRecords } from '../../state/index.js';
import type { GoalRecord, GoalRollback, Store } from '../../state/types.js';
import { GoaldError } from '../errors.js';
import type { TurnRecord } from '../supervisor/types.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { createSnapshotter } from '../workspace/snapshot.js';
import type { Snapshotter } from '../workspace/types.js';
import { restoreTree, type TreeSource } from './restore-tree.js';
import { rollbackFinishedWorktreeGoal } from './rollback-worktree.js';

const NAMED_PATHS = 50;

/** The snapshot tree turn `turn` left (its last record: a turn recorded twice keeps the later). */
export function treeOfTurn(goalId: string, records: readonly TurnRecord[], turn: number): string {
  const record = records.findLast((candidate) => candidate.turn === turn && candidate.tree !== '');
  if (record === undefined) {
    const last = records.at(-1)?.turn;
    const range = last === undefined ? 'it has no turns yet' : `its turns are 0 to ${last}`;
    throw new GoaldError('not-found', `goal ${goalId} has no turn ${turn} (${range})`, 'goald show <goal> lists its turns');
  }
  return record.tree;
}

/** The tree the goal left in the work tree: its last rollback's when that came after its last turn. */
function lastTreeOf(goal: Pick<GoalRecord, 'rollbacks'>, records: readonly TurnRecord[]): string | null {
  const lastTurn = records.at(-1);
  const rollback = goal.rollbacks?.at(-1);
  if (rollback !== undefined && (lastTurn === undefined || rollback.afterTurn >= lastTurn.turn)) return rollback.tree;
  return lastTurn?.tree ?? null;
}

/** Every path the goal's turns changed (their deltas), plus `more` (a turn not recorded yet). */
export function goalPathsOf(records: readonly TurnRecord[], more: readonly string[] = []): Set<string> {
  const paths = new Set(more);
  for (const record of records) for (const file of record.files) paths.add(file.path);
  return paths;
}

/** Restores `target` over what the goal left (`expected`), then snapshots the result; the entry for the history. */
export async function rollBackFiles(options: {
  source: TreeSource;
  goalPaths: ReadonlySet<string>;
  snapshotter: Snapshotter;
  expected: string;
  target: string;
  by: GoalRollback['by'];
  toTurn: number;
  afterTurn: number;
  now: Date;
}): Promise<GoalRollback> {
  const current = await options.snapshotter.snapshot();
  const { written, removed } = await restoreTree(options.source, { expected: options.expected, current, target: options.target }, options.goalPaths);
  const tree = written.length + removed.length === 0 ? current : await options.snapshotter.snapshot();
  return {
    at: options.now.toISOString(),
    by: options.by,
    toTurn: options.toTurn,
    afterTurn: options.afterTurn,
    tree,
    written: written.slice(0, NAMED_PATHS),
    removed: removed.slice(0, NAMED_PATHS),
    writtenCount: written.length,
    removedCount: removed.length,
  };
}

/** Appends a rollback to the goal's history in the store. */
export async function recordRollback(store: Store, goalId: string, rollback: GoalRollback): Promise<void> {
  await store.update((state) => {
    const record = state.goals.find((goal) => goal.id === goalId);
    if (record) record.rollbacks = [...(record.rollbacks ?? []), rollback];
  });
}

/**
 * Rolls a finished goal back to turn `turn` from its stored records (an in-place goal's files; a worktree
 * goal's branch, rollback-worktree.ts); refuses a goal still live.
 */
export async function rollbackFinishedGoal(store: Store, goal: GoalRecord, turn: number, now = new Date()): Promise<GoalRollback> {
  if (goal.status !== 'achieved' && goal.status !== 'failed') {
    throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status}`, 'only a paused or finished goal can be rolled back');
  }
  const { worktree } = goal;
  if (worktree !== undefined) return rollbackFinishedWorktreeGoal(store, { ...goal, worktree }, turn, now);
  const goalDir = store.goalDir(goal.id);
  const records = await readTurnRecords(goalDir);
  const target = treeOfTurn(goal.id, records, turn);
  const expected = lastTreeOf(goal, records);
  if (expected === null) throw new GoaldError('not-found', `goal ${goal.id} has no turns yet`, 'goald show <goal> lists its turns');
  const workspace = await resolveWorkspace(goal.workspace);
  const snapshotter = await createSnapshotter({ workspace: workspace.root, gitDir: workspace.gitDir, commonDir: workspace.commonDir, objectsDir: workspace.objectsDir, stateDir: goalDir, goaldHome: store.home });
  const rollback = await rollBackFiles({
    source: { workspace: workspace.root, goalDir, objectsDir: workspace.objectsDir },
    goalPaths: goalPathsOf(records),
    snapshotter,
    expected,
    target,
    by: 'goald rollback',
    toTurn: turn,
    afterTurn: records.at(-1)?.turn ?? 0,
    now,
  });
  await recordRollback(store, goal.id, rollback);
  return rollback;
}
