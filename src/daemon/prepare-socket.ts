// Gets the control socket's path ready before the server listens: a private parent directory, and no
// stale socket file left by a daemon that died. A socket something still answers on is never taken over.

import { chmod, lstat, mkdir, stat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { dirname } from 'node:path';

import { GoaldError } from '../errors.js';

// Long enough for a busy daemon to accept, short enough that a start is not held up by a hung one (which
// counts as live anyway).
const PROBE_TIMEOUT_MS = 1_000;

const PRIVATE_DIR_MODE = 0o700;
const STICKY_BIT = 0o1000;

type ProbeResult = 'live' | 'stale' | { unreachable: string };

/** Creates the socket's parent directory as 0700, or tightens an existing one that is ours to 0700. */
export async function ensurePrivateSocketDir(socketPath: string): Promise<void> {
  const dir = dirname(socketPath);
  const created = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const stats = await stat(dir);
  if (!stats.isDirectory()) {
    throw new GoaldError('config', `the socket's parent ${dir} is not a directory`, 'set GOALD_SOCKET to a path in a directory you own');
  }
  if ((stats.mode & 0o777) === PRIVATE_DIR_MODE) return;
  // Tighten only a directory that is goald's to tighten: ours, and not a shared one (sticky, like /tmp)
  // or the user's home, where a GOALD_SOCKET may legitimately sit; there the socket's own 0600 protects it.
  const ours = stats.uid === process.getuid?.();
  const shared = (stats.mode & STICKY_BIT) !== 0 || dir === homedir() || dir === '/';
  if (created !== undefined || (ours && !shared)) await chmod(dir, PRIVATE_DIR_MODE);
}

/** Removes a stale socket file at `socketPath`; throws `conflict` when a daemon still answers there. */
export async function clearStaleSocket(socketPath: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = (await lstat(socketPath)).isSocket();
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (!isSocket) {
    throw new GoaldError('config', `${socketPath} exists and is not a socket`, 'remove it, or set GOALD_SOCKET to another path');
  }
  const probe = await probeSocket(socketPath);
  if (probe === 'live') {
    throw new GoaldError(
      'conflict',
      `another goald daemon is already listening on ${socketPath}`,
      'stop it with `goald daemon stop`, or set GOALD_HOME or GOALD_SOCKET to run a separate one',
    );
  }
  if (probe !== 'stale') {
    throw new GoaldError(
      'config',
      `cannot tell whether the socket ${socketPath} is in use (${probe.unreachable})`,
      'remove the file if no goald daemon is running, or set GOALD_SOCKET to another path',
    );
  }
  // Between the probe and here another daemon could bind a new socket at this path; the daemon's home lock
  // (lifecycle) is what keeps two daemons from racing, this only clears the leftovers of a dead one.
  try {
    await unlink(socketPath);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Connects to `socketPath` once: `live` when something accepts, `stale` when nothing listens. */
function probeSocket(socketPath: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    const finish = (result: ProbeResult): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    // A listener too busy (or hung) to accept within the timeout is still a listener: never steal it.
    const timer = setTimeout(() => finish('live'), PROBE_TIMEOUT_MS);
    socket.once('connect', () => finish('live'));
    socket.once('error', (error) => {
      const code = errorCode(error);
      if (code === 'ECONNREFUSED' || code === 'ENOENT') finish('stale');
      // A full accept backlog means something listens.
      else if (code === 'EAGAIN') finish('live');
      else finish({ unreachable: code ?? error.message });
    });
  });
}

function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object' || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}
