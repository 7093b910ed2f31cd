// Writes that survive a crash or power loss: a unique temp file in the same directory, fsync, rename
// over the target, fsync the directory (the rename itself lives in the directory's metadata).

import { open, readdir, rename, unlink } from 'node:fs/promises';
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

/** Flushes a directory entry change (create, rename) to disk. */
async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some filesystems refuse fsync on a directory; the rename is still atomic, only less durable.
    if (!isErrnoCode(error, 'EINVAL') && !isErrnoCode(error, 'EISDIR')) throw error;
  } finally {
    await handle.close();
  }
}

export interface DurableWriteOptions {
  /**
   * false: the content is flushed before the rename (so the file is never torn or empty), but the rename
   * itself is not, so a power loss may bring back the previous version. Default true.
   */
  syncDirectory?: boolean;
}

/** Atomically replaces `path` with `content` (mode 0600), durable once it resolves. */
export async function writeFileDurable(path: string, content: string | Uint8Array, options: DurableWriteOptions = {}): Promise<void> {
  const temp = tempPathFor(path);
  try {
    const handle = await open(temp, 'wx', FILE_MODE);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (options.syncDirectory !== false) await fsyncDirectory(dirname(path));
}

/** Removes temp files of `path` left by writers that died mid-write; returns how many were removed. */
export async function removeOrphanTempFiles(path: string): Promise<number> {
  const prefix = `.${basename(path)}.`;
  let removed = 0;
  for (const name of await readdir(dirname(path))) {
    const match = name.startsWith(prefix) ? /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (match === null || isProcessAlive(Number(match[1]))) continue;
    await unlink(join(dirname(path), name)).catch(() => undefined);
    removed += 1;
  }
  return removed;
}
