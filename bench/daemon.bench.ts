// The daemon's costs a user feels: `goald status` (the real CLI process against a running daemon, which
// answers it from the daemon's status snapshot) against a bare `node -e 0` (target ≤ 1.5×), and for
// context the same over the socket (`goald status <goal>`) and in a home that also holds a
// thousand finished goals (a `goald loop 30m` makes that many in three weeks), and the daemon's resident memory idle (≤ 60 MB) and
// holding 50 waiting goals (≤ 150 MB; 50 goals queued in one workspace behind one long-running goal).
// Run alone with `node dist/bench/daemon.bench.js [--runs N] [--goals N]` after `npm run build`.

import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { createDaemonClient, waitForDaemon } from '../src/daemon/client.js';
import { openStore } from '../state/store.js';
import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, GOALD_COMMAND, median, numberFlag, round, runWhenMain } from './bench-runner.js';
import { HISTORY_GOALS, realGoalRecord } from './state.bench.js';

export const STATUS_RATIO_TARGET = 1.5;
export const IDLE_RSS_TARGET_MB = 60;
export const WAITING_RSS_TARGET_MB = 150;

export interface DaemonBenchResult {
  runs: number;
  /** Median wall time of `goald status` (one goal active) against the running daemon. */
  statusMs: number;
  /** Median wall time of `node -e 0`. */
  nodeMs: number;
  /** statusMs / nodeMs; the target is ≤ 1.5. */
  ratio: number;
  /**
   * `goald status <goal>` (the same goal named), which asks the socket: the round trip a plain status
   * makes when the daemon's status snapshot is not current (src/daemon/status-snapshot.ts); for context.
   */
  overSocket: { statusMs: number; nodeMs: number; ratio: number };
  /**
   * Start-up variables this shell has that were left out of the figures above (they slow every node
   * process alike, e.g. NODE_EXTRA_CA_CERTS), and the same round trip with them kept; null without any.
   */
  inheritedEnv: { variables: string[]; statusMs: number; nodeMs: number; ratio: number } | null;
  /** The same round trip (one goal active) in another home that also holds HISTORY_GOALS finished goals. */
  besideHistory: { goals: number; stateMb: number; statusMs: number; nodeMs: number; ratio: number };
  /** VmRSS of the daemon after start-up, before any goal (MB). */
  idleRssMb: number;
  /** How many goals waited in the queue for the next figure. */
  waitingGoals: number;
  /** VmRSS with one goal running and `waitingGoals` queued behind it (MB). */
  waitingRssMb: number;
}

const DAEMON_START_TIMEOUT_MS = 15_000;
const DAEMON_STOP_TIMEOUT_MS = 10_000;
// V8 settles its heap (and returns pages) shortly after start-up work; RSS is read after this pause.
const SETTLE_MS = 1_000;

/** Measures `goald status` against `node -e 0`, and the daemon's RSS idle and with waiting goals. */
export async function benchDaemon(opts: { runs?: number; waitingGoals?: number } = {}): Promise<DaemonBenchResult> {
  const runs = opts.runs ?? 15;
  const waitingGoals = opts.waitingGoals ?? 50;
  const bin = GOALD_BIN;
  // Short: the socket path must fit in sun_path.
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gdb-')));
  const env = benchEnv(root);
  const socketPath = path.join(env.GOALD_HOME as string, 'goald.sock');
  let daemonPid: number | null = null;
  try {
    // Started the way users get it: `goald daemon` auto-starts it detached (with its V8 flags).
    await timeProcess([bin, 'daemon'], env);
    daemonPid = (await waitForDaemon(socketPath, { timeoutMs: DAEMON_START_TIMEOUT_MS })).pid;
    await delay(SETTLE_MS);
    const idleRssMb = readRssMb(daemonPid);

    // One goal holds the workspace (its agent sleeps); the others queue behind it.
    const repo = await makeRepo(path.join(root, 'repo'));
    const client = createDaemonClient(socketPath);
    const request = (condition: string) => ({
      condition,
      dir: repo,
      flags: { agent: 'sleep 600', check: ['exit 1'], evaluator: 'none', cooldown: '0' },
      env: {},
      queue: true,
    });
    const { goal } = await client.startGoal(request('hold the workspace'));

    const status = await timeStatus(env, runs);
    const overSocket = await timeStatus(env, runs, [goal.id]);
    const inheritedEnv = await measureWithInheritedEnv(env, runs);
    const besideHistory = await measureBesideHistory(bin, path.join(root, 'history'), runs);

    for (let i = 0; i < waitingGoals; i++) {
      const { queued } = await client.startGoal(request(`waiting goal ${i + 1}`));
      if (!queued) throw new Error(`goal ${i + 1} was not queued`);
    }
    await delay(SETTLE_MS);
    const waitingRssMb = readRssMb(daemonPid);

    return {
      runs,
      ...status,
      overSocket,
      inheritedEnv,
      besideHistory,
      idleRssMb: round(idleRssMb),
      waitingGoals,
      waitingRssMb: round(waitingRssMb),
    };
  } finally {
    await stopDaemon(socketPath, daemonPid);
    await rm(root, { recursive: true, force: true });
  }
}

// Node start-up variables that cost every process the same (NODE_EXTRA_CA_CERTS parses a whole CA bundle:
// ~70 ms per process in some containers) and would flatter the ratio: the figures measure goald's own cost.
const STARTUP_VARIABLES = ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'] as const;

/** The same round trip with this shell's node start-up variables kept, when it has any. */
async function measureWithInheritedEnv(env: NodeJS.ProcessEnv, runs: number): Promise<DaemonBenchResult['inheritedEnv']> {
  const variables = STARTUP_VARIABLES.filter((name) => process.env[name] !== undefined);
  if (variables.length === 0) return null;
  const inherited: NodeJS.ProcessEnv = { ...env };
  for (const name of variables) inherited[name] = process.env[name];
  return { variables, ...(await timeStatus(inherited, runs)) };
}

