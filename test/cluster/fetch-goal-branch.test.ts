// `goald diff` / `goald apply` of a cluster goal fetch its branch from the cluster's remote. A worker moves
// the branch only after it has committed the turn, so an ended goal's branch may still be on its way: the
// fetch waits for it (real redis-server, real bare remote).

import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { fetchGoalBranch } from '../../src/cluster/fetch-goal-branch.js';
import { goalBranchRef } from '../../src/cluster/goal-branch.js';
import { createClusterGoal, setClusterGoalStatus } from '../../src/cluster/turn-commit.js';
import { runGit } from '../../src/workspace/git.js';
import { makeGoal } from '../helpers/fake-goal-host.js';
import { useRedisFixture } from '../helpers/redis-server.js';

const fixture = useRedisFixture('goald-fetch-branch-');

async function git(args: string[], cwd: string): Promise<string> {
  return (await runGit(args, { cwd })).stdout.trim();
}

describe('fetching a cluster goal branch', () => {
  it("waits for an ended goal's branch to reach its last commit, then names the goal's start commit", async () => {
    const { redis, root } = fixture;
    const workspace = path.join(root, 'workspace');
    const remote = path.join(root, 'remote.git');
    await git(['init', '--quiet', '--bare', remote], root);
    await git(['init', '--quiet', '--initial-branch=main', workspace], root);
    await git(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '--quiet', '--allow-empty', '-m', 'start'], workspace);
    const start = await git(['rev-parse', 'HEAD'], workspace);
    await git(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '--quiet', '--allow-empty', '-m', 'goald: turn 1 · checks pass'], workspace);
    const last = await git(['rev-parse', 'HEAD'], workspace);
    await git(['reset', '--quiet', '--hard', start], workspace);
    // The goal's branch is still at its start; its last turn's commit is on an attempt ref, committed in Redis.
    await git(['push', '--quiet', remote, `${start}:${goalBranchRef('gend')}`, `${last}:refs/goald/gend/t1-w1`], workspace);
    const goal = makeGoal({ id: 'gend', workspace, status: 'achieved', phase: 'achieved' });
    await createClusterGoal(redis, 'gend', JSON.stringify({ goal, lastTurn: null, initialTree: null, remote, base: last, startCommit: start }));
    await setClusterGoalStatus(redis, 'gend', 'achieved');

    // The worker moves the branch a moment later.
    const promoted = new Promise((resolve) => setTimeout(resolve, 600)).then(() => git(['push', '--quiet', remote, `${last}:${goalBranchRef('gend')}`], workspace));
    const branch = await fetchGoalBranch(redis, goal, workspace);
    await promoted;
    expect(branch).toEqual({ repo: workspace, branch: 'goald/gend', base: start });
    expect(await git(['rev-parse', 'refs/heads/goald/gend'], workspace)).toBe(last);
  });
});
