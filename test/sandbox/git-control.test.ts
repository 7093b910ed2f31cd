import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitControlPaths, gitDirectoryToPin } from '../../src/sandbox/git-control.js';
import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import { gitdir } from '../helpers/gitdir.js';

describe('gitControlPaths', () => {
  it("names the repository's config and hooks, and the hooks directory core.hooksPath points at", async () => {
    const repo = await gitdir({ initialCommit: true, files: { '.husky/_/pre-commit': '#!/bin/sh\n' } });
    const ws = await resolveWorkspace(repo.dir);
    const git = repo.path('.git');
    expect(gitControlPaths(ws, { makeHooks: false })).toEqual([path.join(git, 'config'), path.join(git, 'hooks')]);
    await repo.git('config', 'core.hooksPath', '.husky/_');
    await repo.git('config', 'remote.origin.hooksPath', 'elsewhere'); // another section's key of that name
    await writeFile(path.join(git, 'config.worktree'), '[core]\n');
    expect(gitControlPaths(ws, { makeHooks: false })).toEqual([
      path.join(git, 'config'),
      path.join(git, 'config.worktree'),
      path.join(git, 'hooks'),
      repo.path('.husky/_'),
    ]);
  });

  it('makes a missing hooks directory only when a sandbox is about to be used', async () => {
    const repo = await gitdir({ initialCommit: true });
    const ws = await resolveWorkspace(repo.dir);
    const hooks = repo.path('.git/hooks');
    await rm(hooks, { recursive: true, force: true });
    expect(gitControlPaths(ws, { makeHooks: false })).toEqual([repo.path('.git/config')]);
    expect(existsSync(hooks)).toBe(false);
    expect(gitControlPaths(ws, { makeHooks: true })).toEqual([repo.path('.git/config'), hooks]);
    expect(existsSync(hooks)).toBe(true);
  });

  it("takes a linked worktree's own git directory and the common one", async () => {
    const repo = await gitdir({ initialCommit: true });
    const linked = repo.path('../linked-wt');
    await repo.git('worktree', 'add', '-q', linked);
    const ws = await resolveWorkspace(linked);
    // With what says where the git directory is: the work tree's `.git` file and the worktree's commondir.
    expect(gitControlPaths(ws, { makeHooks: false })).toEqual([
      repo.path('.git/config'),
      repo.path('.git/hooks'),
      path.join(linked, '.git'),
      repo.path('.git/worktrees/linked-wt/commondir'),
    ]);
    expect(gitDirectoryToPin(ws)).toBeNull();
    expect(gitDirectoryToPin(await resolveWorkspace(repo.dir))).toBe(repo.path('.git'));
    await rm(linked, { recursive: true, force: true });
  });

  it("takes each submodule's config and hooks, nested ones and names with slashes included", async () => {
    const repo = await gitdir({ initialCommit: true });
    const modules = repo.path('.git/modules');
    // The shape `git submodule update` leaves: a git directory per submodule under modules/, by name.
    for (const dir of ['lib', 'vendor/tools', 'lib/modules/inner']) {
      await repo.git('init', '-q', '--bare', path.join(modules, dir));
    }
    await rm(path.join(modules, 'vendor/tools/hooks'), { recursive: true, force: true });
    const ws = await resolveWorkspace(repo.dir);
    const found = gitControlPaths(ws, { makeHooks: true });
    for (const dir of ['lib', 'vendor/tools', 'lib/modules/inner']) {
      expect(found).toContain(path.join(modules, dir, 'config'));
      expect(found).toContain(path.join(modules, dir, 'hooks'));
    }
    expect(found.filter((file) => file.startsWith(modules))).toHaveLength(6);
  });
});
