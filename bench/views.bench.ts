// The watch view's cost (issue 11): `goald watch --once` against `goald status` on the same running daemon,
// goal and loop (target ≤ 1.5×). Run alone with `node dist/bench/views.bench.js [--runs N]` after `npm run build`.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { createDaemonClient, waitForDaemon } from '../src/daemon/client.js';
import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, median, numberFlag, round, runWhenMain } from './bench-runner.js';

export const WATCH_RATIO_TARGET = 1.5;

export interface ViewsBenchResult {
  runs: number;
  watchOnceMs: number;
  statusMs: number;
  ratio: number;
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

async function timed(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const { code } = await run(args, env);
  if (code !== 0) throw new Error(`goald ${args.slice(1).join(' ')} exited ${code}`);
  return performance.now() - started;
}

/** Measures `goald watch --once` against `goald status`. */
export async function benchViews(opts: { runs?: number } = {}): Promise<ViewsBenchResult> {
  const runs = opts.runs ?? 15;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gdv-')));
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: path.join(root, 'h'), HOME: root, XDG_CONFIG_HOME: path.join(root, 'config'), GOALD_SANDBOX: 'off' };
  for (const name of ['GOALD_SOCKET', 'XDG_STATE_HOME', 'NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS']) delete env[name];
  const socketPath = path.join(root, 'h', 'goald.sock');
  try {
    await run([GOALD_BIN, 'daemon'], env);
    await waitForDaemon(socketPath, { timeoutMs: 15_000 });
    const repo = path.join(root, 'repo');
    await mkdir(repo);
    await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
    await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
    const client = createDaemonClient(socketPath);
    // Short turns that never meet the goal: the views show a goal in motion.
    await client.startGoal({
      condition: 'bench the views',
      dir: repo,
      flags: { agent: 'sleep 0.2; date > out.txt', check: ['false'], evaluator: 'none', cooldown: '0', maxTurns: '100000' },
      env: {},
      queue: true,
    });
    // A loop that fires only in a day: the list has a loop row, read from the loops request on every call.
    await client.createLoop({ condition: 'bench the loop row', dir: repo, flags: { agent: 'true', check: ['true'], evaluator: 'none' }, env: {}, queue: false, every: '1d' });
    const watchTimes: number[] = [];
    const statusTimes: number[] = [];
    await timed([GOALD_BIN, 'status'], env);
    await timed([GOALD_BIN, 'watch', '--once'], env);
    for (let i = 0; i < runs; i++) {
      statusTimes.push(await timed([GOALD_BIN, 'status'], env));
      watchTimes.push(await timed([GOALD_BIN, 'watch', '--once'], env));
    }
    await client.stopDaemon().catch(() => undefined);
    const watchOnceMs = median(watchTimes);
    const statusMs = median(statusTimes);
    return {
      runs,
      watchOnceMs: round(watchOnceMs),
      statusMs: round(statusMs),
      ratio: round(watchOnceMs / statusMs),
    };
  } finally {
    await createDaemonClient(socketPath).stopDaemon().catch(() => undefined);
    // The daemon answers the stop before it has stopped writing its home: retried until it is gone.
    await rm(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const r = await benchViews({ runs: numberFlag(argv, '--runs') });
  process.stdout.write(
    [
      `views bench (node ${process.version})`,
      `  goald watch --once  ${r.watchOnceMs} ms (median of ${r.runs})`,
      `  goald status        ${r.statusMs} ms`,
      `  ratio               ${r.ratio} (target ≤ ${WATCH_RATIO_TARGET})`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
