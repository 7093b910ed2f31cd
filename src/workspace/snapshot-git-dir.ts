// The git directory a goal's snapshots run in: the repository's own configuration and ignore rules as they
// were when the goal started, copied once into the goal's directory. The live `.git` is in the workspace,
// which a turn may write: a path it added to `.git/info/exclude` (or a `core.excludesFile` it set in
// `.git/config`) would otherwise be left out of every later snapshot, and so out of the diff the evaluator
// reads and the tamper guard inspects, while the checks still run with that file in place. Snapshots read
// this copy instead (GIT_DIR, with the work tree, index and objects given apart); the in-tree `.gitignore`
// files stay live, and an edit to one is itself in the diff.
//
// Its `info/attributes`, which outranks every `.gitattributes`, also ends with a line of goald's own that
// leaves `diff` and `filter` unspecified for every path: a `*.js -diff` a turn writes to .gitattributes
// would otherwise turn the patches the evaluator reads and the guard scans into "Binary files differ"
// (binary files are still found by their content), and no filter driver can run on a snapshot's files.

import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What a snapshot's git directory is copied from (ResolvedWorkspace's). */
export interface SnapshotGitSource {
  /** This work tree's git directory: its `config.worktree` and `info/sparse-checkout`. */
  gitDir: string;
  /** The directory shared by all worktrees: `config`, `info/exclude` and `info/attributes`. */
  commonDir: string;
}

const ATTRIBUTES_FILE = path.join('info', 'attributes');

// Copied from the repository, each only when it is a regular file: the rules git applies to a work tree.
// `config` keeps the object format, autocrlf, excludesFile and the like (the filter drivers it names are
// overridden on every snapshot, as ever); `include` paths in it resolve beside the copy, so are not read.
const COPIED: ReadonlyArray<{ from: keyof SnapshotGitSource; file: string }> = [
  { from: 'commonDir', file: 'config' },
  { from: 'gitDir', file: 'config.worktree' },
  { from: 'commonDir', file: path.join('info', 'exclude') },
  { from: 'commonDir', file: ATTRIBUTES_FILE },
  { from: 'gitDir', file: path.join('info', 'sparse-checkout') },
];

// Appended to the copied `info/attributes` (later lines win within a file; this file outranks the tree's).
const JUDGE_ATTRIBUTES = '* !diff !filter\n';

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
  mkdirSync(path.join(dir, 'info'), { mode: 0o700 });
  for (const { from, file } of COPIED) {
    let content = readRegularFile(path.join(source[from], file));
    if (file === ATTRIBUTES_FILE) content = withJudgeAttributes(content);
    if (content !== null) writeFileSync(path.join(dir, file), content, { mode: 0o600 });
  }
  const temporary = path.join(dir, `${HEAD_FILE}.${process.pid}.tmp`);
  writeFileSync(temporary, HEAD_TEXT, { mode: 0o600 });
  renameSync(temporary, path.join(dir, HEAD_FILE));
}

// The repository's own info/attributes (if any) with goald's line after it, on a line of its own.
function withJudgeAttributes(own: Buffer | null): Buffer {
  const separator = own === null || own.length === 0 || own[own.length - 1] === 0x0a ? '' : '\n';
  return Buffer.concat([own ?? Buffer.alloc(0), Buffer.from(`${separator}${JUDGE_ATTRIBUTES}`)]);
}

/**
 * Whether `gitDir` is a snapshot git directory whose `info/attributes` ends with goald's line: git run with
 * it (as GIT_DIR) runs no filter driver, whatever any configuration or `.gitattributes` names, since that
 * file outranks every other source of attributes and its last line wins. Read each time rather than taken
 * from where the directory came from: one made by a goald before the line existed has no such guarantee.
 */
export function unsetsEveryFilter(gitDir: string): boolean {
  const attributes = readRegularFile(path.join(gitDir, ATTRIBUTES_FILE));
  const last = Buffer.from(JUDGE_ATTRIBUTES);
  if (attributes === null || attributes.length < last.length) return false;
  const endsWithLine = attributes.length === last.length || attributes[attributes.length - last.length - 1] === 0x0a;
  return endsWithLine && attributes.subarray(attributes.length - last.length).equals(last);
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
