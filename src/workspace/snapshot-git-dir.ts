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
  // `refs` and HEAD make it a git directory; objects are always given apart (GIT_OBJECT_DIRECTORY).
  mkdirSync(path.join(dir, 'refs'), { recursive: true, mode: 0o700 });
  for (const { from, file } of COPIED) {
    const content = readRegularFile(path.join(source[from], file));
    if (content === null) continue;
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, file), content, { mode: 0o600 });
  }
  const temporary = path.join(dir, `${HEAD_FILE}.${process.pid}.tmp`);
  writeFileSync(temporary, HEAD_TEXT, { mode: 0o600 });
  renameSync(temporary, path.join(dir, HEAD_FILE));
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
