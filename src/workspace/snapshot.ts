// Whole-tree snapshots through a private index and a private object store, so the user's .git never
// changes: git reads the user's objects as alternates and writes every new object next to the goal.

import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync, utimesSync, type Stats } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import path from 'node:path';

import { GoaldError } from '../errors.js';
import { realOrResolved, relativeInside } from '../path-inside.js';
import { GOALD_HOME_CHURN } from '../../state/paths.js';
import { DiffTreeStream, stdinFor, type PairDiff, type PairRequest } from './diff-tree-stream.js';
import { addAndWriteTree, runGit, unreadableDirsIn } from './git.js';
import { splitFirstLine } from './first-line.js';
import { findForgedObjects } from './object-check.js';
import { prepareSnapshotGitDir } from './snapshot-git-dir.js';
import { createTreeReader } from './tree-reader.js';
import { createPatchCollector, parseRawNumstat } from './delta-output.js';
import type { FileChange, Snapshotter, TurnDelta } from './types.js';

/** The tree of an empty directory in a SHA-1 repository; git knows it without it being stored. */
export const EMPTY_TREE_HASH = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface SnapshotterOptions {
  /** Absolute top level of the work tree (ResolvedWorkspace.root). */
  workspace: string;
  /** This work tree's git directory, where the user's index lives (ResolvedWorkspace.gitDir). */
  gitDir: string;
  /** The repository's common git directory (ResolvedWorkspace.commonDir); defaults to `gitDir`. */
  commonDir?: string;
  /** The user's object store, read as an alternate (ResolvedWorkspace.objectsDir). */
  objectsDir: string;
  /** The goal's own directory; receives `index` and `objects/`. */
  stateDir: string;
  /** The user's index file; defaults to `<gitDir>/index` (ResolvedWorkspace.indexFile). */
  indexFile?: string;
  /**
   * GOALD_HOME: when it lies inside the work tree (a repository of dotfiles at $HOME holds the default
   * ~/.local/state/goald), what goald writes there (GOALD_HOME_CHURN) is left out of every snapshot.
   */
  goaldHome?: string;
}

// Config for every snapshot command. splitIndex off: with it on, writing our index would drop a
// `sharedindex.*` file into the user's git dir. No auto gc/maintenance: never touch the user's repository.
const SNAPSHOT_CONFIG = [
  '-c',
  'core.splitIndex=false',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
  '-c',
  'advice.addEmbeddedRepo=false',
  // The private index and objects are goald's files: owner only (objects 0400, directories 0700), as
  // the transcripts beside them, whatever the umask. Only the private index and object directory are written.
  '-c',
  'core.sharedRepository=0600',
];

