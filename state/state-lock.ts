// The cross-process lock around every read-modify-write of state.json. lowdb has no cross-process
// safety, and a `--foreground` goal and the daemon may both write, so each update holds this lock and
// re-reads the file first.

import lockfile from 'proper-lockfile';
import { join } from 'node:path';
import { isErrnoCode } from '../src/errno.js';
import { GoaldError } from '../src/errors.js';
import { STATE_FILE_NAME } from './paths.js';

// proper-lockfile's default: a lock whose mtime is 10 s old belongs to a dead process and may be taken.
// The holder refreshes it every stale/2 = 5 s, so a live holder is never robbed.
const LOCK_STALE_MS = 10_000;
// Backoff 5 ms × 1.3ⁿ capped at 100 ms (× a random 1–2): quick under brief contention, and the whole
// schedule (≈ 20–30 s) outlasts LOCK_STALE_MS so a lock left by a crashed process is taken over.
const LOCK_RETRIES = 200;

export interface StateLockOptions {
  /** Attempts after the first before giving up with `state-locked` (default LOCK_RETRIES). */
  retries?: number;
  /** Age at which a lock counts as abandoned (default LOCK_STALE_MS). */
  staleMs?: number;
}

/** The lock's own path: a directory proper-lockfile creates with mkdir (atomic on every filesystem). */
function stateLockPath(home: string): string {
  return join(home, `${STATE_FILE_NAME}.lock`);
}

/** Runs `task` while holding the state lock of `home`; `isCompromised()` tells whether the lock was lost. */
export async function withStateLock<T>(
  home: string,
  task: (isCompromised: () => boolean) => Promise<T>,
  options: StateLockOptions = {},
): Promise<T> {
  const lockPath = stateLockPath(home);
  let compromised = false;
  // The lock target is the home directory itself, which always exists (state.json may not yet).
  const lockOptions = {
    lockfilePath: lockPath,
    // The lock is the directory at lockfilePath, named outright; resolving `home` through realpath on every
    // update (a dozen lstat calls, ~0.5 ms) would change only the key of proper-lockfile's in-process map.
    realpath: false,
    stale: options.staleMs ?? LOCK_STALE_MS,
    // The default throws from a timer and kills the process; record it and refuse to write instead.
    onCompromised: () => {
      compromised = true;
    },
  };
  let release: () => Promise<void> | void;
  try {
    // Uncontended (the usual case): taken at once with synchronous calls, no trip through the thread pool.
    release = lockfile.lockSync(home, lockOptions);
  } catch (first) {
    if (!isErrnoCode(first, 'ELOCKED')) throw first;
    try {
      release = await lockfile.lock(home, {
        ...lockOptions,
        retries: {
          retries: options.retries ?? LOCK_RETRIES,
          factor: 1.3,
          minTimeout: 5,
          maxTimeout: 100,
          randomize: true,
        },
      });
    } catch (error) {
      if (isErrnoCode(error, 'ELOCKED')) {
        throw new GoaldError(
          'state-locked',
          `${join(home, STATE_FILE_NAME)} is locked by another goald process`,
          `retry in a moment; if no goald process is running, remove ${lockPath} (locks older than ${
            (options.staleMs ?? LOCK_STALE_MS) / 1000
          } s are taken over automatically)`,
          { cause: error },
        );
      }
      throw error;
    }
  }
  try {
    return await task(() => compromised);
  } finally {
    // A compromised lock may already be gone or someone else's; releasing it would fail (ERELEASED).
    try {
      await release();
    } catch {
      // already released or taken over
    }
  }
}
