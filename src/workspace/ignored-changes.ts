// Files git ignores are in no snapshot, and neither are the files inside a nested repository (a submodule
// or a checked-out repository: the snapshot holds its commit; one without a commit is left out): an agent
// that rewrites one (a test runner under node_modules/, a script in a vendored repository) changes what
// the checks run while no diff shows anything. This finds those files whose inode changed during the
// agent's turns, by their ctime, which the kernel sets on every change and no process can set back
// (utimes sets mtime, not ctime). Only non-directories are listed, never a `.git` directory's content;
// files a check wrote fall outside the windows and are left out.

import { spawn } from 'node:child_process';
import { lstat } from 'node:fs/promises';

import { GoaldError } from '../errors.js';
import { findTool } from '../process/goald-tools.js';
import { deniedDirsIn, runGit, unreadableDirsIn } from './git.js';
import { nestedGitControlChanges, type NestedGitControlChange } from './nested-git-control.js';
import { withinWindows, type TimeWindow } from './time-window.js';

/** One ignored file changed within a window. */
export interface IgnoredChange {
  /** Relative to the work tree's top, with `/` separators. */
  path: string;
  /** True when the file is older than the first window (edited in place), false when made since, null when the filesystem does not say. */
  predates: boolean | null;
  /** The nested repository the file lies in (its path from the top, no trailing `/`); absent for an ignored file. */
  repo?: string;
}

/** A directory goald cannot list (permission denied): what is made in it, no snapshot or look sees. */
export interface UnreadableDir {
  /** From the top, ending in `/`. */
  path: string;
  /** Its ctime falls in a window: the agent made it unreadable (or changed it) during its turns. */
  changed: boolean;
}

export interface IgnoredChanges {
  files: IgnoredChange[];
  /** Changed files beyond the cap that were not looked at one by one (they may include files a check wrote). */
  more: number;
  /** Directories the last snapshot or this look could not list. */
  unreadable?: UnreadableDir[];
  /** Nested repositories' config files and hooks changed within the windows that name a program. */
  gitControl?: NestedGitControlChange[];
}

export interface IgnoredChangesOptions {
  /** The work tree's top. */
  cwd: string;
  /** The snapshot's git environment, so that the ignore rules are the snapshots' own. */
  env: Record<string, string>;
  windows: readonly TimeWindow[];
  /** Pathspecs kept out (goald's state directory when it lies in the work tree). */
  exclude?: readonly string[];
  /** Nested repositories the snapshots left out (no commit yet; Snapshotter.leftOut), looked into as well. */
  leftOut?: readonly string[];
  /** Directories the last snapshot's `git add` could not list (snapshot.ts, unreadableDirsIn). */
  unreadable?: readonly string[];
  signal?: AbortSignal;
  /** Files looked at one by one, at most (default MAX_FILES), besides those `mustLook` names. */
  maxFiles?: number;
  /** Files always looked at, past the cap (protected paths: a flood of other files must not hide one). */
  mustLook?: (file: string) => boolean;
}

const MAX_FILES = 2_000;
// find's complaint about a directory it could not list (a name may hold newlines: matched across lines).
const FIND_DENIED = /^find: '\.\/([\s\S]*?)': Permission denied$/gm;
// find's complaints read, at most (the first of them): thousands of lines.
const COMPLAINTS_KEEP_BYTES = 1024 * 1024;
// As long as one git call may take (GIT_TIMEOUT_MS): an agent can make a huge ignored tree.
const FIND_TIMEOUT_MS = 60_000;
// Paths handed to one `find`: far below the kernel's argument limit.
const FIND_BATCH = 1_000;

/** The ignored and nested repositories' files changed within `windows`, sorted by path; none when there is no window. */
export async function findIgnoredChanges(options: IgnoredChangesOptions): Promise<IgnoredChanges> {
  const { windows, cwd, signal } = options;
  if (windows.length === 0) return { files: [], more: 0 };
  const git = (args: string[]) => runGit([...args, '--', '.', ...(options.exclude ?? [])], { cwd, env: options.env, ...(signal ? { signal } : {}) });
  // The snapshot's index holds a nested repository with a commit as a gitlink (mode 160000).
  const [ignored, staged] = await Promise.all([
    git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--no-empty-directory']),
    git(['ls-files', '-z', '--stage']),
  ]);
  const repos = [...(options.leftOut ?? []), ...gitlinksOf(staged.stdout)];
  // No `/` after a repository's path: given `x/`, find follows a symlink the agent put at x (to `/`, say).
  const entries = [...ignored.stdout.split('\0').filter((entry) => entry !== ''), ...repos];
  const since = Math.min(...windows.map((window) => window.from));
  const candidates: string[] = [];
  const deniedDirs = new Set([...(options.unreadable ?? []), ...unreadableDirsIn(ignored.stderr)]);
  for (let at = 0; at < entries.length; at += FIND_BATCH) {
    const found = await findChangedSince(cwd, entries.slice(at, at + FIND_BATCH), since, signal);
    candidates.push(...found.files);
    for (const dir of found.denied) deniedDirs.add(dir);
  }
  const [unreadable, gitControl] = await Promise.all([
    Promise.all([...deniedDirs].sort().map((dir) => unreadableDir(cwd, dir, windows))),
    nestedGitControlChanges(cwd, repos, windows),
  ]);
  const maxFiles = options.maxFiles ?? MAX_FILES;
  const mustLook = options.mustLook ?? (() => false);
  const rest = candidates.filter((file) => !mustLook(file)).sort();
  const looked = [...candidates.filter(mustLook), ...rest.slice(0, maxFiles)].sort();
  const files: IgnoredChange[] = [];
  for (const file of await Promise.all(looked.map((relative) => changeWithin(cwd, relative, windows, since)))) {
    if (file === null) continue;
    const repo = repos.find((candidate) => file.path.startsWith(`${candidate}/`));
    files.push(repo === undefined ? file : { ...file, repo });
  }
  const more = rest.length - Math.min(rest.length, maxFiles);
  return { files, more, ...(unreadable.length === 0 ? {} : { unreadable }), ...(gitControl.length === 0 ? {} : { gitControl }) };
}

