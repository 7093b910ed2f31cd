// Scale-out (issue 13), through the real CLI on this machine: a daemon with GOALD_REDIS_URL and three
// `goald worker` processes against a local redis-server and a bare git remote.
// - Throughput: the same 30 goals (each 3 turns of an agent that sleeps 1 s, a check, no evaluator) on
//   one embedded daemon and on the cluster; the figure is cluster time / daemon time (target ≤ 0.5, i.e.
//   the cluster at least 2× the turns per second).
// - Recovery: a worker SIGKILLed mid-turn; the time until another worker runs that turn again (target:
//   ≤ lock duration + stalled interval + 2 s).
// - Control latency: from `goald stop` being run to the agent's processes being gone (median; ≤ 500 ms).
// Run alone with `node dist/bench/cluster.bench.js` after `npm run build`.

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, goaldBenchEnv, median, round, runWhenMain } from './bench-runner.js';
import { startRedis, type RedisServer } from './local-redis.js';

export const CLUSTER_TIME_RATIO_TARGET = 0.5;
export const STOP_LATENCY_TARGET_MS = 500;
const GOALS = 30;
const TURNS = 3;
const WORKERS = 3;
const LOCK_MS = 5_000;
const STALLED_MS = 2_000;
/** The recovery target: lock duration + stalled interval + 2 s. */
export const RECOVERY_TARGET_MS = LOCK_MS + STALLED_MS + 2_000;

export interface ClusterBenchResult {
  goals: number;
  turns: number;
  daemonMs: number;
  clusterMs: number;
  /** clusterMs / daemonMs: the target is ≤ 0.5. */
  timeRatio: number;
  daemonTurnsPerSecond: number;
  clusterTurnsPerSecond: number;
  recoveryMs: number;
  stopLatencyMs: number;
  stopRuns: number;
}

