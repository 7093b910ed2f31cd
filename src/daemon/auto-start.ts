// The first CLI command that needs the daemon starts it, detached (PM2-style), with its log in
// GOALD_HOME/daemon.log (written and rotated by the daemon, daemon-log.ts; stderr goes there too, for what
// only a crash prints), and waits for /v1/ping.

import path from 'node:path';
import { resolveGoaldHome, resolveSocketPath } from '../../state/paths.js';
import { goaldEntryPath } from '../cli/goald-entry.js';
import { createDaemonClient, isDaemonAlive, waitForDaemon, type DaemonClient } from './client.js';
import { checkSocketPath } from './socket-path.js';

const DAEMON_START_TIMEOUT_MS = 15_000; // first start on a cold disk loads the SDKs; generous but bounded
/**
 * V8 flags the daemon runs with: a long-lived, mostly idle process favours memory over peak speed (the
 * heavy work happens in agent, git and check child processes). Together they keep ~5 MB off its idle RSS
 * (bench/daemon.bench.ts); the 1 MB young generation costs a few more, cheap scavenges.
 */
export const DAEMON_NODE_FLAGS = ['--optimize-for-size', '--max-semi-space-size=1'] as const;

/** The socket path for this environment (validated for length). */
export function daemonSocketPath(env: NodeJS.ProcessEnv): string {
  const socketPath = resolveSocketPath(env, resolveGoaldHome(env));
  checkSocketPath(socketPath);
  return socketPath;
}

/** Starts the daemon detached in the background; resolves with its pid. */
async function spawnDetachedDaemon(env: NodeJS.ProcessEnv): Promise<number> {
  // Loaded here, not at the top: commands that only talk to a running daemon (`goald status`) skip them
  // (node:fs as an ES module also loads fs/promises and readline).
  const [{ spawn }, { mkdirSync, openSync, closeSync }] = await Promise.all([import('node:child_process'), import('node:fs')]);
  const home = resolveGoaldHome(env);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const logFile = path.join(home, 'daemon.log');
  const logFd = openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, goaldEntryPath(), 'daemon', '--foreground', '--log-file', logFile], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env,
      cwd: home,
    });
    child.unref();
    return child.pid ?? 0;
  } finally {
    closeSync(logFd);
  }
}

/** A client for a daemon that is running, starting one first when none answers. */
export async function ensureDaemon(env: NodeJS.ProcessEnv): Promise<DaemonClient> {
  const socketPath = daemonSocketPath(env);
  if (!(await isDaemonAlive(socketPath))) {
    await spawnDetachedDaemon(env);
    await waitForDaemon(socketPath, { timeoutMs: DAEMON_START_TIMEOUT_MS });
  }
  return createDaemonClient(socketPath);
}

/** A client for the running daemon, or null when none answers (never starts one). */
export async function connectIfRunning(env: NodeJS.ProcessEnv): Promise<DaemonClient | null> {
  const socketPath = daemonSocketPath(env);
  return (await isDaemonAlive(socketPath)) ? createDaemonClient(socketPath) : null;
}
