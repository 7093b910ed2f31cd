// What a user waits for before goald does anything: `goald --version` (target ≤ 1.2× a bare `node -e 0`),
// and `goald start --foreground` from exec to the moment its first agent runs (≤ 4×; no evaluator, and
// the cheapest check there is, since a goal needs one). The agent's first act is to write to a FIFO this
// process is blocked reading, so the figure ends when the agent starts, with no clock shared between
// processes. Every figure is a median of runs interleaved with `node -e 0`'s, so load weighs on both.
// The target is for goald as users run it: the `goald` command (bin/goald), so a foreground start starts
// from the start-up snapshot its first start in the bench's home built (warmed up before any run counts),
// and the check and agent each in a bwrap sandbox, where bwrap works. The same start with `--no-sandbox`
// is reported beside it, so bwrap's two set-ups are a figure apart, and so is a start of the bundle itself
// (`node dist/bundle/bin.js`, no snapshot).
// Run alone with `node dist/bench/startup.bench.js [--runs N]` after `npm run build`.

import { spawn, spawnSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, open, readFile, readdir, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, GOALD_COMMAND, goaldBenchEnv, median, numberFlag, round, runGoaldToExit, runNodeToExit, runWhenMain } from './bench-runner.js';

export const VERSION_RATIO_TARGET = 1.2;
export const FIRST_SPAWN_RATIO_TARGET = 4;

export interface StartupBenchResult {
  runs: number;
  /** Median wall time of `node -e 0`. */
  nodeMs: number;
  /** Median wall time of `goald --version`. */
  versionMs: number;
  versionRatio: number;
  /** Median wall time from spawning `goald start --foreground` to its agent's first write. */
  firstSpawnMs: number;
  firstSpawnRatio: number;
  /** The same with `--no-sandbox`: the check and the agent started without bwrap (the baseline has none). */
  unsandboxedFirstSpawnMs: number;
  unsandboxedFirstSpawnRatio: number;
  /** The sandboxed start run as `node dist/bundle/bin.js`, which never starts from the snapshot. */
  bundleFirstSpawnMs: number;
  bundleFirstSpawnRatio: number;
}

