// One daemon per GOALD_HOME: a pid file created exclusively. A leftover file from a dead daemon (or from
// a pid now used by an unrelated process) is stale and replaced; a live daemon is never displaced.

import { readFileSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isErrnoCode } from '../errno.js';
import { GoaldError } from '../errors.js';
import { isProcessAlive } from '../process/process-identity.js';

const DAEMON_LOCK_FILE_NAME = 'daemon.pid';

function isGoaldProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  try {
    // A reused pid belongs to some other program: only a goald daemon's command line holds the lock.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('daemon');
  } catch {
    return true; // no /proc: trust the pid
  }
}

/** Takes the home's daemon lock; resolves with its release function. */
export async function acquireDaemonLock(home: string): Promise<() => Promise<void>> {
  const lockPath = path.join(home, DAEMON_LOCK_FILE_NAME);
  // The pid is written to a private file first and then linked into place: link() creates the lock
  // atomically *with* its content, so a daemon starting at the same moment never reads an empty lock and
  // mistakes it for a stale one.
  const draft = `${lockPath}.${process.pid}.tmp`;
  await writeFile(draft, `${process.pid}\n`, { mode: 0o600 });
  try {
    return await linkLock(draft, lockPath, home);
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

async function linkLock(draft: string, lockPath: string, home: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await link(draft, lockPath);
      return async () => {
        const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
        if (owner === process.pid) await unlink(lockPath).catch(() => undefined);
      };
    } catch (error) {
      if (!isErrnoCode(error, 'EEXIST')) throw error;
      const holder = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isGoaldProcess(holder)) {
        throw new GoaldError(
          'conflict',
          `a goald daemon (pid ${holder}) already runs for ${home}`,
          'use it, or stop it first with: goald daemon stop',
        );
      }
      await unlink(lockPath).catch(() => undefined);
    }
  }
  throw new GoaldError('conflict', `could not take the daemon lock ${lockPath}`, 'another daemon may be starting; try again');
}
