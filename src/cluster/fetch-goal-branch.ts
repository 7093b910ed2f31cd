// `goald diff` and `goald apply` of a cluster goal: its branch `goald/<id>` lives on the cluster's remote,
// so the control plane (which holds the remote's address, credentials included) fetches it into the
// user's repository first, as the same branch name a worktree goal has there. The remote is the truth for
// a cluster goal's branch (a rollback may have moved it back), so the local branch follows it.
//
// A worker moves the branch right after it commits a turn, so a goal that has just ended may not be there
// yet (`goald race` compares its members the moment they end): for an ended goal, the fetch waits (up to
// 10 s) until the remote's branch is at the goal's last commit, or where a later rollback moved it.

import { setTimeout as sleep } from 'node:timers/promises';

import type { Redis } from 'ioredis';

import type { GoalRecord } from '../../state/types.js';
import type { GoalBranch } from '../daemon/types.js';
import { GoaldError } from '../errors.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { runGit } from '../workspace/git.js';
import { clusterGoalStateOf, type ClusterGoalState } from './cluster-goal-state.js';
import { hideUrlCredentials } from './cluster-goals.js';
import { goalBranchRef, WORKER_EMAIL } from './goal-branch.js';
import { readClusterGoal } from './turn-commit.js';

// How long a fetch of an ended goal's branch waits for the worker to move it there, and how often it looks.
const PROMOTION_WAIT_MS = 10_000;
const PROMOTION_POLL_MS = 100;

/** Fetches `goal`'s branch from its remote into the repository at `dir`; says where it now is. */
export async function fetchGoalBranch(redis: Redis, goal: GoalRecord, dir: string): Promise<GoalBranch> {
  const stored = await readClusterGoal(redis, goal.id);
  if (stored === null) throw new GoaldError('not-found', `goal ${goal.id} is no longer on the cluster`, 'list goals with: goald status');
  const state = clusterGoalStateOf(goal.id, stored);
  const { remote, startCommit } = state;
  const { root } = await resolveWorkspace(dir);
  const ref = goalBranchRef(goal.id);
  if (stored.status !== 'active' && stored.status !== 'paused') await waitForPromotion(root, remote, ref, endTip(state));
  const fetched = await runGit(['fetch', '--quiet', '--no-tags', remote, `+${ref}:${ref}`], { cwd: root, allowFailure: true });
  if (fetched.exitCode !== 0) {
    const why = hideUrlCredentials(fetched.stderr.trim().split('\n').at(-1) ?? 'git fetch failed');
    throw new GoaldError('usage', `cannot fetch goal ${goal.id}'s branch goald/${goal.id} from ${hideUrlCredentials(remote)} into ${root}: ${why}`, 'run it in a checkout of the goal\'s repository that is not on that branch, on a machine that reaches the cluster remote');
  }
  return { repo: root, branch: `goald/${goal.id}`, base: startCommit ?? (await commitBeforeTurns(root, ref)) };
}

// Where an ended goal's branch belongs: its last committed turn's commit, or where a rollback after that moved it.
function endTip(state: ClusterGoalState): string {
  const rollback = state.goal.rollbacks?.at(-1);
  return rollback?.commit !== undefined && rollback.afterTurn >= (state.lastTurn?.turn ?? 0) ? rollback.commit : state.base;
}

async function waitForPromotion(root: string, remote: string, ref: string, tip: string): Promise<void> {
  for (let waited = 0; waited < PROMOTION_WAIT_MS; waited += PROMOTION_POLL_MS) {
    const listed = await runGit(['ls-remote', remote, ref], { cwd: root, allowFailure: true });
    if (listed.exitCode !== 0 || listed.stdout.split('\t')[0] === tip) return;
    await sleep(PROMOTION_POLL_MS);
  }
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
