// Putting a goal on the cluster (the control plane's side of `goald start` with GOALD_REDIS_URL): the
// workspace's HEAD goes to the goal's branch on the shared remote, the goal's record and where its files
// are become its cluster state, and turn 0 (the pre-check) is enqueued. The turns run on the workers from
// the committed HEAD: uncommitted changes in the workspace stay where they are, as for `--worktree` goals.

import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { GoalRecord } from '../../state/types.js';
import { GoaldError } from '../errors.js';
import { runGit } from '../workspace/git.js';
import { requireHeadCommit } from '../worktree/goal-worktree.js';
import type { ClusterGoalState } from './cluster-goal-state.js';
import { hideUrlCredentials } from './cluster-goals.js';
import { goalBranchRef } from './goal-branch.js';
import { createClusterGoal } from './turn-commit.js';
import { enqueueTurn } from './turn-queue.js';

/** Registers `goal` (stored nowhere else yet) on the cluster and enqueues its pre-check; resolves with its base commit. */
export async function submitClusterGoal(options: { redis: Redis; queue: Queue; goal: GoalRecord; remote: string }): Promise<string> {
  const { goal, remote } = options;
  const base = await requireHeadCommit(goal.workspace);
  const pushed = await runGit(['push', '--quiet', remote, `${base}:${goalBranchRef(goal.id)}`], { cwd: goal.workspace, allowFailure: true });
  if (pushed.exitCode !== 0) {
    throw new GoaldError('config', `cannot push goal ${goal.id}'s base to ${hideUrlCredentials(remote)}: ${hideUrlCredentials(pushed.stderr.trim().split('\n').at(-1) ?? 'git push failed')}`, 'check that this machine and every worker may push to the cluster remote');
  }
  const state: ClusterGoalState = { goal, lastTurn: null, initialTree: null, remote, base, startCommit: base };
  await createClusterGoal(options.redis, goal.id, JSON.stringify(state));
  await enqueueTurn(options.queue, { goalId: goal.id, epoch: 1, turn: 0 });
  return base;
}
