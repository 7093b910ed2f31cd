// Gets the control socket's path ready before the server listens: a private parent directory, and no
// stale socket file left by a daemon that died. A socket something still answers on is never taken over.

import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname } from 'node:path';

import { ensureTrustedDirectory } from '../../state/home-trust.js';
import { GoaldError } from '../errors.js';

// Long enough for a busy daemon to accept, short enough that a start is not held up by a hung one (which
// counts as live anyway).
const PROBE_TIMEOUT_MS = 1_000;

type ProbeResult = 'live' | 'stale' | { unreachable: string };

/**
 * Creates the socket's parent directory as 0700, or checks that an existing one is this user's and that
 * group/others cannot write it (a sticky one such as /tmp is admitted). An existing directory is never
 * chmodded: a refusal says what to run instead.
 */
export async function ensurePrivateSocketDir(socketPath: string): Promise<void> {
  ensureTrustedDirectory(dirname(socketPath), 'the socket directory');
  return Promise.resolve();
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
