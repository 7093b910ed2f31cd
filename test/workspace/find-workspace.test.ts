import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, onTestFinished, test } from 'vitest';

import { GoaldError } from '../../src/errors.js';
import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import { createSnapshotter } from '../../src/workspace/snapshot.js';
import { gitdir } from '../helpers/gitdir.js';

async function tempDir(prefix: string): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), prefix)));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function refusal(dir: string): Promise<GoaldError> {
  const error: unknown = await resolveWorkspace(dir).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GoaldError);
  return error as GoaldError;
}

describe('resolveWorkspace', () => {
  test('finds the top level from a subdirectory', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'src/deep/file.ts': 'x\n' } });
    const ws = await resolveWorkspace(repo.path('src/deep'));
    expect(ws).toEqual({
      root: repo.dir,
      gitDir: path.join(repo.dir, '.git'),
      commonDir: path.join(repo.dir, '.git'),
      objectsDir: path.join(repo.dir, '.git', 'objects'),
      indexFile: path.join(repo.dir, '.git', 'index'),
    });
  });

  test('a directory outside any repository is refused with a hint to git init', async () => {
    const dir = await tempDir('goald-plain-');
    const error = await refusal(dir);
    expect(error.code).toBe('not-a-git-repo');
    expect(error.message).toBe(`${dir} is not inside a git work tree`);
    expect(error.hint).toBe('run `git init` there first, or pass -C <repo>');
  });

  test('a missing directory is refused the same way', async () => {
    const missing = path.join(await tempDir('goald-plain-'), 'nope');
    const error = await refusal(missing);
    expect(error.code).toBe('not-a-git-repo');
    expect(error.message).toBe(`${missing} is not inside a git work tree`);
  });

  test('a bare repository is refused', async () => {
    const repo = await gitdir();
    const bare = path.join(repo.dir, 'bare.git');
    await repo.git('init', '--quiet', '--bare', bare);
    const error = await refusal(bare);
    expect(error.code).toBe('not-a-git-repo');
    expect(error.message).toContain('bare');
  });

  test('the .git directory itself is not a work tree', async () => {
    const repo = await gitdir();
    expect((await refusal(repo.path('.git'))).code).toBe('not-a-git-repo');
  });

  test('a linked worktree resolves to its own root and git dir, sharing the common objects', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    const parent = await tempDir('goald-wt-');
    const wt = path.join(parent, 'wt');
    await repo.git('worktree', 'add', '--quiet', '-b', 'feature', wt);
    await mkdir(path.join(wt, 'sub'));

    const ws = await resolveWorkspace(path.join(wt, 'sub'));
    expect(ws.root).toBe(wt);
    expect(ws.gitDir).toBe(path.join(repo.dir, '.git', 'worktrees', 'wt'));
    expect(ws.commonDir).toBe(path.join(repo.dir, '.git'));
    expect(ws.objectsDir).toBe(path.join(repo.dir, '.git', 'objects'));
    expect(ws.indexFile).toBe(path.join(repo.dir, '.git', 'worktrees', 'wt', 'index'));

    // Snapshots work there too and leave both indexes alone.
    const mainIndex = await readFile(path.join(repo.dir, '.git', 'index'));
    const wtIndex = await readFile(ws.indexFile);
    const snap = await createSnapshotter({ ...ws, workspace: ws.root, stateDir: await tempDir('goald-state-') });
    const before = await snap.snapshot();
    expect(before).toBe(await repo.git('rev-parse', 'feature^{tree}'));
    await writeFile(path.join(wt, 'sub', 'new.txt'), 'in the worktree\n');
    const delta = await snap.diff(before, await snap.snapshot());
    expect(delta.files).toEqual([{ path: 'sub/new.txt', status: 'A', added: 1, deleted: 0 }]);
    expect(await readFile(path.join(repo.dir, '.git', 'index'))).toEqual(mainIndex);
    expect(await readFile(ws.indexFile)).toEqual(wtIndex);
  });
});
