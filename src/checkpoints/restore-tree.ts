// Puts files of an earlier snapshot tree back into the work tree (issue 12: checkpoints). Only paths the
// goal's turns changed are touched, only where the work tree differs from the target, and none of them
// when the user changed one since the goal last left it: a rollback never overwrites work that is not the
// goal's, and a file the user added is never removed. git writes the files
// (modes and symlinks as stored) from a scratch index in the goal's directory; the user's index, HEAD
// and refs are never touched, and the goal's snapshot objects are read through its private object store.

import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';

import { GoaldError } from '../errors.js';
import { runGit } from '../workspace/git.js';

/** Where a goal's snapshot trees can be read: its private objects, with the user's as alternates. */
export interface TreeSource {
  /** Absolute top level of the work tree. */
  workspace: string;
  /** The goal's directory (its `objects/` hold the snapshot trees). */
  goalDir: string;
  /** The repository's object store (ResolvedWorkspace.objectsDir). */
  objectsDir: string;
}

/** The three trees a restore compares. */
export interface RestoreTrees {
  /** What the goal left in the work tree (its last snapshot, or the result of its last rollback). */
  expected: string;
  /** A snapshot of the work tree taken now. */
  current: string;
  /** The tree to go back to. */
  target: string;
}

/** What a restore changed: the paths written and the paths removed. */
export interface RestoreResult {
  written: string[];
  removed: string[];
}

// Flags that make diff output independent of the user's diff configuration (as snapshot.ts).
const PLAIN_DIFF_FLAGS = ['-r', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv'];

/**
 * Restores `trees.target` for every path of `goalPaths` (the paths the goal's turns changed) where the work
 * tree (`trees.current`) differs from it. Throws a `conflict` GoaldError (exit 2) naming the files when the
 * work tree differs from `trees.expected` in any of them (the user edited them since), changing nothing.
 */
export async function restoreTree(source: TreeSource, trees: RestoreTrees, goalPaths: ReadonlySet<string>, signal?: AbortSignal): Promise<RestoreResult> {
  const env = gitEnvFor(source);
  const cwd = source.workspace;
  // Going from the work tree to the target: D = the target has no such file (remove it), else write it.
  const changes = (await changedPaths(cwd, env, trees.current, trees.target, signal)).filter((change) => goalPaths.has(change.path));
  if (changes.length === 0) return { written: [], removed: [] };
  const touched = new Set(changes.map((change) => change.path));
  const edited = (await changedPaths(cwd, env, trees.expected, trees.current, signal)).filter((change) => touched.has(change.path));
  if (edited.length > 0) {
    const names = edited.slice(0, 5).map((change) => change.path).join(', ');
    const more = edited.length > 5 ? ` and ${edited.length - 5} more` : '';
    throw new GoaldError(
      'conflict',
      `${names}${more} changed since the goal's last turn; a rollback would overwrite ${edited.length === 1 ? 'that edit' : 'those edits'}`,
      'commit, stash or move your edits (or undo them), then run the rollback again',
    );
  }
  const removed = changes.filter((change) => change.status === 'D').map((change) => change.path);
  const written = changes.filter((change) => change.status !== 'D').map((change) => change.path);
  if (written.length > 0) await checkoutPaths(source, env, trees.target, written, signal);
  for (const file of removed) await removeFile(cwd, file);
  return { written, removed };
}

function gitEnvFor(source: TreeSource): Record<string, string> {
  return {
    GIT_OBJECT_DIRECTORY: path.join(source.goalDir, 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: quoteAlternate(path.resolve(source.objectsDir)),
  };
}

/** Paths that differ between two trees, with git's status letter (as seen going from `from` to `to`). */
async function changedPaths(
  cwd: string,
  env: Record<string, string>,
  from: string,
  to: string,
  signal?: AbortSignal,
): Promise<Array<{ path: string; status: string }>> {
  if (from === to) return [];
  const listed = await runGit(['diff-tree', ...PLAIN_DIFF_FLAGS, '--name-status', '-z', from, to], { cwd, env, signal });
  const fields = listed.stdout.split('\0');
  const changes: Array<{ path: string; status: string }> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i] ?? '';
    const file = fields[i + 1] ?? '';
    if (status !== '' && file !== '') changes.push({ path: file, status: status.charAt(0) });
  }
  return changes;
}

/** Writes `paths` from `tree` into the work tree through a scratch index (removed afterwards). */
async function checkoutPaths(source: TreeSource, env: Record<string, string>, tree: string, paths: readonly string[], signal?: AbortSignal): Promise<void> {
  const scratchIndex = path.join(source.goalDir, `rollback-index.${process.pid}`);
  const withIndex = { ...env, GIT_INDEX_FILE: scratchIndex };
  try {
    await runGit(['read-tree', tree], { cwd: source.workspace, env: withIndex, signal });
    await runGit(['checkout-index', '--force', '-z', '--stdin'], {
      cwd: source.workspace,
      env: withIndex,
      signal,
      input: paths.map((file) => `${file}\0`).join(''),
    });
  } finally {
    await rm(scratchIndex, { force: true });
    await rm(`${scratchIndex}.lock`, { force: true });
  }
}

/** Removes a file the target tree does not have, and the directories it leaves empty. */
async function removeFile(workspace: string, file: string): Promise<void> {
  const absolute = path.join(workspace, file);
  await rm(absolute, { force: true });
  for (let dir = path.dirname(absolute); dir.startsWith(workspace + path.sep); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return; // not empty (or gone): stop climbing
    }
  }
}

/** Quotes a path for GIT_ALTERNATE_OBJECT_DIRECTORIES, whose entries are separated by ':'. */
function quoteAlternate(dir: string): string {
  if (!/[:"\\]/.test(dir)) return dir;
  return `"${dir.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
