// One daemon per GOALD_HOME. On Linux the lock is held by the kernel: an abstract Unix socket (no file;
// it vanishes when its process dies, however it dies) whose name comes from a random secret kept in
// GOALD_HOME, so two daemons racing on one home can never both hold it, a kill -9ed daemon's lock is
// free at once, and no other user (who cannot read the secret) can squat on it. The pid file beside it
// only says who holds the lock. Elsewhere (no abstract sockets) the pid file is the lock: created
// exclusively, a stale one (dead pid, or a pid reused by another program) replaced.

import { readFileSync } from 'node:fs';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isErrnoCode } from '../errno.js';
import { GoaldError } from '../errors.js';
import { isProcessAlive } from '../process/process-identity.js';

const DAEMON_LOCK_FILE_NAME = 'daemon.pid';
const LOCK_SECRET_FILE_NAME = 'daemon.lock-id';
const HINT_RUNNING = 'use it, or stop it first with: goald daemon stop';

/** Takes the home's daemon lock; resolves with its release function. Throws `conflict` when it is held. */
export async function acquireDaemonLock(home: string): Promise<() => Promise<void>> {
  const lockPath = path.join(home, DAEMON_LOCK_FILE_NAME);
  if (process.platform !== 'linux') return acquirePidFileLock(lockPath, home);
  const server = await listenOnLockName(await lockName(home), lockPath, home);
  // The holder writes its pid; it alone writes the file while it holds the lock, so no race.
  const draft = `${lockPath}.${process.pid}.tmp`;
  await writeFile(draft, `${process.pid}\n`, { mode: 0o600 });
  await rename(draft, lockPath);
  return async () => {
    const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
    if (owner === process.pid) await unlink(lockPath).catch(() => undefined);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

// `\0goald-<secret>`: the leading NUL puts it in Linux's abstract socket namespace.
async function lockName(home: string): Promise<string> {
  const secretPath = path.join(home, LOCK_SECRET_FILE_NAME);
  const existing = await readSecret(secretPath);
  if (existing !== null) return `\0goald-${existing}`;
  // Created once, atomically with its content (link of a private draft): racing first daemons agree on one.
  const secret = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16))).toString('hex');
  const draft = `${secretPath}.${process.pid}.tmp`;
  await writeFile(draft, `${secret}\n`, { mode: 0o600 });
  try {
    await link(draft, secretPath);
  } catch (error) {
    if (!isErrnoCode(error, 'EEXIST')) throw error;
  } finally {
    await unlink(draft).catch(() => undefined);
  }
  const agreed = await readSecret(secretPath);
  if (agreed === null) throw new GoaldError('config', `${secretPath} is not a goald lock id`, `remove it; the next daemon writes a new one`);
  return `\0goald-${agreed}`;
}

async function readSecret(secretPath: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(secretPath, 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return null;
    throw error;
  }
  const secret = text.trim();
  if (!/^[0-9a-f]{32}$/.test(secret)) throw new GoaldError('config', `${secretPath} is not a goald lock id`, `remove it; the next daemon writes a new one`);
  return secret;
}

function listenOnLockName(name: string, lockPath: string, home: string): Promise<Server> {
  const { createServer } = process.getBuiltinModule('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error) => {
      if (isErrnoCode(error, 'EADDRINUSE')) void heldLockError(lockPath, home).then(reject);
      else reject(error);
    });
    server.listen({ path: name }, () => {
      // The lock must not keep a daemon that is done alive.
      server.unref();
      resolve(server);
    });
  });
}

// The holder writes its pid just after it takes the lock: a daemon that lost a race waits this long for it.
const HOLDER_PID_WAIT_MS = 2_000;

// The lock is held (its abstract socket is in use): the error names the holder once its pid is in the file.
async function heldLockError(lockPath: string, home: string): Promise<GoaldError> {
  const deadline = Date.now() + HOLDER_PID_WAIT_MS;
  let pid = readHolderPid(lockPath);
  while (pid === null && Date.now() < deadline) {
    await delay(10);
    pid = readHolderPid(lockPath);
  }
  return new GoaldError('conflict', `a goald daemon${pid === null ? '' : ` (pid ${pid})`} already runs for ${home}`, HINT_RUNNING);
}

// The live pid in the lock's pid file; null before the holder wrote it, or while it still names a daemon
// that died (kill -9) and the new holder has not replaced it yet.
function readHolderPid(lockPath: string): number | null {
  try {
    const pid = Number(readFileSync(lockPath, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

// ---- the pid-file lock, where there are no abstract sockets -------------------------------------------

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

async function acquirePidFileLock(lockPath: string, home: string): Promise<() => Promise<void>> {
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
        throw new GoaldError('conflict', `a goald daemon (pid ${holder}) already runs for ${home}`, HINT_RUNNING);
      }
      await unlink(lockPath).catch(() => undefined);
    }
  }
  throw new GoaldError('conflict', `could not take the daemon lock ${lockPath}`, 'another daemon may be starting; try again');
}