// Flags that make diff output independent of the user's diff configuration and external tools.
const PLAIN_DIFF_FLAGS = ['-r', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv'];

// A turn's delta keeps its patch text up to this size (TurnDelta.patch); beyond it, the head only.
const DELTA_PATCH_KEEP_BYTES = 1024 * 1024;

/** Creates the snapshotter of one goal, seeding its private index from the user's on first use. */
export async function createSnapshotter(options: SnapshotterOptions): Promise<Snapshotter> {
  const stateDir = path.resolve(options.stateDir);
  const privateIndex = path.join(stateDir, 'index');
  const privateObjects = path.join(stateDir, 'objects');
  // Synchronous calls for the small steps, as state/durable-file.ts does: each asynchronous one is a trip
  // through libuv's thread pool, and this runs on the way to a goal's first snapshot.
  mkdirSync(path.join(privateObjects, 'info'), { recursive: true, mode: 0o700 });
  mkdirSync(path.join(privateObjects, 'pack'), { recursive: true, mode: 0o700 });
  // Only the process running a goal touches its state, and it has just started: a lock left here is from
  // a run that died mid-`git add` (SIGKILL, power loss), and would fail every snapshot from now on.
  rmSync(`${privateIndex}.lock`, { force: true });
  await seedIndex(options.indexFile ?? path.join(options.gitDir, 'index'), privateIndex);
  // The repository's configuration and ignore rules as the goal found them (snapshot-git-dir.ts).
  const gitDir = path.join(stateDir, 'git');
  prepareSnapshotGitDir(gitDir, { gitDir: options.gitDir, commonDir: options.commonDir ?? options.gitDir });

  const cwd = options.workspace;
  const env = {
    GIT_DIR: gitDir,
    GIT_WORK_TREE: cwd,
    GIT_INDEX_FILE: privateIndex,
    GIT_OBJECT_DIRECTORY: privateObjects,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: quoteAlternate(path.resolve(options.objectsDir)),
  };
  const goaldFiles = [...excludeStateDir(cwd, stateDir), ...(options.goaldHome === undefined ? [] : excludeGoaldHomeChurn(cwd, options.goaldHome))];
  const baseAddArgs = [...SNAPSHOT_CONFIG, 'add', '--all', '--', '.', ...goaldFiles];
  // Nested repositories without a commit, kept out of this goal's snapshots from the first that met one.
  const uncommittedRepos = new Set<string>();
  const addArgs = (): string[] => [...baseAddArgs, ...[...uncommittedRepos].map((repo) => `:(exclude,literal)${repo}`)];
  // Directories the last snapshot's `git add` could not list (permission denied): a file made in one is in
  // no snapshot, though a check can run it by name.
  let unreadable: string[] = [];
  const noteUnreadable = (result: { stderr: string }): void => {
    unreadable = unreadableDirsIn(result.stderr);
  };
  // `git add` stops at the first nested repository that has no commit yet (a turn's `git init` in a
  // directory, `cargo new`), naming it: the snapshot is taken again without it, one at a time.
  const withoutUncommittedRepos = async <T>(attempt: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        const repo = uncommittedRepoIn(error);
        if (repo === null || uncommittedRepos.has(repo) || uncommittedRepos.size >= MAX_UNCOMMITTED_REPOS) throw error;
        uncommittedRepos.add(repo);
      }
    }
  };

  // Two `git add` on one index race for its lock and the loser fails, so snapshots run one at a time.
  let queue: Promise<unknown> = Promise.resolve();

  const listFiles = async (fromTree: string, toTree: string, signal?: AbortSignal): Promise<FileChange[]> => {
    const listed = await runGit(['diff-tree', ...PLAIN_DIFF_FLAGS, '--raw', '--numstat', '-z', fromTree, toTree], { cwd, env, signal });
    return parseRawNumstat(listed.stdout);
  };

  const takeSnapshot = async (signal?: AbortSignal, onIndexed?: () => void): Promise<string> => {
    // One listing of the filter drivers for both commands, in the same shell right before them: the turn
    // that could have configured a driver has ended (its processes killed) before a snapshot is taken.
    const written = await withoutUncommittedRepos(() =>
      addAndWriteTree(addArgs(), [...SNAPSHOT_CONFIG, 'write-tree'], { cwd, env, signal, ...(onIndexed ? { onIndexed } : {}) }),
    );
    noteUnreadable(written);
    return written.stdout.trim();
  };

  // One attempt at a turn's snapshot and its diffs from one shell (snapshotAndDiffSince).
  const snapshotAndDiffOnce: NonNullable<Snapshotter['snapshotAndDiffSince']> = (fromTree, baseTree, signal, onIndexed) => {
    // The snapshot's shell becomes `diff-tree --stdin` once write-tree has printed the tree: the pairs
    // are written to its stdin as soon as that line arrives, and the rest of its output is the diff.
    const pairsIn = new PassThrough();
    let diff: { tree: string; stream: DiffTreeStream } | null = null;
    let treeLine: (tree: string) => void = () => undefined;
    let noTree: (error: unknown) => void = () => undefined;
    const tree = new Promise<string>((resolve, reject) => {
      treeLine = resolve;
      noTree = reject;
    });
    const onStdout = splitFirstLine((line) => {
      const toTree = line.toString('utf8').trim();
      const requests = diffSincePairs(fromTree, toTree, baseTree);
      let input: string;
      try {
        input = stdinFor(requests);
      } catch (error) {
        pairsIn.end(); // diff-tree reads nothing and ends; the run reports this
        noTree(error);
        return () => undefined;
      }
      const stream = new DiffTreeStream(requests, { keepPatchBytes: DELTA_PATCH_KEEP_BYTES });
      diff = { tree: toTree, stream };
      pairsIn.end(input);
      treeLine(toTree);
      return (chunk) => stream.push(chunk);
    });
    const options = { cwd, env, signal, input: pairsIn, onStdout, ...(onIndexed ? { onIndexed } : {}) };
    const run = queue.then(async () => {
      const result = await addAndWriteTree(addArgs(), [...SNAPSHOT_CONFIG, 'write-tree'], options, DIFF_STDIN_ARGS);
      noteUnreadable(result);
      return result;
    });
    queue = run.catch(() => undefined);
    const done = run.then(() => {
      if (diff === null) throw new GoaldError('internal', `git write-tree printed no tree in ${cwd}`);
      return diffSinceResult(fromTree, diff.tree, baseTree, diff.stream.finish());
    });
    done.catch((error: unknown) => noTree(error)); // before the tree line: the snapshot failed (a no-op after it)
    return tree.then((toTree) => ({ tree: toTree, diff: done }));
  };

  return {
    ...createTreeReader({ cwd, env, plainDiffFlags: PLAIN_DIFF_FLAGS }),

    leftOut: () => [...uncommittedRepos],

    forgedObjects: (names, signal) => findForgedObjects(names, { cwd, env, ...(signal === undefined ? {} : { signal }) }),

    // Loaded on a goal's first passing turn, not on the way to its first agent.
    ignoredChanges: async (windows, options) => {
      const { findIgnoredChanges } = await import('./ignored-changes.js');
      return findIgnoredChanges({ ...options, cwd, env, windows, exclude: excludeStateDir(cwd, stateDir), leftOut: [...uncommittedRepos], unreadable });
    },

    snapshot(signal, onIndexed) {
      const run = queue.then(() => takeSnapshot(signal, onIndexed));
      queue = run.catch(() => undefined);
      return run;
    },

    async files(fromTree, toTree, signal): Promise<FileChange[]> {
      if (fromTree === toTree) return [];
      return listFiles(fromTree, toTree, signal);
    },

    async diff(fromTree, toTree, signal): Promise<TurnDelta> {
      if (fromTree === toTree) return emptyDelta(fromTree);
      const [delta] = await diffPairs([{ from: fromTree, to: toTree, withPatch: true }], { cwd, env, signal });
      return toTurnDelta(fromTree, toTree, delta);
    },

    async diffSince(fromTree, toTree, baseTree, signal) {
      const requests = diffSincePairs(fromTree, toTree, baseTree);
      const diffs = requests.length === 0 ? [] : await diffPairs(requests, { cwd, env, signal });
      return diffSinceResult(fromTree, toTree, baseTree, diffs);
    },

    snapshotAndDiffSince(fromTree, baseTree, signal, onIndexed) {
      return withoutUncommittedRepos(() => snapshotAndDiffOnce(fromTree, baseTree, signal, onIndexed));
    },


    async patch(fromTree, toTree, maxChars, signal): Promise<string> {
      if (fromTree === toTree) return '';
      const collector = createPatchCollector(maxChars);
      await runGit(['diff-tree', ...PLAIN_DIFF_FLAGS, '-p', fromTree, toTree], {
        cwd,
        env,
        signal,
        onStdout: collector.push,
      });
      return collector.finish();
    },
  };
}

