// The git side of worktree goals on real repositories: a taken branch name gets a suffix (the existing
// branch is never moved), turn commits land on the goal's branch, rollback's reset to a turn, removal
// only inside GOALD_HOME, and which git paths a sandboxed turn of a worktree goal may write.

import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import {
  closeGoalWorktree,
  commitTurn,
  createGoalWorktree,
  parseAuthor,
  removeGoalWorktree,
  moveGoalBranch,
  reopenGoalWorktree,
  resetGoalWorktree,
  turnCommits,
} from '../../src/worktree/goal-worktree.js';
import { worktreeGoalGitDirs } from '../../src/worktree/sandbox-git-dirs.js';
import { gitdir } from '../helpers/gitdir.js';

async function home(): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-home-')));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('goal worktrees', () => {
  it('a branch name that exists already gets a suffix; the existing branch is not moved', async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    await git.write('b.txt', 'b\n');
    await git.commitAll('second');
    await git.git('branch', 'goald/gfixed000001', 'HEAD~1');
    await git.git('branch', 'goald/gfixed000001-2', 'HEAD~1');
    const before = await git.git('rev-parse', 'goald/gfixed000001');
    const worktree = await createGoalWorktree({ repo: git.dir, home: await home(), goalId: 'gfixed000001' });
    expect(worktree.branch).toBe('goald/gfixed000001-3');
    expect(await git.git('rev-parse', 'goald/gfixed000001')).toBe(before);
    expect(await git.git('rev-parse', worktree.branch)).toBe(await git.git('rev-parse', 'main'));
  });

  it('turn commits land on the goal branch even when the agent switched branches; reset to a turn restores its tree', async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    const goaldHome = await home();
    const worktree = await createGoalWorktree({ repo: git.dir, home: goaldHome, goalId: 'gturns000001', author: 'T <t@example.invalid>' });
    await writeFile(path.join(worktree.dir, 'a.txt'), 'turn 1\n');
    const first = await commitTurn(worktree, 1, 'first\nreason   with  spaces');
    expect(await commitTurn(worktree, 2, 'nothing changed')).toBeNull();
    // A hostile turn: its own branch, then a change.
    await git.git('-C', worktree.dir, 'checkout', '-q', '-b', 'goald/agent');
    await writeFile(path.join(worktree.dir, 'b.txt'), 'turn 3\n');
    await commitTurn(worktree, 3, 'third');
    expect((await turnCommits(worktree)).map((entry) => [entry.turn, entry.subject])).toEqual([
      [1, 'goald: turn 1 · first reason with spaces'],
      [3, 'goald: turn 3 · third'],
    ]);
    expect(await git.git('rev-parse', 'goald/agent')).toBe(first); // the agent's branch got no goald commit
    expect(await git.git('log', '-1', '--format=%an <%ae>', worktree.branch)).toBe('T <t@example.invalid>');

    // A reset to turn 1's commit: the worktree and the goal's branch, nothing else.
    await resetGoalWorktree(worktree, first ?? '');
    expect(existsSync(path.join(worktree.dir, 'b.txt'))).toBe(false);
    expect(await git.git('rev-parse', worktree.branch)).toBe(first);
    await resetGoalWorktree(worktree, worktree.base);
    expect(await git.git('-C', worktree.dir, 'show', 'HEAD:a.txt')).toBe('a');
    expect(await git.git('rev-parse', 'main')).toBe(worktree.base);
  });

  it('a reset is refused, nothing changed, when the worktree holds uncommitted changes or is on another branch', async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    const worktree = await createGoalWorktree({ repo: git.dir, home: await home(), goalId: 'grefuse00001' });
    await writeFile(path.join(worktree.dir, 'a.txt'), 'turn 1\n');
    const first = (await commitTurn(worktree, 1, 'first')) ?? '';
    await writeFile(path.join(worktree.dir, 'new.txt'), 'someone edited the worktree\n');
    await expect(resetGoalWorktree(worktree, worktree.base)).rejects.toThrow("the goal's worktree has changes no turn committed: new.txt");
    expect(await git.git('rev-parse', worktree.branch)).toBe(first);
    await rm(path.join(worktree.dir, 'new.txt'));
    // HEAD on the user's branch: a hard reset there would move main.
    await git.git('-C', worktree.dir, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    await expect(resetGoalWorktree(worktree, worktree.base)).rejects.toThrow(/is on main, not on its branch goald\/grefuse00001/);
    expect(await git.git('rev-parse', 'main')).toBe(worktree.base);
  });

  it("a finished goal's branch moves only from where it is, never while checked out, never outside goald/", async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    const goaldHome = await home();
    const worktree = await createGoalWorktree({ repo: git.dir, home: goaldHome, goalId: 'gmove0000001' });
    await writeFile(path.join(worktree.dir, 'a.txt'), 'turn 1\n');
    const first = (await commitTurn(worktree, 1, 'first')) ?? '';
    // Still checked out in its worktree: refused.
    await expect(moveGoalBranch(worktree, worktree.base, first, 'test')).rejects.toThrow(/goald\/gmove0000001 is checked out in .*gmove0000001/);
    await closeGoalWorktree(worktree, 'failed', goaldHome);
    await expect(moveGoalBranch(worktree, worktree.base, worktree.base, 'test')).rejects.toThrow(/moved while goald rolled it back/);
    await expect(moveGoalBranch({ repo: git.dir, branch: 'main' }, first, worktree.base, 'test')).rejects.toThrow(/not a goald branch/);
    await moveGoalBranch(worktree, worktree.base, first, 'test');
    expect(await git.git('rev-parse', worktree.branch)).toBe(worktree.base);
    expect(await git.git('rev-parse', 'main')).toBe(worktree.base);
    // Reopened (goald edit --resume): the branch checked out again where the worktree was.
    await moveGoalBranch(worktree, first, worktree.base, 'test');
    expect(await reopenGoalWorktree(worktree, 'gmove0000001')).toBe(true);
    expect(await git.git('-C', worktree.dir, 'rev-parse', 'HEAD')).toBe(first);
    expect(await reopenGoalWorktree(worktree, 'gmove0000001')).toBe(false);
    await closeGoalWorktree({ ...worktree, discardOnFail: true }, 'failed', goaldHome);
    await expect(reopenGoalWorktree({ ...worktree, discardOnFail: true }, 'gmove0000001')).rejects.toThrow(
      "goal gmove0000001's branch goald/gmove0000001 no longer exists in " + git.dir + ': it was deleted when the goal failed (--discard-on-fail), so its work cannot be resumed',
    );
  });

  it('worktrees made and removed at once in one repository all succeed (git cannot do that by itself)', async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    const goaldHome = await home();
    const ids = Array.from({ length: 8 }, (_, i) => `gconcurrent${i}`);
    const made = await Promise.all(ids.map((goalId) => createGoalWorktree({ repo: git.dir, home: goaldHome, goalId })));
    expect(made.map((worktree) => worktree.branch)).toEqual(ids.map((id) => `goald/${id}`));
    expect(made.every((worktree) => existsSync(path.join(worktree.dir, 'a.txt')))).toBe(true);
    // Half go while the other half are made again under new ids.
    await Promise.all([
      ...made.slice(0, 4).map((worktree) => removeGoalWorktree(worktree, goaldHome)),
      ...ids.slice(4).map((id) => createGoalWorktree({ repo: git.dir, home: goaldHome, goalId: `${id}b` })),
    ]);
    const listed = (await git.git('worktree', 'list', '--porcelain')).split('\n').filter((line) => line.startsWith('worktree ')).length;
    expect(listed).toBe(1 + 4 + 4);
  });

  it('closing removes the directory; the branch stays unless a failed goal discards it; nothing outside GOALD_HOME is removed', async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    const goaldHome = await home();
    const kept = await createGoalWorktree({ repo: git.dir, home: goaldHome, goalId: 'gkept0000001' });
    const gone = await createGoalWorktree({ repo: git.dir, home: goaldHome, goalId: 'ggone0000001', discardOnFail: true });
    await closeGoalWorktree(kept, 'failed', goaldHome);
    await closeGoalWorktree(gone, 'failed', goaldHome);
    expect([existsSync(kept.dir), existsSync(gone.dir)]).toEqual([false, false]);
    expect(await git.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/')).toBe(['goald/gkept0000001', 'main'].join('\n'));
    await expect(removeGoalWorktree({ repo: git.dir, dir: git.dir }, goaldHome)).rejects.toThrow(/not inside GOALD_HOME/);
    expect(existsSync(git.path('a.txt'))).toBe(true);
  });

  it('a sandboxed turn of a worktree goal may write its own git dir, the objects and goald/* refs, not the rest of the repository', async () => {
    const git = await gitdir({ files: { 'a.txt': 'a\n' }, initialCommit: true });
    const goaldHome = await home();
    const worktree = await createGoalWorktree({ repo: git.dir, home: goaldHome, goalId: 'gsandbox0001' });
    const workspace = await resolveWorkspace(worktree.dir);
    const writable = worktreeGoalGitDirs(workspace, goaldHome);
    expect(writable).toEqual([
      workspace.gitDir,
      path.join(workspace.commonDir, 'objects'),
      path.join(workspace.commonDir, 'refs', 'heads', 'goald'),
      path.join(workspace.commonDir, 'logs', 'refs', 'heads', 'goald'),
    ]);
    expect(writable).not.toContain(workspace.commonDir);
    // The user's own checkout (and any worktree outside GOALD_HOME) keeps the whole git directory.
    expect(worktreeGoalGitDirs(await resolveWorkspace(git.dir), goaldHome)).toBeNull();
  });

  it('an author is "Name <email>"', () => {
    expect(parseAuthor(' Robo  Tester <r@x.invalid> ', 'worktree.author')).toEqual({ name: 'Robo  Tester', email: 'r@x.invalid' });
    expect(() => parseAuthor('robo', '--author')).toThrow(/--author: "robo" is not an author/);
  });
});
