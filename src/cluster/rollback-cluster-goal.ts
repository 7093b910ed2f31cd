// `goald rollback` of a cluster goal: turn n's files are a commit of its branch `goald/<id>` (the commit
// whose tree is turn n's snapshot), as for a worktree goal on one machine (checkpoints/rollback-worktree.ts).
// The control plane finds it in a bare mirror of its own (GOALD_HOME/cluster-mirrors).
// - A finished goal: its branch moves back to that commit (a push leased on the branch's tip).
// - A paused goal, between turns: that commit becomes its next turn's base in Redis (a script checks that
//   it is still paused after the same turn), then the branch moves. The worker that runs the next turn
//   checks it out, and the restored supervisor sees the rollback: the next prompt says so.
// The rollback is recorded on the goal in Redis (`rollbacks`).


import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import { turnRecordSchema, type TurnRecord } from '../../state/turn-record.js';
import type { GoalRecord, GoalRollback } from '../../state/types.js';
import { treeOfTurn } from '../checkpoints/rollback-goal.js';
import { GoaldError } from '../errors.js';
import { runGit } from '../workspace/git.js';
import { changedPaths, resolveCommit } from '../worktree/goal-worktree.js';
import { clusterGoalStateOf, type ClusterGoalState } from './cluster-goal-state.js';
import { hideUrlCredentials } from './cluster-goals.js';
import { controlPlaneMirror, goalBranchRef, promoteTurn } from './goal-branch.js';
import { readClusterGoal, readCommittedTurns, rollBackPausedClusterGoal, setClusterGoalRollbacks } from './turn-commit.js';
import { turnJobId, type TurnJob } from './turn-queue.js';

// As on one machine: the paths a rollback names (the counts are whole).
const NAMED_PATHS = 50;

/** Moves a finished cluster goal's branch back to turn `toTurn`'s commit and records it; the rollback. */
export async function rollbackClusterGoal(options: { redis: Redis; queue: Queue; goal: GoalRecord; toTurn: number; mirrorsDir: string; now: Date }): Promise<GoalRollback> {
  const { redis, goal, toTurn } = options;
  const stored = await readClusterGoal(redis, goal.id);
  if (stored === null) throw new GoaldError('not-found', `goal ${goal.id} is no longer on the cluster`, 'goald history lists the goals it holds');
  const state = clusterGoalStateOf(goal.id, stored);
  const { remote } = state;
  const paused = stored.status === 'paused';
  // The turn in flight, and the one just committed: its job stays active while it moves the branch, and a
  // rollback read before that move would be overtaken by it (the branch left at the old turn for good).
  const turnJobs = [stored.committedTurn + 1, stored.committedTurn].map((turn) => ({ goalId: goal.id, epoch: stored.epoch, turn }));
  if (paused && (await Promise.all(turnJobs.map((job) => isTurnRunning(options.queue, job)))).some(Boolean)) {
    throw new GoaldError('conflict', `goal ${goal.id} is pausing: its turn is still running`, `wait for the turn to end (goald status ${goal.id}), then roll back`);
  }
  const records: TurnRecord[] = (await readCommittedTurns(redis, goal.id)).flatMap((record) => {
    const parsed = turnRecordSchema.safeParse(record);
    return parsed.success ? [parsed.data] : [];
  });
  const tree = treeOfTurn(goal.id, records, toTurn);
  const mirror = await controlPlaneMirror(options.mirrorsDir, remote);
  const branch = goalBranchRef(goal.id);
  const fetched = await runGit(['fetch', '--quiet', '--no-tags', remote, `+${branch}:${branch}`], { cwd: mirror, allowFailure: true });
  const from = fetched.exitCode === 0 ? await resolveCommit(mirror, branch) : null;
  if (from === null) {
    throw new GoaldError('usage', `goal ${goal.id}'s branch goald/${goal.id} cannot be read from ${hideUrlCredentials(remote)}: there is nothing to roll back`, 'check that this machine reaches the cluster remote, and that the branch was not deleted');
  }
  // The branch, then the tips earlier rollbacks moved away from (still in this mirror), newest first.
  const tips = [from, ...(goal.rollbacks ?? []).flatMap((rollback) => (rollback.fromCommit ? [rollback.fromCommit] : [])).reverse()];
  const commit = await commitWithTree(mirror, tips, tree);
  if (commit === null) {
    throw new GoaldError('conflict', `no commit of goald/${goal.id} holds the files turn ${toTurn} left (the branch was rewritten since); nothing was changed`, `git log goald/${goal.id} shows what the branch holds now`);
  }
  const paths = await changedPaths(mirror, from, commit);
  const rollback: GoalRollback = {
    at: options.now.toISOString(),
    by: 'goald rollback',
    toTurn,
    afterTurn: records.at(-1)?.turn ?? 0,
    tree,
    written: paths.written.slice(0, NAMED_PATHS),
    removed: paths.removed.slice(0, NAMED_PATHS),
    writtenCount: paths.written.length,
    removedCount: paths.removed.length,
    commit,
    fromCommit: from,
  };
  const rollbacks = JSON.stringify([...(goal.rollbacks ?? []), rollback]);
  if (paused) {
    // Redis says where the next turn starts; the branch follows, as after a turn.
    // (The owner's edit and rollbacks, put over the state as read, stay the same in their own fields.)
    const next: ClusterGoalState = { ...state, base: commit };
    if (!(await rollBackPausedClusterGoal(redis, goal.id, stored.committedTurn, JSON.stringify(next), rollbacks))) {
      throw new GoaldError('conflict', `goal ${goal.id} changed while it was being rolled back; nothing was changed`, `look at it with goald status ${goal.id}, then try again`);
    }
    await promoteTurn(mirror, remote, goal.id, commit, from);
    return rollback;
  }
  if ((await promoteTurn(mirror, remote, goal.id, commit, from)) === 'refused') {
    throw new GoaldError('conflict', `goald/${goal.id} moved on ${hideUrlCredentials(remote)} while it was being rolled back; nothing was changed`, 'try again');
  }
  await setClusterGoalRollbacks(redis, goal.id, rollbacks);
  return rollback;
}

// Whether a goal's turn job is being run (a plain pause lets it finish and commit).
async function isTurnRunning(queue: Queue, turn: TurnJob): Promise<boolean> {
  const job = await queue.getJob(turnJobId(turn));
  return job !== undefined && (await job.getState()) === 'active';
}

// The newest commit reachable from one of `tips` (tried in order) whose tree is `tree`; null when none is.
async function commitWithTree(mirror: string, tips: readonly string[], tree: string): Promise<string | null> {
  for (const tip of tips) {
    const walked = await runGit(['log', '--format=%H %T', tip, '--'], { cwd: mirror, allowFailure: true });
    if (walked.exitCode !== 0) continue; // an old tip this mirror never held
    for (const line of walked.stdout.split('\n')) {
      const [commit, commitTree] = line.split(' ');
      if (commit !== undefined && commitTree === tree) return commit;
    }
  }
  return null;
}
