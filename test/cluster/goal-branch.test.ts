// A cluster goal's tree through git, with real repositories: a bare remote the "workers" share, each worker
// its own bare mirror and per-turn worktrees. Only the attempt the fence committed moves the branch.

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { attemptRef, checkoutTurn, commitTurnTree, deleteAttemptRefs, fetchTurnBase, goalBranchRef, promoteTurn, pushAttempt, removeTurnCheckout } from '../../src/cluster/goal-branch.js';
import { runGit } from '../../src/workspace/git.js';

let root: string;
let remote: string;
let base: string;

async function git(args: string[], cwd: string): Promise<string> {
  return (await runGit(args, { cwd })).stdout.trim();
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'goald-branch-'));
  remote = path.join(root, 'remote.git');
  await git(['init', '--quiet', '--bare', '--initial-branch=main', remote], root);
  const seed = path.join(root, 'seed');
  await git(['init', '--quiet', '--initial-branch=main', seed], root);
  await writeFile(path.join(seed, 'notes.txt'), 'start\n');
  await git(['add', '-A'], seed);
  await git(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '--quiet', '-m', 'start'], seed);
  base = await git(['rev-parse', 'HEAD'], seed);
  // The goal's branch, made when the goal starts, at the user's commit.
  await git(['push', '--quiet', remote, `${base}:refs/heads/main`, `${base}:${goalBranchRef('g1')}`], seed);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

// A turn's tree as goald's snapshot takes it: its own index and objects (`snapshotDir`), beside the checkout.
async function snapshotTree(dir: string, snapshotDir: string): Promise<string> {
  await mkdir(path.join(snapshotDir, 'objects'), { recursive: true });
  const env = { GIT_INDEX_FILE: path.join(snapshotDir, 'index'), GIT_OBJECT_DIRECTORY: path.join(snapshotDir, 'objects'), GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(dir, '.git', 'objects') };
  await runGit(['add', '-A'], { cwd: dir, env });
  return (await runGit(['write-tree'], { cwd: dir, env })).stdout.trim();
}

// One worker's turn: mirror, checkout at `from`, the turn's edit, goald's snapshot, the commit made in the mirror, attempt ref.
async function attempt(worker: string, from: string, turn: number, edit: string): Promise<{ dir: string; commit: string; mirror: string }> {
  const mirror = path.join(root, worker, 'mirror.git');
  await fetchTurnBase(remote, mirror, 'g1', from);
  const dir = path.join(root, worker, `turn-${turn}`);
  await checkoutTurn(mirror, dir, from);
  await writeFile(path.join(dir, 'notes.txt'), edit);
  const snapshotDir = path.join(root, worker, 'snapshot');
  const commit = await commitTurnTree(mirror, from, await snapshotTree(dir, snapshotDir), `goald: turn ${turn}`, path.join(snapshotDir, 'objects'));
  await pushAttempt(mirror, remote, attemptRef('g1', turn, `${worker}:token:1`), commit);
  return { dir, commit, mirror };
}