/**
 * The snapshotter with its next snapshot() already under way (`taken`): a caller that starts the first
 * snapshot early, while other work goes on, hands it over this way.
 */
export function withSnapshotUnderWay(snapshotter: Snapshotter, taken: Promise<string>, indexed: Promise<void>): Snapshotter {
  let pending: Promise<string> | null = taken;
  return {
    ...snapshotter,
    snapshot(signal, onIndexed) {
      if (pending === null) return snapshotter.snapshot(signal, onIndexed);
      const first = pending;
      pending = null;
      if (onIndexed) indexed.then(onIndexed, () => undefined); // a failed snapshot rejects `first`
      return first;
    },
  };
}

// --full-index: binary changes are identified by their full blob ids, whatever core.abbrev says.
const DIFF_STDIN_ARGS = ['diff-tree', '--stdin', ...PLAIN_DIFF_FLAGS, '--raw', '--numstat', '-p', '--full-index', '-z'];

// diffSince's pairs: the turn's own (with its patch) when the tree changed, and from the base when that is
// another diff (the turn's own one when the turn started at the base).
function diffSincePairs(fromTree: string, toTree: string, baseTree: string): PairRequest[] {
  const turnChanged = fromTree !== toTree;
  const pairs: Array<[string, string]> = [];
  if (turnChanged) pairs.push([fromTree, toTree]);
  if (baseTree !== toTree && baseTree !== fromTree) pairs.push([baseTree, toTree]);
  return pairs.map(([from, to], index): PairRequest => ({ from, to, withPatch: turnChanged && index === 0 }));
}

function diffSinceResult(fromTree: string, toTree: string, baseTree: string, diffs: PairDiff[]): { delta: TurnDelta; filesSinceBase: FileChange[] } {
  const turnChanged = fromTree !== toTree;
  const delta = turnChanged ? toTurnDelta(fromTree, toTree, diffs[0]) : emptyDelta(fromTree);
  let filesSinceBase: FileChange[] = [];
  if (baseTree !== toTree && baseTree !== fromTree) filesSinceBase = diffs[turnChanged ? 1 : 0]?.files ?? [];
  else if (baseTree === fromTree) filesSinceBase = delta.files;
  return { delta, filesSinceBase };
}

