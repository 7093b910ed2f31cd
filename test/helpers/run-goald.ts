// Runs the built goald binary as a real child process with an isolated GOALD_HOME, HOME and config dir.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { isProcessRunning, waitForProcessGone } from './processes.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// The bundle `npm run build` makes, which is what package.json's bin installs.
export const goaldBin = path.join(repoRoot, 'dist', 'bundle', 'bin.js');

export interface GoaldRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface GoaldSandbox {
  /** A short temp dir: GOALD_HOME lives at `<root>/h` (sockets need short paths). */
  root: string;
  home: string;
  /** The daemon's control socket, `<home>/goald.sock`. */
  socket: string;
  env: NodeJS.ProcessEnv;
  run(args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string }): Promise<GoaldRun>;
}

// V8's code cache for the bundle (src/cli/compile-cache.ts), shared by every test's goald instead of one
// cold cache per fresh GOALD_HOME (a cold run compiles from source and writes the cache at exit). Per
// checkout, beside the build it caches. test/cli/compile-cache.test.ts tries the default place.
const testCompileCache = path.join(repoRoot, 'node_modules', '.cache', 'goald', 'compile-cache');

// Variables from the developer's shell that must not leak into a test run.
const SCRUBBED = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'GOALD_HOME', 'GOALD_SOCKET', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME'];

/** A fresh GOALD_HOME/HOME for one test, removed when it finishes. */
export async function goaldSandbox(): Promise<GoaldSandbox> {
  if (!existsSync(goaldBin)) throw new Error(`${goaldBin} is missing: run \`npm run build\` first (npm test does)`);
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gd-')));
  const home = path.join(root, 'h');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('GOALD_') || name.startsWith('GIT_')) delete env[name];
  Object.assign(env, { GOALD_HOME: home, HOME: root, XDG_CONFIG_HOME: path.join(root, 'config') });
  // The fixtures signal through files beside GOALD_HOME (pid files, gates), which a sandboxed turn cannot
  // write (its /tmp is private): tests run unsandboxed unless they ask for it (test/e2e/sandbox.test.ts)
  // or the suite does (GOALD_TEST_SANDBOX: the real agent CLIs' suite runs in the sandbox).
  env.GOALD_SANDBOX = process.env.GOALD_TEST_SANDBOX ?? 'off';
  mkdirSync(testCompileCache, { recursive: true, mode: 0o700 });
  env.GOALD_COMPILE_CACHE = testCompileCache;
  const sandbox: GoaldSandbox = {
    root,
    home,
    socket: path.join(home, 'goald.sock'),
    env,
    run: (args, options = {}) =>
      new Promise<GoaldRun>((resolve, reject) => {
        const child = spawn(process.execPath, [goaldBin, ...args], {
          cwd: options.cwd ?? root,
          env: { ...env, ...options.env },
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
        child.stdin.end(options.input ?? '');
      }),
  };
  // No daemon outlives its test: stop it (and its agents) before the home it writes to is removed.
  onTestFinished(async () => {
    await stopSandboxDaemon(sandbox);
    await rm(root, { recursive: true, force: true });
  });
  return sandbox;
}

// A daemon gets this long to stop cleanly: it kills its agents first (SIGTERM, SIGKILL after 5 s).
const DAEMON_STOP_TIMEOUT_MS = 8_000;

/** The pid in `<home>/daemon.pid` when that process is a live goald daemon; null otherwise. */
export function sandboxDaemonPid(sandbox: Pick<GoaldSandbox, 'home'>): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(sandbox.home, 'daemon.pid'), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessRunning(pid)) return null;
  try {
    // A stale file may name a reused pid: only a goald process is ours to stop.
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(goaldBin)) return null;
  } catch {
    // no /proc: trust the pid file
  }
  return pid;
}

/**
 * Stops the sandbox's daemon, if one runs: `goald daemon stop`, then SIGKILL as a fallback, and kills any
 * agent group the state file still records as running.
 */
async function stopSandboxDaemon(sandbox: GoaldSandbox): Promise<void> {
  const pid = sandboxDaemonPid(sandbox);
  if (pid !== null) {
    await sandbox.run(['daemon', 'stop']).catch(() => undefined);
    if (!(await waitForProcessGone(pid, DAEMON_STOP_TIMEOUT_MS))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await waitForProcessGone(pid, DAEMON_STOP_TIMEOUT_MS);
    }
  }
  for (const agentPid of recordedAgentPids(sandbox.home)) {
    try {
      process.kill(-agentPid, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
}

function recordedAgentPids(home: string): number[] {
  try {
    const state = JSON.parse(readFileSync(path.join(home, 'state.json'), 'utf8')) as {
      goals?: { runningAgent?: { pid?: unknown } | null }[];
    };
    return (state.goals ?? []).flatMap((goal) => (typeof goal.runningAgent?.pid === 'number' ? [goal.runningAgent.pid] : []));
  } catch {
    return [];
  }
}

/** Writes the sandbox user's config file (`$XDG_CONFIG_HOME/goald/config.json`). */
export async function writeUserConfig(sandbox: GoaldSandbox, config: unknown): Promise<void> {
  const dir = path.join(sandbox.root, 'config', 'goald');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config));
}

/** Parses `--json` output: one object per line. */
export function parseJsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
