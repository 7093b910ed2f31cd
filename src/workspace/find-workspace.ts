// Finds the git work tree a goal is bound to, and where its git metadata lives (worktrees included).

import { statSync } from 'node:fs';
import path from 'node:path';

import { GoaldError } from '../errors.js';
import { runGit } from './git.js';

export interface ResolvedWorkspace {
  /** Absolute top level of the work tree. */
  root: string;
  /** This work tree's git directory (`.git`, or `.git/worktrees/<name>` for a linked worktree). */
  gitDir: string;
  /** The directory shared by all worktrees of the repository. */
  commonDir: string;
  /** The repository's object store (under commonDir). */
  objectsDir: string;
  /** This work tree's index file (may not exist yet in a fresh repository). */
  indexFile: string;
}

/** Resolves the git work tree containing `dir`; refuses missing, non-git and bare directories. */
export async function resolveWorkspace(dir: string, signal?: AbortSignal): Promise<ResolvedWorkspace> {
  const absolute = path.resolve(dir);
  // Synchronous, so git starts within this call: the CLI runs the lookup while it loads the rest of goald.
  const isDirectory = statSync(absolute, { throwIfNoEntry: false })?.isDirectory() ?? false;
  if (!isDirectory) throw notAGitRepo(dir);

  const found = await runGit(
    [
      'rev-parse',
      '--path-format=absolute',
      '--show-toplevel',
      '--git-dir',
      '--git-common-dir',
      '--git-path',
      'objects',
      '--git-path',
      'index',
    ],
    { cwd: absolute, signal, allowFailure: true },
  );
  const lines = found.stdout.split('\n').filter((line) => line !== '');
  const [root, gitDir, commonDir, objectsDir, indexFile] = lines;
  if (found.exitCode === 0 && root && gitDir && commonDir && objectsDir && indexFile) {
    return { root, gitDir, commonDir, objectsDir, indexFile };
  }

  if (found.stderr.includes('dubious ownership')) {
    throw new GoaldError(
      'not-a-git-repo',
      `${dir} is a git repository owned by another user, which git refuses to read`,
      `if you trust it: git config --global --add safe.directory ${absolute}`,
    );
  }
  // rev-parse refuses --show-toplevel both outside a repository and inside one without a work tree.
  const probe = await runGit(['rev-parse', '--is-bare-repository'], { cwd: absolute, signal, allowFailure: true });
  if (probe.exitCode === 0 && probe.stdout.trim() === 'true') {
    throw new GoaldError(
      'not-a-git-repo',
      `${dir} is a bare git repository, which has no work tree for an agent to change`,
      'clone it first (`git clone <bare> <dir>`), or pass -C <repo> pointing at a work tree',
    );
  }
  throw notAGitRepo(dir, found.stderr.trim());
}

function notAGitRepo(dir: string, gitSaid?: string): GoaldError {
  return new GoaldError(
    'not-a-git-repo',
    `${dir} is not inside a git work tree`,
    'run `git init` there first, or pass -C <repo>',
    gitSaid ? { cause: gitSaid } : undefined,
  );
}
