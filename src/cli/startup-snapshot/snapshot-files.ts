// Where a start-up snapshot lives and what it was built for. bin/startup-snapshot.sh reads the same files
// with shell builtins and one `stat`, so the names and formats here are its contract too:
// GOALD_HOME/cache/startup/<key>/start.blob (0600, in a 0700 directory), beside `identity`, two lines: the
// node binary and the bundle's bin.js it was built with and for, each as GNU `stat -L -c %a:%d:%i:%s:%Y:%Z`
// prints it (mode, device, inode, size, modification and change time in seconds). A node upgraded in place
// or a goald rebuilt or reinstalled changes its line (a new inode, or a new change time), and the launcher
// then runs without the blob: a snapshot taken of other code, or loaded by another V8, is never run.

import path from 'node:path';

const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');

export const BLOB_NAME = 'start.blob';
export const IDENTITY_NAME = 'identity';
/** What the launcher exports when a start could have run from a snapshot but found none current. */
export const SNAPSHOT_WANTED_ENV = 'GOALD_STARTUP_SNAPSHOT';
export const SNAPSHOT_WANTED_VALUE = 'missing';

/**
 * The directory of the snapshot for the bundle in `bundleDir` (its real path): one per installed goald, so
 * a global install and a checkout sharing a GOALD_HOME keep one each. The name keeps the path's letters,
 * digits and `._-`, and writes each run of any other byte as one `_`, as the launcher's loop does (a
 * shell that reads characters, not bytes, still agrees); two paths that map alike share a directory, and
 * the identity file then tells whose blob it holds.
 */
export function snapshotDir(goaldHome: string, bundleDir: string): string {
  let key = '';
  for (const byte of Buffer.from(bundleDir)) {
    const char = String.fromCharCode(byte);
    if (/[A-Za-z0-9._-]/.test(char)) key += char;
    else if (!key.endsWith('_')) key += '_';
  }
  return path.join(goaldHome, 'cache', 'startup', key);
}

/** `file`'s identity as `stat -L -c %a:%d:%i:%s:%Y:%Z` prints it; null when it cannot be read. */
function fileIdentity(file: string): string | null {
  try {
    const stats = fs().statSync(file, { bigint: true });
    const seconds = (ns: bigint): bigint => ns / 1_000_000_000n;
    return `${(stats.mode & 0o7777n).toString(8)}:${stats.dev}:${stats.ino}:${stats.size}:${seconds(stats.mtimeNs)}:${seconds(stats.ctimeNs)}`;
  } catch {
    return null;
  }
}

/** True when `file` is a regular file of this user's that nobody else can read or write (0600). */
export function isPrivateFile(file: string): boolean {
  try {
    const stats = fs().lstatSync(file);
    const uid = process.getuid?.();
    return stats.isFile() && (uid === undefined || stats.uid === uid) && (stats.mode & 0o777) === 0o600;
  } catch {
    return false;
  }
}

/** The identity file's text for this node and this bundle; null when either cannot be read. */
export function currentIdentity(bundleDir: string): string | null {
  const node = fileIdentity(process.execPath);
  const bundle = fileIdentity(path.join(bundleDir, 'bin.js'));
  return node === null || bundle === null ? null : `${node}\n${bundle}\n`;
}