// The gitlinks' paths in `ls-files --stage -z` output ("<mode> <id> <stage>\t<path>" records).
function gitlinksOf(staged: string): string[] {
  return staged
    .split('\0')
    .filter((record) => record.startsWith('160000 '))
    .map((record) => record.slice(record.indexOf('\t') + 1));
}

// `find` over the entries (files, or directories git listed whole): the non-directories whose ctime is
// `since` or later. Paths come back relative, without their `./`.
function findChangedSince(cwd: string, entries: readonly string[], since: number, signal: AbortSignal | undefined): Promise<{ files: string[]; denied: string[] }> {
  // `./` keeps a name that starts with `-` from reading as an expression.
  const newer = ['!', '-type', 'd', '-newerct', `@${((since - 1) / 1000).toFixed(3)}`, '-print0'];
  const args = ['-P', ...entries.map((entry) => `./${entry}`), '(', '-name', '.git', '-prune', ')', '-o', '(', ...newer, ')'];
  // Never a `find` an agent could have put on PATH (process/goald-tools.ts): its answer is the judge's.
  const find = findTool('find', { cwd });
  if (find === null) {
    return Promise.reject(new GoaldError('internal', `could not look at ignored files in ${cwd}: no find on PATH outside the work tree and the directories agent turns may write`, 'install findutils'));
  }
  return new Promise((resolve, reject) => {
    // Only what find needs; LC_ALL=C: its complaints in plain quotes, which are parsed below.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
    const child = spawn(find, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: FIND_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    const chunks: Buffer[] = [];
    const complaints: Buffer[] = [];
    let complaintBytes = 0;
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (complaintBytes >= COMPLAINTS_KEEP_BYTES) return;
      complaints.push(chunk);
      complaintBytes += chunk.length;
    });
    child.on('error', (error) => {
      reject(signal?.aborted === true ? signal.reason : new GoaldError('internal', `could not run find to look at the files git ignores: ${error.message}`, 'install findutils'));
    });
    child.on('close', (code) => {
      const stderr = Buffer.concat(complaints).toString('utf8');
      // A file removed while find ran, or a directory it could not list, makes it exit 1 after listing the rest.
      if (code !== 0 && code !== 1) {
        const why = code === null ? `did not finish within ${FIND_TIMEOUT_MS / 1000} s` : `exited ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`;
        reject(new GoaldError('internal', `find ${why} looking at the files git ignores`));
        return;
      }
      const out = Buffer.concat(chunks).toString('utf8');
      const files = out.split('\0').filter((entry) => entry !== '').map((entry) => entry.replace(/^\.\//, ''));
      resolve({ files, denied: deniedDirsIn(stderr, FIND_DENIED).slice(0, MAX_FILES) });
    });
  });
}

// A directory goald cannot list, and whether its ctime (a chmod sets it) falls in a window. One that is not
// there to look at was named by a complaint its own name garbled (a newline and a forged "': Permission
// denied" in it): counted as changed, since nothing else makes git or find name a path that does not exist.
async function unreadableDir(cwd: string, dir: string, windows: readonly TimeWindow[]): Promise<UnreadableDir> {
  try {
    return { path: dir, changed: withinWindows((await lstat(`${cwd}/${dir}`)).ctimeMs, windows) };
  } catch {
    return { path: dir, changed: true };
  }
}

// The file as a change within a window, or null (changed outside them: a check's write; or gone).
async function changeWithin(cwd: string, relative: string, windows: readonly TimeWindow[], since: number): Promise<IgnoredChange | null> {
  let stats;
  try {
    stats = await lstat(`${cwd}/${relative}`);
  } catch {
    return null;
  }
  if (!withinWindows(stats.ctimeMs, windows)) return null;
  const born = stats.birthtimeMs;
  return { path: relative, predates: born > 0 ? born < since : null };
}
