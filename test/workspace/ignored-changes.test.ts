import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, onTestFinished, test } from 'vitest';

import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import { findIgnoredChanges } from '../../src/workspace/ignored-changes.js';
import type { TimeWindow } from '../../src/workspace/time-window.js';
import { createSnapshotter } from '../../src/workspace/snapshot.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';

// A window opened and closed as the supervisor does: from a ctime the kernel stamped (a marker file's,
// as the prompt's), to the wall clock once the "agent" is done.
async function duringWindow(repo: Gitdir, act: () => Promise<void>): Promise<TimeWindow> {
  const marker = repo.path('.git/marker');
  await writeFile(marker, 'x');
  const from = Math.min(Date.now(), statSync(marker).ctimeMs);
  await act();
  return { from, to: Date.now() };
}

async function project(): Promise<Gitdir> {
  return gitdir({
    initialCommit: true,
    files: {
      '.gitignore': 'node_modules/\n*.log\nbuild/\n',
      'README.md': 'hello\n',
      'node_modules/runner/index.js': 'exit 1\n',
      'node_modules/runner/untouched.js': 'same\n',
      'node_modules/-rf': 'a name that looks like an option\n',
      'old.log': 'log\n',
    },
  });
}

// lib/ made a repository of its own with one commit (of `files`), staged and committed in `repo` as a
// gitlink; returns a git runner inside it.
async function nestedRepo(repo: Gitdir, files: Record<string, string> = {}): Promise<(...args: string[]) => void> {
  const lib = repo.path('lib');
  await mkdir(lib);
  const inLib = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: lib, stdio: 'ignore' });
  };
  inLib('init', '-q');
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(lib, name), content);
  inLib('add', '-A');
  inLib('commit', '-q', '--allow-empty', '-m', 'lib');
  await repo.git('add', 'lib');
  await repo.commitAll('the nested repository, as a gitlink');
  return inLib;
}