interface Runner {
  env: NodeJS.ProcessEnv;
  goald(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function runnerFor(dir: string, extra: NodeJS.ProcessEnv): Runner {
  const env = goaldBenchEnv(dir, extra);
  return {
    env,
    goald: (args) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [GOALD_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      }),
  };
}

async function repoWithOrigin(dir: string, name: string, remote: string | null): Promise<string> {
  const repo = path.join(dir, name);
  await runGit(['init', '--quiet', '--initial-branch=main', repo], { cwd: dir });
  await writeFile(path.join(repo, 'README.md'), `# ${name}\n`);
  await runGit(['add', '-A'], { cwd: repo });
  await runGit(['-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '--quiet', '-m', 'start'], { cwd: repo });
  if (remote !== null) await runGit(['remote', 'add', 'origin', remote], { cwd: repo });
  return repo;
}

async function startGoal(runner: Runner, repo: string, args: readonly string[]): Promise<string> {
  const run = await runner.goald(['start', 'the goal', '-C', repo, '--evaluator', 'none', '--cooldown', '0', '--no-sandbox', '--json', ...args]);
  const submitted = run.stdout.split('\n').find((line) => line.includes('"goal.submitted"'));
  if (run.code !== 0 || submitted === undefined) throw new Error(`goald start failed: ${run.stderr.trim()}`);
  return String((JSON.parse(submitted) as { id: unknown }).id);
}

async function goalsStatus(runner: Runner): Promise<Array<{ id: string; status: string }>> {
  const run = await runner.goald(['status', '--json']);
  return (JSON.parse(run.stdout) as { goals: Array<{ id: string; status: string }> }).goals;
}

// Starts GOALS goals of TURNS turns each, then waits until none is live; resolves with the wall time.
async function runGoals(runner: Runner, dir: string, remote: string | null): Promise<number> {
  const repos = await Promise.all(Array.from({ length: GOALS }, (_, n) => repoWithOrigin(dir, `repo-${n}`, remote)));
  const args = ['--agent', 'sleep 1; echo x >> progress.txt', '--check', `test "$(wc -l < progress.txt)" -ge ${TURNS}`, '--max-turns', String(TURNS + 2)];
  const started = performance.now();
  for (const repo of repos) await startGoal(runner, repo, args);
  for (;;) {
    const live = (await goalsStatus(runner)).filter((goal) => goal.status === 'active' || goal.status === 'paused');
    if (live.length === 0) break;
    await sleep(100);
  }
  return performance.now() - started;
}

function startWorker(dir: string, name: string, redisUrl: string, args: readonly string[]): ChildProcess {
  const env = goaldBenchEnv(path.join(dir, name), { GOALD_REDIS_URL: redisUrl });
  const log = process.env.GOALD_BENCH_WORKER_LOGS;
  const stdio: StdioOptions = log === undefined ? 'ignore' : ['ignore', 'ignore', openSync(path.join(log, `${name}.log`), 'a')];
  return spawn(process.execPath, [GOALD_BIN, 'worker', ...args], { env, stdio });
}

// The pids whose command line holds `marker`.
async function pidsWithMarker(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

async function parentOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
}

async function ancestorIn(pid: number, candidates: ReadonlySet<number>): Promise<number | null> {
  for (let current = pid; current > 1; current = await parentOf(current)) if (candidates.has(current)) return current;
  return null;
}

/** Runs the three measurements. */
export async function benchCluster(): Promise<ClusterBenchResult> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gcb-')));
  let redis: RedisServer | null = null;
  const workers: ChildProcess[] = [];
  const daemons: Runner[] = [];
  try {
    // One embedded daemon.
    const embedded = runnerFor(path.join(root, 'embedded'), {});
    daemons.push(embedded);
    await mkdir(path.join(root, 'embedded'), { recursive: true });
    const daemonMs = await runGoals(embedded, path.join(root, 'embedded'), null);

    // The cluster: a control-plane daemon and three workers (ten turns at once each).
    redis = await startRedis();
    const remote = path.join(root, 'origin.git');
    await runGit(['init', '--quiet', '--bare', '--initial-branch=main', remote], { cwd: root });
    const control = runnerFor(path.join(root, 'control'), { GOALD_REDIS_URL: redis.url });
    daemons.push(control);
    await mkdir(path.join(root, 'control'), { recursive: true });
    const fast = ['--lock-duration', `${LOCK_MS}ms`, '--stalled-interval', `${STALLED_MS}ms`];
    for (let n = 0; n < WORKERS; n += 1) workers.push(startWorker(root, `w${n}`, redis.url, ['--concurrency', '10', ...fast]));
    await sleep(1_500); // the workers connect
    const clusterMs = await runGoals(control, path.join(root, 'control'), remote);

    // Recovery: the worker holding a turn is SIGKILLed; another must run the turn again.
    const recoveryMarker = '5.5511151';
    const recoveryRepo = await repoWithOrigin(root, 'recovery', remote);
    await startGoal(control, recoveryRepo, ['--agent', `sleep ${recoveryMarker}; echo x >> progress.txt`, '--check', 'test -s progress.txt']);
    const workerPids = new Set(workers.map((worker) => worker.pid ?? -1));
    let holder: number | null = null;
    while (holder === null) {
      for (const pid of await pidsWithMarker(recoveryMarker)) holder ??= await ancestorIn(pid, workerPids);
      await sleep(20);
    }
    process.kill(holder, 'SIGKILL');
    const killedAt = performance.now();
    let recoveryMs = Number.NaN;
    while (Number.isNaN(recoveryMs)) {
      for (const pid of await pidsWithMarker(recoveryMarker)) {
        const owner = await ancestorIn(pid, workerPids);
        if (owner !== null && owner !== holder) recoveryMs = performance.now() - killedAt;
      }
      if (performance.now() - killedAt > 60_000) throw new Error('the killed turn was not run again within 60 s');
      await sleep(20);
    }

    // Control latency: `goald stop` run → the agent's processes gone.
    const stops: number[] = [];
    for (let run = 0; run < 5; run += 1) {
      const marker = `77.${run}123457`;
      const repo = await repoWithOrigin(root, `stop-${run}`, remote);
      const id = await startGoal(control, repo, ['--agent', `sleep ${marker}`, '--check', 'false']);
      let pids: number[] = [];
      while (pids.length < 2) {
        pids = await pidsWithMarker(marker);
        await sleep(20);
      }
      const stoppedAt = performance.now();
      const stop = control.goald(['stop', id]);
      while ((await pidsWithMarker(marker)).length > 0) await sleep(2);
      stops.push(performance.now() - stoppedAt);
      await stop;
    }
    const turns = GOALS * TURNS;
    return {
      goals: GOALS,
      turns,
      daemonMs: Math.round(daemonMs),
      clusterMs: Math.round(clusterMs),
      timeRatio: round(clusterMs / daemonMs),
      daemonTurnsPerSecond: round(turns / (daemonMs / 1000)),
      clusterTurnsPerSecond: round(turns / (clusterMs / 1000)),
      recoveryMs: Math.round(recoveryMs),
      stopLatencyMs: Math.round(median(stops)),
      stopRuns: stops.length,
    };
  } finally {
    for (const worker of workers) worker.kill('SIGTERM');
    for (const daemon of daemons) await daemon.goald(['daemon', 'stop']).catch(() => undefined);
    await sleep(500);
    for (const worker of workers) worker.kill('SIGKILL');
    await redis?.stop();
    await rm(root, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, async () => {
  const r = await benchCluster();
  console.log(`cluster bench (node ${process.version}, ${r.goals} goals × ${r.turns / r.goals} turns, agents sleep 1 s)`);
  console.log(`  one daemon            ${r.daemonMs} ms (${r.daemonTurnsPerSecond} turns/s)`);
  console.log(`  3 workers + control   ${r.clusterMs} ms (${r.clusterTurnsPerSecond} turns/s) → ${r.timeRatio}× the time (target ≤ ${CLUSTER_TIME_RATIO_TARGET})`);
  console.log(`  recovery after SIGKILL ${r.recoveryMs} ms (target ≤ ${RECOVERY_TARGET_MS})`);
  console.log(`  stop → agent gone      ${r.stopLatencyMs} ms median of ${r.stopRuns} (target ≤ ${STOP_LATENCY_TARGET_MS})`);
});
