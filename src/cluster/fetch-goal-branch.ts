// `goald diff` and `goald apply` of a cluster goal: its branch `goald/<id>` lives on the cluster's remote,
// so the control plane (which holds the remote's address, credentials included) fetches it into the
// user's repository first, as the same branch name a worktree goal has there. The remote is the truth for
// a cluster goal's branch (a rollback may have moved it back), so the local branch follows it.

import type { Redis } from 'ioredis';

import type { GoalRecord } from '../../state/types.js';
import type { GoalBranch } from '../daemon/types.js';
import { GoaldError } from '../errors.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { runGit } from '../workspace/git.js';
import { clusterGoalStateOf } from './cluster-goal-state.js';
import { hideUrlCredentials } from './cluster-goals.js';
import { goalBranchRef, WORKER_EMAIL } from './goal-branch.js';
import { readClusterGoal } from './turn-commit.js';

/** Fetches `goal`'s branch from its remote into the repository at `dir`; says where it now is. */
export async function fetchGoalBranch(redis: Redis, goal: GoalRecord, dir: string): Promise<GoalBranch> {
  const stored = await readClusterGoal(redis, goal.id);
  if (stored === null) throw new GoaldError('not-found', `goal ${goal.id} is no longer on the cluster`, 'list goals with: goald status');
  const { remote, startCommit } = clusterGoalStateOf(goal.id, stored);
  const { root } = await resolveWorkspace(dir);
  const ref = goalBranchRef(goal.id);
  const fetched = await runGit(['fetch', '--quiet', '--no-tags', remote, `+${ref}:${ref}`], { cwd: root, allowFailure: true });
  if (fetched.exitCode !== 0) {
    const why = hideUrlCredentials(fetched.stderr.trim().split('\n').at(-1) ?? 'git fetch failed');
    throw new GoaldError('usage', `cannot fetch goal ${goal.id}'s branch goald/${goal.id} from ${hideUrlCredentials(remote)} into ${root}: ${why}`, 'run it in a checkout of the goal\'s repository that is not on that branch, on a machine that reaches the cluster remote');
  }
  return { repo: root, branch: `goald/${goal.id}`, base: startCommit ?? (await commitBeforeTurns(root, ref)) };
}

/** A cluster goal's changes since its start (`goald race --pick best` compares its members' by them). */
export async function goalBranchPatch(redis: Redis, goal: GoalRecord): Promise<string> {
  const { repo, branch, base } = await fetchGoalBranch(redis, goal, goal.workspace);
  return (await runGit(['diff', '--no-color', '--no-ext-diff', base, `refs/heads/${branch}`], { cwd: repo, allowFailure: true })).stdout;
}

// A goal registered before its start commit was kept: the branch's first commit back that no worker made.
async function commitBeforeTurns(root: string, ref: string): Promise<string> {
  const log = await runGit(['log', '--first-parent', '--format=%H %ae', ref], { cwd: root });
  const line = log.stdout.split('\n').find((entry) => !entry.endsWith(` ${WORKER_EMAIL}`));
  return line?.split(' ')[0] ?? '';
}
