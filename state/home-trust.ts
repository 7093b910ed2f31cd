// goald trusts only what its own uid owns. Another user who can write to GOALD_HOME, to the socket's
// directory or to state.json can swap the state for one whose goals run their commands as you, or put
// their own socket where the CLI will send your requests. Such a path is refused, never repaired: goald
// does not chmod a directory it did not create (it may be shared on purpose); the error says what to run.

import type { Stats } from 'node:fs';
import { dirname } from 'node:path';

import { GoaldError } from '../src/errors.js';
import { isErrnoCode } from '../src/errno.js';
import { stateFilePath } from './paths.js';

// node:fs is loaded on first use, not imported: the CLI's socket check runs on `goald status`'s fast path,
// which never loads node:fs as an ES module (that also loads fs/promises and readline).
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');

const PRIVATE_DIR_MODE = 0o700;
const GROUP_OTHER_WRITE = 0o022;
const STICKY_BIT = 0o1000;
const ROOT_UID = 0;

/** Where a refused path came from, as the error line names it. */
type TrustedPathRole = 'GOALD_HOME' | 'the socket directory' | 'state.json' | 'the socket';

/** This process's uid; undefined where the platform has none (Windows): nothing is checked there. */
function currentUid(): number | undefined {
  return process.getuid?.();
}

/** Throws unless `stats` belong to this user and group/others cannot write; `sticky` admits /tmp-like dirs. */
function assertOwned(path: string, stats: Stats, role: TrustedPathRole, options: { sticky?: boolean } = {}): void {
  const uid = currentUid();
  if (uid === undefined) return;
  // A sticky directory that root or we own (/tmp, /run/user) lets nobody else remove or rename our socket.
  const sharedSticky = options.sticky === true && (stats.mode & STICKY_BIT) !== 0 && (stats.uid === uid || stats.uid === ROOT_UID);
  if (sharedSticky) return;
  if (stats.uid !== uid) {
    throw new GoaldError(
      'config',
      `${role} ${path} is owned by uid ${stats.uid}, not by you (uid ${uid}); goald refuses to use it`,
      role === 'GOALD_HOME' ? 'set GOALD_HOME to a directory of your own' : `remove it, or set GOALD_HOME/GOALD_SOCKET to a path of your own`,
    );
  }
  if ((stats.mode & GROUP_OTHER_WRITE) !== 0) {
    throw new GoaldError(
      'config',
      `${role} ${path} is writable by group or others (mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')}); goald refuses to use it`,
      `make it private: chmod go-w ${path}`,
    );
  }
}

/**
 * Makes sure `dir` is a directory only this user can write: a missing one is created 0700 (with its
 * missing parents), an existing one is checked and never changed. Throws a `config` GoaldError naming it.
 */
export function ensureTrustedDirectory(dir: string, role: 'GOALD_HOME' | 'the socket directory'): void {
  try {
    fs().mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    // A parent is a file (ENOTDIR), unwritable (EACCES) or the disk is read-only: no daemon can live there.
    const why = isErrnoCode(error, 'ENOTDIR') || isErrnoCode(error, 'EEXIST') ? 'a parent of it is not a directory' : error instanceof Error ? error.message : String(error);
    throw new GoaldError('config', `${role} ${dir} cannot be created (${why})`, 'point GOALD_HOME (or GOALD_SOCKET) at a directory of your own');
  }
  const stats = fs().statSync(dir);
  if (!stats.isDirectory()) {
    throw new GoaldError('config', `${role} ${dir} is not a directory`, 'point GOALD_HOME (or GOALD_SOCKET) at a directory of your own');
  }
  assertOwned(dir, stats, role, { sticky: role === 'the socket directory' });
}

/** Checks GOALD_HOME (created 0700 when missing) and, when it exists, its state.json. */
export function ensureTrustedHome(home: string): void {
  ensureTrustedDirectory(home, 'GOALD_HOME');
  const stateFile = stateFilePath(home);
  let stats: Stats;
  try {
    stats = fs().lstatSync(stateFile);
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return;
    throw error;
  }
  if (!stats.isFile()) {
    throw new GoaldError('config', `state.json ${stateFile} is not a regular file`, `move it away; goald writes a new one`);
  }
  assertOwned(stateFile, stats, 'state.json');
}

/**
 * Checks, before the CLI sends anything, that the socket at `socketPath` (if there is one) and its
 * directory belong to this user and that nobody else can write to either. Throws a `config` GoaldError.
 */
export function assertTrustedSocket(socketPath: string): void {
  let stats: Stats;
  try {
    stats = fs().lstatSync(socketPath);
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT') || isErrnoCode(error, 'ENOTDIR')) return; // no daemon: nothing to trust yet
    throw error;
  }
  const dir = dirname(socketPath);
  assertOwned(dir, fs().statSync(dir), 'the socket directory', { sticky: true });
  if (!stats.isSocket()) {
    throw new GoaldError('config', `${socketPath} is not a socket`, 'remove it, or set GOALD_SOCKET to another path');
  }
  assertOwned(socketPath, stats, 'the socket');
}
