// The git directory a goal's snapshots run in: the repository's own configuration and ignore rules as they
// were when the goal started, copied once into the goal's directory. The live `.git` is in the workspace,
// which a turn may write: a path it added to `.git/info/exclude` (or a `core.excludesFile` it set in
// `.git/config`) would otherwise be left out of every later snapshot, and so out of the diff the evaluator
// reads and the tamper guard inspects, while the checks still run with that file in place. Snapshots read
// this copy instead (GIT_DIR, with the work tree, index and objects given apart); the in-tree `.gitignore`
// files stay live, and an edit to one is itself in the diff.

import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What a snapshot's git directory is copied from (ResolvedWorkspace's). */
export interface SnapshotGitSource {
  /** This work tree's git directory: its `config.worktree` and `info/sparse-checkout`. */
  gitDir: string;
  /** The directory shared by all worktrees: `config`, `info/exclude` and `info/attributes`. */
  commonDir: string;
}

// Copied from the repository, each only when it is a regular file: the rules git applies to a work tree.
// `config` keeps the object format, autocrlf, excludesFile and the like (the filter drivers it names are
// overridden on every snapshot, as ever); `include` paths in it resolve beside the copy, so are not read.
const COPIED: ReadonlyArray<{ from: keyof SnapshotGitSource; file: string }> = [
  { from: 'commonDir', file: 'config' },
  { from: 'gitDir', file: 'config.worktree' },
  { from: 'commonDir', file: path.join('info', 'exclude') },
  { from: 'commonDir', file: path.join('info', 'attributes') },
  { from: 'gitDir', file: path.join('info', 'sparse-checkout') },
];

// Written last: a directory without it was cut short (a crash) and is made again.
const HEAD_FILE = 'HEAD';
// Snapshots write no ref; git only requires HEAD to name one.
const HEAD_TEXT = 'ref: refs/heads/goald-snapshot\n';

/**
 * Makes `dir` the snapshots' git directory, copying from `source` (synchronous: a few small files, on the
 * way to a goal's first snapshot). Once made it is kept as it is: a restarted daemon's snapshots read the
 * rules the goal started with, not what a turn has since written.
 */
export function prepareSnapshotGitDir(dir: string, source: SnapshotGitSource): void {
  if (readRegularFile(path.join(dir, HEAD_FILE))?.toString('utf8') === HEAD_TEXT) return;
  rmSync(dir, { recursive: true, force: true });
  for (const sub of ['info', 'refs', 'objects']) mkdirSync(path.join(dir, sub), { recursive: true, mode: 0o700 });
  for (const { from, file } of COPIED) {
    const content = readRegularFile(path.join(source[from], file));
    if (content !== null) writeFileSync(path.join(dir, file), content, { mode: 0o600 });
  }
  const temporary = path.join(dir, `${HEAD_FILE}.${process.pid}.tmp`);
  writeFileSync(temporary, HEAD_TEXT, { mode: 0o600 });
  renameSync(temporary, path.join(dir, HEAD_FILE));
}

/**
 * What a snapshot's git reads of configuration that may name a filter driver, as one string to compare: the
 * goal's copies in `dir` (which do not change) and the user's global and the system files, read now (the
 * system file where Debian's git has it, or GIT_CONFIG_SYSTEM). Null when any of them mentions `include`:
 * the files an include names are not read here, so nothing can be vouched for (the snapshot then lists the
 * drivers), and when a variable names a relative path (git would take it from the workspace).
 */
export function snapshotConfigFingerprint(dir: string, env: NodeJS.ProcessEnv): string | null {
  const others = [...(globalConfigFiles(env) ?? [null]), systemConfigFile(env)];
  if (others.includes(null)) return null;
  let fingerprint = '';
  for (const file of [path.join(dir, 'config'), path.join(dir, 'config.worktree'), ...others]) {
    if (file === null || file === undefined) continue;
    const bytes = readRegularFile(file);
    // latin1: one character a byte, so any bytes compare exactly.
    const text = bytes === null ? null : bytes.toString('latin1');
    if (text !== null && /include/i.test(text)) return null;
    fingerprint += `${file}\0${text === null ? '-' : `+${text}`}\0`;
  }
  return fingerprint;
}

// An absolute path from a variable; undefined when it is unset or empty, null when it is relative.
function absoluteFrom(value: string | undefined): string | null | undefined {
  if (value === undefined || value === '') return undefined;
  return path.isAbsolute(value) ? value : null;
}

// The global files git reads: GIT_CONFIG_GLOBAL alone when set, else the XDG file and ~/.gitconfig.
function globalConfigFiles(env: NodeJS.ProcessEnv): string[] | null {
  const global = absoluteFrom(env.GIT_CONFIG_GLOBAL);
  if (global !== undefined) return global === null ? null : [global];
  const home = absoluteFrom(env.HOME);
  const xdgHome = absoluteFrom(env.XDG_CONFIG_HOME);
  if (home === null || xdgHome === null) return null;
  const xdg = xdgHome ?? (home === undefined ? undefined : path.join(home, '.config'));
  return [...(xdg === undefined ? [] : [path.join(xdg, 'git', 'config')]), ...(home === undefined ? [] : [path.join(home, '.gitconfig')])];
}

// The system file (none with GIT_CONFIG_NOSYSTEM); null when GIT_CONFIG_SYSTEM is relative.
function systemConfigFile(env: NodeJS.ProcessEnv): string | null | undefined {
  if (env.GIT_CONFIG_NOSYSTEM !== undefined && env.GIT_CONFIG_NOSYSTEM !== '' && env.GIT_CONFIG_NOSYSTEM !== '0') return undefined;
  const named = absoluteFrom(env.GIT_CONFIG_SYSTEM);
  return named === undefined ? '/etc/gitconfig' : named;
}

// A regular file's bytes; null when it is missing or anything else. Opened without blocking: a FIFO a
// turn left at `.git/info/exclude` must not hang goald (a FIFO is never read; a symlink is followed, as
// git would).
function readRegularFile(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : null;
  } finally {
    closeSync(fd);
  }
}