/** Measures `goald --version` and `goald start --foreground`'s time to its first agent against `node -e 0`. */
export async function benchStartup(opts: { runs?: number } = {}): Promise<StartupBenchResult> {
  const runs = opts.runs ?? 15;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gstb-')));
  try {
    const env = goaldBenchEnv(root, { HOME: root });
    const node = (): Promise<number> => timeToExit(['-e', '0'], env);
    const version = async (): Promise<number> => {
      const started = performance.now();
      await runGoaldToExit(['--version'], env);
      return performance.now() - started;
    };
    let started = 0;
    const nextDir = (): string => path.join(root, `start-${(started += 1)}`);
    const firstSpawn = async (): Promise<number> => timeToFirstAgent(nextDir(), env, { sandboxed: true, command: [GOALD_COMMAND] });
    const unsandboxedFirstSpawn = async (): Promise<number> => timeToFirstAgent(nextDir(), env, { sandboxed: false, command: [GOALD_COMMAND] });
    const bundleFirstSpawn = async (): Promise<number> => timeToFirstAgent(nextDir(), env, { sandboxed: true, command: [process.execPath, GOALD_BIN] });
    // Warm the page cache for every side; the first start builds the snapshot the others start from.
    await node();
    await version();
    await firstSpawn();
    await waitForSnapshot(path.join(root, 'h'));
    await assertStartsFromSnapshot(path.join(root, 'snapshot-check'), env);
    await firstSpawn();
    await unsandboxedFirstSpawn();
    await bundleFirstSpawn();
    const nodeTimes: number[] = [];
    const versionTimes: number[] = [];
    const firstSpawnTimes: number[] = [];
    const unsandboxedTimes: number[] = [];
    const bundleTimes: number[] = [];
    for (let i = 0; i < runs; i++) {
      nodeTimes.push(await node());
      versionTimes.push(await version());
      firstSpawnTimes.push(await firstSpawn());
      unsandboxedTimes.push(await unsandboxedFirstSpawn());
      bundleTimes.push(await bundleFirstSpawn());
    }
    const nodeMs = median(nodeTimes);
    const versionMs = median(versionTimes);
    const firstSpawnMs = median(firstSpawnTimes);
    return {
      runs,
      nodeMs: round(nodeMs),
      versionMs: round(versionMs),
      versionRatio: round(versionMs / nodeMs),
      firstSpawnMs: round(firstSpawnMs),
      firstSpawnRatio: round(firstSpawnMs / nodeMs),
      unsandboxedFirstSpawnMs: round(median(unsandboxedTimes)),
      unsandboxedFirstSpawnRatio: round(median(unsandboxedTimes) / nodeMs),
      bundleFirstSpawnMs: round(median(bundleTimes)),
      bundleFirstSpawnRatio: round(median(bundleTimes) / nodeMs),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Wall time of one `node <args>` run to its exit. */
async function timeToExit(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  await runNodeToExit(args, env);
  return performance.now() - started;
}

// The snapshot a first start asks for is built in the background once it ends (~1 s).
async function waitForSnapshot(home: string): Promise<void> {
  const startup = path.join(home, 'cache', 'startup');
  const giveUpAt = performance.now() + 60_000;
  while (performance.now() < giveUpAt) {
    const dirs = await readdir(startup).catch(() => []);
    for (const dir of dirs) {
      if (await stat(path.join(startup, dir, 'identity')).then(() => true, () => false)) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no start-up snapshot was built in ${startup} within a minute`);
}

/** A fresh repository with one empty commit under `dir/repo`, whose git ignores `/<excluded>`. */
async function makeRepo(dir: string, excluded: string): Promise<string> {
  const repo = path.join(dir, 'repo');
  await mkdir(repo, { recursive: true });
  await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
  await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
  await appendFile(path.join(repo, '.git', 'info', 'exclude'), `/${excluded}\n`);
  return repo;
}

// The figure is the start from the snapshot: a start whose agent reads its goald's command line must find
// `--snapshot-blob` in it (unsandboxed: a sandboxed agent has a PID namespace of its own).
async function assertStartsFromSnapshot(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const repo = await makeRepo(dir, 'started-by');
  const args = ['start', 'started-by exists', '--foreground', '-C', repo, '--no-sandbox', '--agent', "tr '\\0' ' ' < /proc/$PPID/cmdline > started-by", '--check', 'test -f started-by', '--evaluator', 'none', '--cooldown', '0'];
  await runGoaldToExit(args, env);
  const argv = await readFile(path.join(repo, 'started-by'), 'utf8');
  if (!argv.includes('--snapshot-blob')) throw new Error(`goald did not start from its start-up snapshot (its command line: ${argv.trim()})`);
}

/** Wall time from spawning `goald start --foreground` (`command`) in a fresh repository to its agent's first write. */
async function timeToFirstAgent(dir: string, env: NodeJS.ProcessEnv, how: { sandboxed: boolean; command: readonly string[] }): Promise<number> {
  // The FIFO sits in the repository (excluded from git, so no snapshot sees it): a sandboxed agent sees only
  // its workspace and a private /tmp, and a FIFO beside the repository would be out of its reach.
  const repo = await makeRepo(dir, 'agent-started');
  const fifo = path.join(repo, 'agent-started');
  const made = spawnSync('mkfifo', [fifo]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr.toString().trim()}`);

  const args = [
    ...how.command.slice(1), 'start', 'f.txt exists', '--foreground', '-C', repo,
    '--agent', 'echo started > agent-started; touch f.txt', '--check', 'test -f f.txt',
    '--evaluator', 'none', '--cooldown', '0', '--max-turns', '1', '--json', ...(how.sandboxed ? [] : ['--no-sandbox']),
  ];
  const startedAt = performance.now();
  const child = spawn(how.command[0] ?? process.execPath, args, { env, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  // Opening a FIFO for reading waits until a writer opens it: here, the agent's first command. Should goald
  // end without running its agent, this process writes to the FIFO itself to release that wait.
  let agentStartedAt: number | null = null;
  let goaldEnded = false;
  const reading = open(fifo, 'r').then((reader) => {
    if (!goaldEnded) agentStartedAt = performance.now();
    return reader;
  });
  const code = await exited;
  goaldEnded = true;
  if (agentStartedAt === null) await (await open(fifo, 'w')).close();
  const reader = await reading;
  // What the agent wrote: an agent that never reached the FIFO leaves it empty (its own release above writes nothing).
  const written = await reader.readFile('utf8');
  await reader.close();
  if (agentStartedAt === null || written.trim() !== 'started' || code !== 0) {
    throw new Error(`goald start --foreground exited ${code}${agentStartedAt === null || written.trim() !== 'started' ? ' before its agent wrote to the FIFO' : ''}`);
  }
  return agentStartedAt - startedAt;
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const r = await benchStartup({ runs: numberFlag(argv, '--runs') });
  const verdict = (ratio: number, target: number): string => `${ratio}× (${ratio <= target ? 'within' : 'ABOVE'} the ${target}× target)`;
  process.stdout.write(
    [
      `start-up bench (node ${process.version}, median of ${r.runs})`,
      `  node -e 0                      ${r.nodeMs} ms`,
      `  goald --version                ${r.versionMs} ms, ${verdict(r.versionRatio, VERSION_RATIO_TARGET)}`,
      `  start --foreground → 1st agent ${r.firstSpawnMs} ms, ${verdict(r.firstSpawnRatio, FIRST_SPAWN_RATIO_TARGET)}`,
      `  the same, --no-sandbox         ${r.unsandboxedFirstSpawnMs} ms, ${r.unsandboxedFirstSpawnRatio}×`,
      `  the same, node dist/bundle/bin.js ${r.bundleFirstSpawnMs} ms, ${r.bundleFirstSpawnRatio}×`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