/**
 * Medians of `goald status [args]` (the `goald` command users run: bin/goald) and `node -e 0` run `runs`
 * times each, interleaved, after one warm-up of each.
 */
async function timeStatus(env: NodeJS.ProcessEnv, runs: number, args: string[] = []): Promise<{ statusMs: number; nodeMs: number; ratio: number }> {
  const status = ['status', ...args];
  await timeProcess(status, env, GOALD_COMMAND); // warm the page cache for both sides
  await timeProcess(['-e', '0'], env);
  const statusTimes: number[] = [];
  const nodeTimes: number[] = [];
  // Interleaved, so load from elsewhere weighs on both sides alike.
  for (let i = 0; i < runs; i++) {
    nodeTimes.push(await timeProcess(['-e', '0'], env));
    statusTimes.push(await timeProcess(status, env, GOALD_COMMAND));
  }
  const statusMs = median(statusTimes);
  const nodeMs = median(nodeTimes);
  return { statusMs: round(statusMs), nodeMs: round(nodeMs), ratio: round(statusMs / nodeMs) };
}

/**
 * `goald status` against a daemon of its own, in a home holding HISTORY_GOALS finished goals (copies of one
 * real goal's record) beside the one active goal it lists.
 */
async function measureBesideHistory(bin: string, root: string, runs: number): Promise<DaemonBenchResult['besideHistory']> {
  const env = benchEnv(root);
  const home = env.GOALD_HOME as string;
  const record = await realGoalRecord(path.join(root, 'record'));
  const store = await openStore(home, { env: {} });
  await store.update((state) => {
    for (let index = 0; index < HISTORY_GOALS; index += 1) state.goals.push({ ...structuredClone(record), id: `gh${String(index).padStart(10, '0')}` });
  });
  const stateMb = statSync(path.join(home, 'state.json')).size / 1e6;
  const socketPath = path.join(home, 'goald.sock');
  let daemonPid: number | null = null;
  try {
    await timeProcess([bin, 'daemon'], env);
    daemonPid = (await waitForDaemon(socketPath, { timeoutMs: DAEMON_START_TIMEOUT_MS })).pid;
    const repo = await makeRepo(path.join(root, 'repo'));
    const flags = { agent: 'sleep 600', check: ['exit 1'], evaluator: 'none', cooldown: '0' };
    await createDaemonClient(socketPath).startGoal({ condition: 'hold the workspace', dir: repo, flags, env: {}, queue: true });
    return { goals: HISTORY_GOALS, stateMb: round(stateMb), ...(await timeStatus(env, runs)) };
  } finally {
    await stopDaemon(socketPath, daemonPid);
  }
}

function benchEnv(root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: path.join(root, 'h'), HOME: root, XDG_CONFIG_HOME: path.join(root, 'config') };
  delete env.GOALD_SOCKET;
  delete env.XDG_STATE_HOME;
  for (const name of STARTUP_VARIABLES) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('GIT_') || name.endsWith('_API_KEY')) delete env[name];
  return env;
}

async function makeRepo(repo: string): Promise<string> {
  await mkdir(repo, { recursive: true });
  await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
  await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
  return repo;
}

/** Wall time of one `<command> <args>` run to exit (`node` unless told). */
async function timeProcess(args: string[], env: NodeJS.ProcessEnv, command = process.execPath): Promise<number> {
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}`);
  return performance.now() - started;
}

/** VmRSS of a process from /proc, in MB (MiB). */
function readRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return kb / 1024;
}

/** Stops the daemon cleanly (it kills its agents), or kills it when it does not go. */
async function stopDaemon(socketPath: string, pid: number | null): Promise<void> {
  await createDaemonClient(socketPath).stopDaemon().catch(() => undefined);
  if (pid === null) return;
  const deadline = Date.now() + DAEMON_STOP_TIMEOUT_MS;
  while (isRunning(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      return;
    }
    await delay(25);
  }
}

/** Whether a process exists and is not a zombie (a detached daemon is reaped by init, in its own time). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const result = await benchDaemon({ runs: numberFlag(argv, '--runs'), waitingGoals: numberFlag(argv, '--goals') });
  const mark = (ok: boolean): string => (ok ? 'within' : 'ABOVE');
  process.stdout.write(
    [
      `daemon bench (node ${process.version})`,
      `  goald status     ${result.statusMs} ms (median of ${result.runs})`,
      `  node -e 0        ${result.nodeMs} ms`,
      `  ratio            ${result.ratio} (${mark(result.ratio <= STATUS_RATIO_TARGET)} the ${STATUS_RATIO_TARGET} target)`,
      ...(result.inheritedEnv === null
        ? []
        : [
            `  with ${result.inheritedEnv.variables.join(', ')}: status ${result.inheritedEnv.statusMs} ms, node ${result.inheritedEnv.nodeMs} ms, ratio ${result.inheritedEnv.ratio}`,
          ]),
      `  beside ${result.besideHistory.goals} finished goals (state.json ${result.besideHistory.stateMb} MB): status ${result.besideHistory.statusMs} ms, node ${result.besideHistory.nodeMs} ms, ratio ${result.besideHistory.ratio}`,
      `  RSS idle         ${result.idleRssMb} MB (${mark(result.idleRssMb <= IDLE_RSS_TARGET_MB)} ${IDLE_RSS_TARGET_MB} MB)`,
      `  RSS ${result.waitingGoals} waiting   ${result.waitingRssMb} MB (${mark(result.waitingRssMb <= WAITING_RSS_TARGET_MB)} ${WAITING_RSS_TARGET_MB} MB)`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