describe('a goal branch moved only by the committed attempt', () => {
  it('two workers run the same turn; the one the fence committed moves the branch, the other is refused', async () => {
    const late = await attempt('w1', base, 1, 'from the frozen worker\n');
    const winner = await attempt('w2', base, 1, 'from the worker that took over\n');
    expect(late.commit).not.toBe(winner.commit);
    // w2's turn was committed by the fence: it promotes. w1 wakes and tries anyway, leasing the same base.
    expect(await promoteTurn(winner.mirror, remote, 'g1', winner.commit, base)).toBe('moved');
    expect(await promoteTurn(late.mirror, remote, 'g1', late.commit, base)).toBe('refused');
    expect(await git(['rev-parse', goalBranchRef('g1')], remote)).toBe(winner.commit);
    // The branch's history holds one commit for turn 1, the committed attempt's.
    expect(await git(['log', '--format=%s', goalBranchRef('g1')], remote)).toBe('goald: turn 1\nstart');
    // Both attempts are on the remote, for the record; neither is on another branch.
    expect(await git(['for-each-ref', '--format=%(objectname)', 'refs/goald/g1/'], remote)).toContain(late.commit);
  });

  it('the next turn, on another worker, starts from the promoted commit and leases on it', async () => {
    const first = await attempt('w1', base, 1, 'one\n');
    expect(await promoteTurn(first.mirror, remote, 'g1', first.commit, base)).toBe('moved');
    const second = await attempt('w2', first.commit, 2, 'two\n');
    expect(await readFile(path.join(second.dir, 'notes.txt'), 'utf8')).toBe('two\n');
    expect(await promoteTurn(second.mirror, remote, 'g1', second.commit, first.commit)).toBe('moved');
    expect(await git(['log', '--format=%s', goalBranchRef('g1')], remote)).toBe('goald: turn 2\ngoald: turn 1\nstart');
    // A promotion leasing an old base (a worker that slept through a whole turn) moves nothing back.
    expect(await promoteTurn(first.mirror, remote, 'g1', first.commit, base)).toBe('refused');
    expect(await git(['rev-parse', goalBranchRef('g1')], remote)).toBe(second.commit);
  });

  it("a goal that ended loses its attempt refs, on the remote and in the mirror; its branch and other goals' refs stay", async () => {
    const first = await attempt('w1', base, 1, 'one\n');
    const retried = await attempt('w2', base, 1, 'one again\n');
    expect(await promoteTurn(retried.mirror, remote, 'g1', retried.commit, base)).toBe('moved');
    await runGit(['push', '--quiet', remote, `${base}:refs/goald/g2/t1-w1`], { cwd: first.mirror });
    await runGit(['fetch', '--quiet', remote, '+refs/goald/g1/*:refs/goald/g1/*'], { cwd: first.mirror });
    expect(await deleteAttemptRefs(first.mirror, remote, 'g1')).toBe(2);
    expect(await git(['for-each-ref', '--format=%(refname)', 'refs/goald/'], remote)).toBe('refs/goald/g2/t1-w1');
    expect(await git(['for-each-ref', '--format=%(refname)', 'refs/goald/g1/'], first.mirror)).toBe('');
    expect(await git(['rev-parse', goalBranchRef('g1')], remote)).toBe(retried.commit);
    // Nothing left to delete is no error.
    expect(await deleteAttemptRefs(first.mirror, remote, 'g1')).toBe(0);
  });

  it('a turn that changed nothing commits nothing: its commit is the base, and promoting it keeps the branch', async () => {
    const mirror = path.join(root, 'w1', 'mirror.git');
    await fetchTurnBase(remote, mirror, 'g1', base);
    const dir = path.join(root, 'w1', 'turn-1');
    await checkoutTurn(mirror, dir, base);
    const snapshotDir = path.join(root, 'w1', 'snapshot');
    expect(await commitTurnTree(mirror, base, await snapshotTree(dir, snapshotDir), 'goald: turn 1', path.join(snapshotDir, 'objects'))).toBe(base);
    expect(await promoteTurn(mirror, remote, 'g1', base, base)).toBe('moved');
    expect(await git(['rev-parse', goalBranchRef('g1')], remote)).toBe(base);
    await removeTurnCheckout(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it("a turn's checkout is a repository of its own: git config the agent plants there never reaches the mirror's pushes", async () => {
    const mirror = path.join(root, 'w1', 'mirror.git');
    await fetchTurnBase(remote, mirror, 'g1', base);
    const dir = path.join(root, 'w1', 'turn-1');
    await checkoutTurn(mirror, dir, base);
    expect(await git(['rev-parse', '--git-common-dir'], dir)).toBe('.git');
    // The hostile agent: a push redirected through a command of its own, in the only git config it can write.
    const pwned = path.join(root, 'pwned');
    await git(['config', '--add', 'protocol.ext.allow', 'always'], dir);
    await git(['config', '--add', `url.ext::sh -c touch% ${pwned}.insteadOf`, remote], dir);
    await writeFile(path.join(dir, 'notes.txt'), 'turn 1\n');
    const snapshotDir = path.join(root, 'w1', 'snapshot');
    const commit = await commitTurnTree(mirror, base, await snapshotTree(dir, snapshotDir), 'goald: turn 1', path.join(snapshotDir, 'objects'));
    await pushAttempt(mirror, remote, attemptRef('g1', 1, 'w1'), commit);
    expect(await promoteTurn(mirror, remote, 'g1', commit, base)).toBe('moved');
    expect(existsSync(pwned)).toBe(false);
    expect(await git(['show', `${goalBranchRef('g1')}:notes.txt`], remote)).toBe('turn 1');
    expect(await readFile(path.join(mirror, 'config'), 'utf8')).not.toContain('insteadOf');
  });

  it('names attempt refs git accepts whatever the worker token holds', async () => {
    const ref = attemptRef('g1', 3, 'worker:1/../x y');
    expect(ref).toBe('refs/goald/g1/t3-worker-1----x-y');
    expect((await runGit(['check-ref-format', ref], { cwd: root, allowFailure: true })).exitCode).toBe(0);
  });
});