describe('findIgnoredChanges', () => {
  test('lists the ignored files changed within the windows: edited in place, made, oddly named; not tracked files, not directories, not later writes', async () => {
    const repo = await project();
    const window = await duringWindow(repo, async () => {
      await writeFile(repo.path('node_modules/runner/index.js'), 'exit 0\n'); // edited in place
      await mkdir(repo.path('node_modules/helper'), { recursive: true });
      await writeFile(repo.path('node_modules/helper/new.js'), 'new\n'); // made during the turn
      await writeFile(repo.path('node_modules/-rf'), 'changed\n');
      await writeFile(repo.path('README.md'), 'tracked: the snapshot shows this one\n');
      await mkdir(repo.path('build/empty'), { recursive: true }); // a directory only
    });
    // After the window: what a check writes, past any tick of the kernel's coarse clock (≤ 10 ms) that
    // could stamp it at or before the window's end.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writeFile(repo.path('old.log'), 'the check wrote this\n');

    const found = await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [window] });
    expect(found).toEqual({
      files: [
        { path: 'node_modules/-rf', predates: true },
        { path: 'node_modules/helper/new.js', predates: false },
        { path: 'node_modules/runner/index.js', predates: true },
      ],
      more: 0,
    });
    expect(await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [] })).toEqual({ files: [], more: 0 });
  });

  test('counts what is over the cap instead of looking at it, but always looks at what mustLook names', async () => {
    const repo = await project();
    const window = await duringWindow(repo, async () => {
      for (const name of ['a', 'b', 'c']) await writeFile(repo.path(`node_modules/${name}.js`), name);
    });
    const found = await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [window], maxFiles: 2 });
    expect(found).toEqual({ files: [{ path: 'node_modules/a.js', predates: false }, { path: 'node_modules/b.js', predates: false }], more: 1 });
    // A protected file is looked at whatever the flood before it.
    const protectedToo = await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [window], maxFiles: 1, mustLook: (file) => file.endsWith('c.js') });
    expect(protectedToo).toEqual({ files: [{ path: 'node_modules/a.js', predates: false }, { path: 'node_modules/c.js', predates: false }], more: 1 });
  });

  test("through a goal's snapshotter: the goal's own ignore rules, and goald's state directory left out", async () => {
    const repo = await project();
    await writeFile(repo.path('.git/info/exclude'), 'secret.txt\n');
    const ws = await resolveWorkspace(repo.dir);
    const stateDir = repo.path('goald-state'); // goald's files inside the work tree (GOALD_HOME there)
    await writeFile(repo.path('.gitignore'), 'node_modules/\n*.log\nbuild/\ngoald-state/\n');
    await repo.commitAll('ignore the state');
    const snap = await createSnapshotter({ workspace: ws.root, gitDir: ws.gitDir, objectsDir: ws.objectsDir, indexFile: ws.indexFile, stateDir });
    // The agent's edit of .git/info/exclude after the start does not change what the goal ignores.
    const window = await duringWindow(repo, async () => {
      await writeFile(repo.path('.git/info/exclude'), 'secret.txt\nplain.txt\n');
      await writeFile(repo.path('secret.txt'), 'ignored since the start\n');
      await writeFile(repo.path('plain.txt'), 'not ignored by the goal: in the snapshot\n');
      await writeFile(path.join(stateDir, 'x.log'), "goald's own\n");
    });
    const found = await snap.ignoredChanges?.([window]);
    expect(found?.files.map((file) => file.path)).toEqual(['secret.txt']);
  });

  test("looks into nested repositories too (a gitlink's work tree, one left out without a commit), never into a .git", async () => {
    const repo = await project();
    const lib = repo.path('lib');
    await nestedRepo(repo, { 'run.sh': 'exit 1\n' });
    const ws = await resolveWorkspace(repo.dir);
    const stateDir = await mkdtemp(path.join(tmpdir(), 'goald-state-'));
    onTestFinished(() => rm(stateDir, { recursive: true, force: true }));
    const snap = await createSnapshotter({ workspace: ws.root, gitDir: ws.gitDir, objectsDir: ws.objectsDir, indexFile: ws.indexFile, stateDir });
    await mkdir(repo.path('crate/.git'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: repo.path('crate') });
    await snap.snapshot(); // finds crate/ without a commit and leaves it out from now on
    expect(snap.leftOut?.()).toEqual(['crate']);
    const window = await duringWindow(repo, async () => {
      await writeFile(path.join(lib, 'run.sh'), 'exit 0\n');
      await writeFile(path.join(lib, '.git', 'description'), 'inside .git: not the checks\' files\n');
      await mkdir(repo.path('crate/src'));
      await writeFile(repo.path('crate/src/main.rs'), 'fn main() {}\n');
    });
    const found = await snap.ignoredChanges?.([window]);
    expect(found?.files).toEqual([
      { path: 'crate/src/main.rs', predates: false, repo: 'crate' },
      { path: 'lib/run.sh', predates: true, repo: 'lib' },
    ]);
    // The left-out repository replaced by a symlink to elsewhere: the link is looked at, not what it points to.
    const elsewhere = await mkdtemp(path.join(tmpdir(), 'goald-elsewhere-'));
    onTestFinished(() => rm(elsewhere, { recursive: true, force: true }));
    const swapped = await duringWindow(repo, async () => {
      await rm(repo.path('crate'), { recursive: true });
      await writeFile(path.join(elsewhere, 'far.js'), 'not in the work tree\n');
      await symlink(elsewhere, repo.path('crate'));
    });
    expect((await snap.ignoredChanges?.([swapped]))?.files.map((file) => file.path)).toEqual(['crate']);
  });

  test("names a nested repository's config and hooks changed during the turns when they name a program, not a remote added", async () => {
    const repo = await project();
    const lib = repo.path('lib');
    const inLib = await nestedRepo(repo);
    const harmless = await duringWindow(repo, async () => {
      inLib('remote', 'add', 'origin', 'https://example.com/lib.git');
      await writeFile(path.join(lib, '.git', 'hooks', 'pre-push.sample'), '#!/bin/sh\n');
    });
    expect((await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [harmless] })).gitControl).toBeUndefined();

    const hostile = await duringWindow(repo, async () => {
      inLib('config', 'core.fsmonitor', 'touch /tmp/pwned');
      await writeFile(path.join(lib, '.git', 'hooks', 'post-checkout'), '#!/bin/sh\ntouch /tmp/pwned\n', { mode: 0o755 });
    });
    const found = await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [hostile] });
    expect(found.gitControl).toEqual([
      { repo: 'lib', file: 'lib/.git/config', names: 'core.fsmonitor' },
      { repo: 'lib', file: 'lib/.git/hooks/post-checkout', names: 'a hook (post-checkout)' },
    ]);
    // Changed before the window, it is not this look's: the windows are the agent's turns.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const later = await duringWindow(repo, async () => undefined);
    expect((await findIgnoredChanges({ cwd: repo.dir, env: {}, windows: [later] })).gitControl).toBeUndefined();
  });

  test('a missing work tree is an error, not an empty answer', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'goald-nogit-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await expect(findIgnoredChanges({ cwd: path.join(dir, 'gone'), env: {}, windows: [{ from: 0, to: Date.now() }] })).rejects.toThrow();
  });
});
