// The cross-process lock around every read-modify-write of state.json. lowdb has no cross-process
// safety, and a `--foreground` goal and the daemon may both write, so each update holds this lock and
// re-reads the file first.
//
// The lock is a directory made with mkdir (atomic on every filesystem, NFS included), as proper-lockfile
// makes it, with its rules: a lock whose mtime is older than `staleMs` belongs to a dead process and is
// taken over; the holder refreshes the mtime every staleMs/2, and finds the lock compromised when the
// mtime is no longer the one it set (another process took it over) or the directory is gone. goald's own
// ~100 lines instead of that package: it loaded graceful-fs (which patches node:fs's close functions for
// the whole process) and signal-exit (which wraps process.emit and listens to every signal) into every
// goald process, and built a synchronous fs wrapper on each acquisition, on the path of every turn.

import { mkdirSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { isErrnoCode } from '../src/errno.js';
import { GoaldError } from '../src/errors.js';
import { STATE_FILE_NAME } from './paths.js';

// A lock whose mtime is 10 s old belongs to a dead process and may be taken. The holder refreshes it every
// stale/2 = 5 s, so a live holder is never robbed.
const LOCK_STALE_MS = 10_000;
// Backoff 5 ms × 1.3ⁿ capped at 100 ms (× a random 1–2): quick under brief contention, and the whole
// schedule (≈ 20–30 s) outlasts LOCK_STALE_MS so a lock left by a crashed process is taken over.
const LOCK_RETRIES = 200;
const BACKOFF = { factor: 1.3, minMs: 5, maxMs: 100 } as const;

export interface StateLockOptions {
  /** Attempts after the first before giving up with `state-locked` (default LOCK_RETRIES). */
  retries?: number;
  /** Age at which a lock counts as abandoned (default LOCK_STALE_MS). */
  staleMs?: number;
}

/** The lock's own path: a directory made with mkdir (atomic on every filesystem). */
function stateLockPath(home: string): string {
  return join(home, `${STATE_FILE_NAME}.lock`);
}

/** A lock this process holds. */
interface HeldLock {
  readonly path: string;
  /** The mtime this process last gave the lock, as the filesystem keeps it. */
  mtimeMs: number;
  compromised: boolean;
  refresh: NodeJS.Timeout | undefined;
}

// Locks held now: a process that exits while holding one (an uncaught error, process.exit) removes it, so
// the next writer does not wait out the stale period. (A killed process's lock goes stale instead.)
const held = new Set<HeldLock>();
let exitHookInstalled = false;

/** Runs `task` while holding the state lock of `home`; `isCompromised()` tells whether the lock was lost. */
export async function withStateLock<T>(
  home: string,
  task: (isCompromised: () => boolean) => Promise<T>,
  options: StateLockOptions = {},
): Promise<T> {
  const lockPath = stateLockPath(home);
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const retries = options.retries ?? LOCK_RETRIES;
  // Uncontended (the usual case): taken at once with synchronous calls, no trip through the thread pool.
  let lock = tryAcquire(lockPath, staleMs);
  for (let attempt = 0; lock === null && attempt < retries; attempt += 1) {
    const delay = Math.min(BACKOFF.maxMs, BACKOFF.minMs * BACKOFF.factor ** attempt) * (1 + Math.random());
    await new Promise((resolve) => setTimeout(resolve, delay));
    lock = tryAcquire(lockPath, staleMs);
  }
  if (lock === null) {
    throw new GoaldError(
      'state-locked',
      `${join(home, STATE_FILE_NAME)} is locked by another goald process`,
      `retry in a moment; if no goald process is running, remove ${lockPath} (locks older than ${staleMs / 1000} s are taken over automatically)`,
    );
  }
  const acquired = lock;
  keepFresh(acquired, staleMs);
  try {
    return await task(() => acquired.compromised);
  } finally {
    release(acquired);
  }
}

// Makes the lock directory; null while a live holder has it. A stale one is removed and made again, once.
function tryAcquire(path: string, staleMs: number): HeldLock | null {
  if (!makeLockDir(path)) {
    let stats;
    try {
      stats = statSync(path);
    } catch (error) {
      // Released between our mkdir and stat: the next attempt may take it.
      if (isErrnoCode(error, 'ENOENT')) return null;
      throw error;
    }
    if (Date.now() - stats.mtimeMs <= staleMs) return null;
    try {
      rmdirSync(path);
    } catch (error) {
      if (!isErrnoCode(error, 'ENOENT')) throw error;
    }
    if (!makeLockDir(path)) return null; // another process took it over first
  }
  // mkdir has just set the mtime to now: read back, it is the one to find at the next refresh.
  const lock: HeldLock = { path, mtimeMs: statSync(path).mtimeMs, compromised: false, refresh: undefined };
  held.add(lock);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const lock of held) release(lock);
    });
  }
  return lock;
}

// mkdir of the lock directory: true when this process made it, false when it exists.
function makeLockDir(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (error) {
    if (isErrnoCode(error, 'EEXIST')) return false;
    throw error;
  }
}

// Sets the lock's mtime to now; returns it as the filesystem keeps it (its precision may be coarser).
function touch(path: string): number {
  const now = new Date();
  utimesSync(path, now, now);
  return statSync(path).mtimeMs;
}

// Refreshes the lock every staleMs/2 while it is held; a lock whose mtime another process changed, or
// that is gone, is compromised (and no longer refreshed: it is not ours).
function keepFresh(lock: HeldLock, staleMs: number): void {
  lock.refresh = setTimeout(() => {
    lock.refresh = undefined;
    try {
      if (statSync(lock.path).mtimeMs !== lock.mtimeMs) {
        lock.compromised = true;
        return;
      }
      lock.mtimeMs = touch(lock.path);
      keepFresh(lock, staleMs);
    } catch {
      lock.compromised = true;
    }
  }, staleMs / 2);
  lock.refresh.unref();
}

// Stops refreshing and removes the lock directory, unless another process has taken it over (its mtime
// is not the one this process set).
function release(lock: HeldLock): void {
  if (!held.delete(lock)) return;
  if (lock.refresh !== undefined) clearTimeout(lock.refresh);
  if (lock.compromised) return;
  try {
    if (statSync(lock.path).mtimeMs === lock.mtimeMs) rmdirSync(lock.path);
  } catch {
    // gone already, or not empty (not a lock of ours)
  }
}
