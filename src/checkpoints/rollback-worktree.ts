// Rollback of a worktree goal (issue 12): its branch `goald/<id>` is its history, one commit per turn that
// changed the tree, so turn n's state is a commit. A paused goal's worktree is reset to it (the branch moves
// with it); a finished goal, whose worktree is gone, has its branch moved back. Nothing else is touched: not
// the user's checkout, index, stash or branches, nothing outside GOALD_HOME. The commits a rollback moved
// away from stay named on the goal's history (`fromCommit`), so a later rollback can go forward again.

import { readTurnRecords } from '../../state/index.js';
import type { GoalRecord, GoalRollback, GoalWorktree, Store } from '../../state/types.js';
import { GoaldError } from '../errors.js';
import type { TurnRecord } from '../supervisor/types.js';
import type { Snapshotter } from '../workspace/types.js';
import {
  branchExists,
  changedPaths,
  moveGoalBranch,
  resetGoalWorktree,
  resolveCommit,
  treeOfCommit,
  turnCommitsUpTo,
} from '../worktree/goal-worktree.js';
import { recordRollback, treeOfTurn } from './rollback-goal.js';

const NAMED_PATHS = 50;

type RollbackGoal = Pick<GoalRecord, 'id' | 'rollbacks'> & { worktree: GoalWorktree };

/**
 * The commit that holds the files turn `turn` left: a turn commit (on the branch, or on a tip an earlier
 * rollback moved away from) whose tree is that turn's snapshot tree, so a commit an agent made up with a
 * turn's subject is never taken for it. Turn 0 is the base. Exit 2 for a turn the goal never had.
 */
async function commitOfTurn(goal: RollbackGoal, records: readonly TurnRecord[], turn: number): Promise<string> {
  const tree = treeOfTurn(goal.id, records, turn);
  const { worktree } = goal;
  if (turn === 0) return worktree.base;
  const tips = [`refs/heads/${worktree.branch}`, ...(goal.rollbacks ?? []).flatMap((rollback) => (rollback.fromCommit ? [rollback.fromCommit] : [])).reverse()];
  for (const tip of tips) {
    const match = (await turnCommitsUpTo(worktree, tip)).filter((entry) => entry.turn <= turn && entry.tree === tree).at(-1);
    if (match) return match.commit;
  }
  // Turns that changed nothing up to here made no commit: the base holds their files.
  if ((await treeOfCommit(worktree.repo, worktree.base)) === tree) return worktree.base;
  throw new GoaldError(
    'conflict',
    `no commit of ${worktree.branch} holds the files turn ${turn} of goal ${goal.id} left (the branch was rewritten since); nothing was changed`,
    `git log ${worktree.branch} shows what the branch holds now; goald diff ${goal.id} its changes`,
  );
}

function entry(how: { toTurn: number; afterTurn: number; now: Date; tree: string; commit: string; fromCommit: string }, paths: { written: string[]; removed: string[] }): GoalRollback {
  return {
    at: how.now.toISOString(),
    by: 'goald rollback',
    toTurn: how.toTurn,
    afterTurn: how.afterTurn,
    tree: how.tree,
    written: paths.written.slice(0, NAMED_PATHS),
    removed: paths.removed.slice(0, NAMED_PATHS),
    writtenCount: paths.written.length,
    removedCount: paths.removed.length,
    commit: how.commit,
    fromCommit: how.fromCommit,
  };
}

/**
 * A paused worktree goal (its supervisor calls this between turns): the worktree and branch reset to turn
 * `toTurn`'s commit; the entry's tree is the worktree's snapshot afterwards, where the next turn starts.
 */
export async function rollBackPausedWorktree(options: {
  goal: RollbackGoal;
  records: readonly TurnRecord[];
  toTurn: number;
  afterTurn: number;
  snapshotter: Snapshotter;
  now: Date;
}): Promise<GoalRollback> {
  const { worktree } = options.goal;
  const commit = await commitOfTurn(options.goal, options.records, options.toTurn);
  const from = await resolveCommit(worktree.repo, `refs/heads/${worktree.branch}`);
  if (from === null) throw missingBranch(options.goal);
  const paths = await changedPaths(worktree.repo, from, commit);
  await resetGoalWorktree(worktree, commit);
  const tree = await options.snapshotter.snapshot();
  return entry({ ...options, tree, commit, fromCommit: from }, paths);
}

/** A finished worktree goal: its branch moved back to turn `toTurn`'s commit; recorded on its history. */
export async function rollbackFinishedWorktreeGoal(store: Store, goal: RollbackGoal, toTurn: number, now: Date): Promise<GoalRollback> {
  const { worktree } = goal;
  if (!(await branchExists(worktree.repo, worktree.branch))) throw missingBranch(goal);
  const records = await readTurnRecords(store.goalDir(goal.id));
  const commit = await commitOfTurn(goal, records, toTurn);
  const from = await resolveCommit(worktree.repo, `refs/heads/${worktree.branch}`);
  if (from === null) throw missingBranch(goal);
  const paths = await changedPaths(worktree.repo, from, commit);
  await moveGoalBranch(worktree, commit, from, `goald rollback ${goal.id} --to-turn ${toTurn}`);
  const rollback = entry({ toTurn, afterTurn: records.at(-1)?.turn ?? 0, now, tree: await treeOfCommit(worktree.repo, commit), commit, fromCommit: from }, paths);
  await recordRollback(store, goal.id, rollback);
  return rollback;
}

function missingBranch(goal: RollbackGoal): GoaldError {
  return new GoaldError(
    'usage',
    `goal ${goal.id}'s branch ${goal.worktree.branch} no longer exists in ${goal.worktree.repo}: there is nothing to roll back`,
    'it was deleted (--discard-on-fail, goald prune, or by hand)',
  );
}