/** One `git diff-tree --stdin` over the pairs: each pair's files, and its patch id and text where asked. */
async function diffPairs(
  pairs: PairRequest[],
  options: { cwd: string; env: Record<string, string>; signal: AbortSignal | undefined },
): Promise<PairDiff[]> {
  const stream = new DiffTreeStream(pairs, { keepPatchBytes: DELTA_PATCH_KEEP_BYTES });
  await runGit(DIFF_STDIN_ARGS, {
    cwd: options.cwd,
    env: options.env,
    signal: options.signal,
    input: stdinFor(pairs),
    onStdout: stream.push,
  });
  return stream.finish();
}

function emptyDelta(tree: string): TurnDelta {
  return { fromTree: tree, toTree: tree, files: [], patchId: null, empty: true };
}

function toTurnDelta(fromTree: string, toTree: string, diff: PairDiff | undefined): TurnDelta {
  if (diff === undefined) throw new GoaldError('internal', `git diff-tree printed nothing for ${fromTree}..${toTree}`);
  const delta: TurnDelta = { fromTree, toTree, files: diff.files, patchId: diff.patchId, empty: false };
  if (diff.patch !== null) delta.patch = { text: diff.patch, cut: diff.patchCut };
  return delta;
}

/** Copies the user's index once; later runs (a restarted daemon) keep the goal's own index. */
async function seedIndex(userIndex: string, privateIndex: string): Promise<void> {
  if (existsSync(privateIndex)) return;
  const source = statIfExists(userIndex);
  // No user index (a fresh `git init`): git treats a missing index as empty, so there is nothing to copy.
  if (source === null) return;
  const temporary = `${privateIndex}.${process.pid}.seed`;
  // The one step that may take long (a large repository's index): off the event loop.
  await copyFile(userIndex, temporary);
  // copyFile keeps the source's mode (often 0644); the goal's copy is goald's file: owner only.
  chmodSync(temporary, 0o600);
  // Keep the source's mtime: git compares file mtimes against the index's own to spot "racily clean"
  // entries, and a fresh mtime would make a file edited just before the copy look unchanged.
  utimesSync(temporary, source.atime, source.mtime);
  // Rename so a crash mid-copy never leaves a truncated index for the next start to trust.
  renameSync(temporary, privateIndex);
}

function statIfExists(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

/** Quotes a path for GIT_ALTERNATE_OBJECT_DIRECTORIES, whose entries are separated by ':'. */
function quoteAlternate(dir: string): string {
  if (!/[:"\\]/.test(dir)) return dir;
  return `"${dir.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

// A turn could make any number of them; past this many, the snapshot fails as git does.
const MAX_UNCOMMITTED_REPOS = 32;

/** The nested repository a failed `git add` named as having no commit yet (its path from the top), or null. */
function uncommittedRepoIn(error: unknown): string | null {
  if (!(error instanceof GoaldError)) return null;
  return /error: '(.+)\/' does not have a commit checked out/.exec(error.message)?.[1] ?? null;
}

/** Keeps a state directory placed inside the workspace out of its own snapshots. */
function excludeStateDir(workspace: string, stateDir: string): string[] {
  const relative = relativeInside(workspace, stateDir);
  if (relative === null || relative === '') return [];
  return [`:(exclude,literal)${relative.split(path.sep).join('/')}`];
}

/**
 * Keeps what goald writes under GOALD_HOME out of the snapshots when GOALD_HOME lies inside the workspace:
 * otherwise each of goald's writes (state.json, the daemon's log, another goal's objects) is in the turn's
 * diff, and a temporary file renamed away while `git add` lists the tree fails the snapshot ("unable to
 * stat"). The rest of GOALD_HOME stays in: a file an agent adds there is the guard's to judge.
 */
function excludeGoaldHomeChurn(workspace: string, goaldHome: string): string[] {
  // The work tree's top level is git's (symlinks resolved): a GOALD_HOME named through a symlink must be too.
  const relative = relativeInside(workspace, realOrResolved(goaldHome));
  // A GOALD_HOME that is the work tree itself: its churn's names (`*.lock`, `cache/**`) would be the
  // project's own files too (Cargo.lock), so nothing is left out.
  if (relative === null || relative === '') return [];
  const home = relative.split(path.sep).join('/').replace(/[\\*?[]/g, '\\$&');
  return GOALD_HOME_CHURN.map((entry) => `:(exclude,glob)${home}/${entry}`);
}
