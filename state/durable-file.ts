// Writes that survive a crash or power loss: a unique temp file in the same directory, fsync, rename
// over the target, fsync the directory (the rename itself lives in the directory's metadata).
// The small steps (open, write, rename, close) are synchronous system calls on a local file of a few KiB;
// only the fsyncs, which wait for the disk, go to libuv's thread pool. Each asynchronous step costs a
// round trip through that pool, which on a loaded machine is most of a write's time.

import { closeSync, fsync, openSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isErrnoCode } from '../src/errno.js';
import { isProcessAlive } from '../src/process/process-identity.js';

const FILE_MODE = 0o600;

let tempCount = 0;

/** A temp path beside `path`, unique across processes and concurrent writers. */
export function tempPathFor(path: string): string {
  // pid + a count: unique among live writers; the random part keeps a dead process's leftover (same pid,
  // reused) from colliding. Not node:crypto: loading it costs the CLI's start more than it buys here.
  tempCount += 1;
  const unique = `${tempCount.toString(16)}${Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0')}`;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${unique}.tmp`);
}

/** fsync(2) of an open file descriptor, off the event loop. */
export function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fsync(fd, (error) => (error ? reject(error) : resolve()));
  });
}

/** Flushes a directory entry change (create, rename) to disk. */
async function fsyncDirectory(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } catch (error) {
    // Some filesystems refuse fsync on a directory; the rename is still atomic, only less durable.
    if (!isErrnoCode(error, 'EINVAL') && !isErrnoCode(error, 'EISDIR')) throw error;
  } finally {
    closeSync(fd);
  }
}

export interface DurableWriteOptions {
  /**
   * false: the content is flushed before the rename (so the file is never torn or empty), but the rename
   * itself is not, so a power loss may bring back the previous version. Default true.
   */
  syncDirectory?: boolean;
  /** Awaited after the new content is flushed and before the rename; a rejection leaves `path` as it was. */
  after?: Promise<unknown>;
  /** Called with the new file's descriptor once its content is flushed, before the rename. */
  onFlushed?: (fd: number) => void;
}

/** Atomically replaces `path` with `content` (mode 0600), durable once it resolves. */
export async function writeFileDurable(path: string, content: string | Uint8Array, options: DurableWriteOptions = {}): Promise<void> {
  const temp = tempPathFor(path);
  try {
    const fd = openSync(temp, 'wx', FILE_MODE);
    try {
      writeFileSync(fd, content);
      await fsyncFd(fd);
      options.onFlushed?.(fd);
    } finally {
      closeSync(fd);
    }
    await options.after;
    renameSync(temp, path);
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
  if (options.syncDirectory !== false) await fsyncDirectory(dirname(path));
}

/**
 * Replaces `path` whole (a temp file renamed over it) without fsync: for a file only a crash of this
 * process needs to find, which a power loss makes moot (state/running-checks.ts).
 */
export function replaceFileSync(path: string, content: string): void {
  const temp = tempPathFor(path);
  try {
    writeFileSync(temp, content, { mode: FILE_MODE, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
}

function discardTemp(temp: string): void {
  try {
    unlinkSync(temp);
  } catch {
    // never created, or already renamed
  }
}

/**
 * Removes temp files of `paths` (all in one directory) left by writers that died mid-write; returns how
 * many were removed. Synchronous: one listing of a small directory, on the way to every command's write.
 */
export function removeOrphanTempFiles(paths: readonly string[]): number {
  const [first] = paths;
  if (first === undefined) return 0;
  const dir = dirname(first);
  const prefixes = paths.map((path) => `.${basename(path)}.`);
  let removed = 0;
  for (const name of readdirSync(dir)) {
    // (`.state.json.` is also the start of `.state.json.bak.`'s temp files: each prefix is tried.)
    const match = prefixes.map((prefix) => (name.startsWith(prefix) ? /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length)) : null)).find((found) => found !== null) ?? null;
    if (match === null || isProcessAlive(Number(match[1]))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // removed meanwhile by another process cleaning up
    }
    removed += 1;
  }
  return removed;
}
