// The first CLI command that needs the daemon starts it, detached (PM2-style), with its log in
// GOALD_HOME/daemon.log (written and rotated by the daemon, daemon-log.ts; stderr goes there too, for what
// only a crash prints), and waits for /v1/ping — or, when the daemon exits instead (a corrupt state file,
// a home it refuses), says so at once with the last line it logged.

import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ensureTrustedDirectory, ensureTrustedHome } from '../../state/home-trust.js';
import { resolveGoaldHome, resolveSocketPath } from '../../state/paths.js';
import { goaldEntryPath } from '../cli/goald-entry.js';
import { EXIT, GoaldError } from '../errors.js';
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

// How much of the end of daemon.log is read for the line a daemon that died at start left there.
const LOG_TAIL_BYTES = 4 * 1024;

/** Starts the daemon detached in the background, logging to `logFile`. */
async function spawnDetachedDaemon(env: NodeJS.ProcessEnv, home: string, logFile: string): Promise<ChildProcess> {
  // Loaded here, not at the top: commands that only talk to a running daemon (`goald status`) skip them
  // (node:fs as an ES module also loads fs/promises and readline).
  const { spawn } = process.getBuiltinModule('node:child_process');
  const { openSync, closeSync } = process.getBuiltinModule('node:fs');
  const logFd = openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, goaldEntryPath(), 'daemon', '--foreground', '--log-file', logFile], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env,
      cwd: home,
    });
    child.unref();
    return child;
  } finally {
    closeSync(logFd);
  }
}

/** A client for a daemon that is running, starting one first when none answers. */
export async function ensureDaemon(env: NodeJS.ProcessEnv): Promise<DaemonClient> {
  const socketPath = daemonSocketPath(env);
  if (!(await isDaemonAlive(socketPath))) {
    const home = resolveGoaldHome(env);
    // Refused here, before anything is spawned, with the same line the daemon would log.
    ensureTrustedHome(home);
    ensureTrustedDirectory(path.dirname(socketPath), 'the socket directory');
    const logFile = path.join(home, 'daemon.log');
    const logOffset = fileSize(logFile);
    const child = await spawnDetachedDaemon(env, home, logFile);
    await waitForStart(child, socketPath, logFile, logOffset);
  }
  return createDaemonClient(socketPath);
}

/**
 * Waits for the spawned daemon to answer; if it exits first, throws with the line it logged. `logOffset`
 * is where daemon.log ended before the spawn: only what was written since is read.
 */
async function waitForStart(child: ChildProcess, socketPath: string, logFile: string, logOffset: number): Promise<void> {
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  const exited = new AbortController();
  const onExit = (): void => exited.abort();
  child.once('exit', onExit);
  try {
    await waitForDaemon(socketPath, { timeoutMs: DAEMON_START_TIMEOUT_MS, signal: exited.signal });
    return;
  } catch (error) {
    if (!exited.signal.aborted) throw error;
  } finally {
    child.off('exit', onExit);
  }
  // The log is shared: a daemon that won the lock may already be logging requests after the line ours
  // left, so the lines since the spawn are searched, not only the last one.
  const outcome = readStartLog(readLinesSince(logFile, logOffset));
  if (outcome.lostTheLock) {
    await waitForDaemon(socketPath, { timeoutMs: Math.max(0, deadline - Date.now()) });
    return;
  }
  const lastLine = outcome.line;
  const how = child.signalCode !== null ? `was killed by ${child.signalCode}` : `exited with code ${String(child.exitCode)}`;
  throw new GoaldError(
    child.exitCode === EXIT.usage ? 'config' : 'daemon-unreachable',
    `the goald daemon exited at start (it ${how}): ${lastLine === '' ? 'it logged nothing' : lastLine}`,
    `see ${logFile}`,
  );
}

/**
 * What the lines a daemon log gained since a spawn say about a daemon that exited at start: whether it
 * lost the lock to one started at the same moment (which will answer), and the line that explains it.
 */
export function readStartLog(lines: readonly string[]): { lostTheLock: boolean; line: string } {
  const lostTheLock = lines.some((line) => line.includes('already runs for'));
  // A start error is printed as `goald: <message>`; the request lines of a daemon that did start are not.
  const line = lines.findLast((candidate) => candidate.startsWith('goald:')) ?? lines.at(-1) ?? '';
  return { lostTheLock, line };
}

/** The size of a file, 0 when it does not exist yet. */
function fileSize(file: string): number {
  const { statSync } = process.getBuiltinModule('node:fs');
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/** The non-empty lines written to a log file after `offset` (at most its last few KB; [] when unreadable). */
function readLinesSince(file: string, offset: number): string[] {
  const { openSync, readSync, fstatSync, closeSync } = process.getBuiltinModule('node:fs');
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    // A rotation since the spawn shrinks the file: then all of it is new.
    const start = Math.max(size < offset ? 0 : offset, size - LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    return buffer
      .toString('utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
  } finally {
    closeSync(fd);
  }
}

/** A client for the running daemon, or null when none answers (never starts one). */
export async function connectIfRunning(env: NodeJS.ProcessEnv): Promise<DaemonClient | null> {
  const socketPath = daemonSocketPath(env);
  return (await isDaemonAlive(socketPath)) ? createDaemonClient(socketPath) : null;
}
