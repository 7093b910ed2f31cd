// The supervisor's own overhead: N turns of a trivial agent (it changes one file per turn), a trivial
// check and no evaluator, against a plain shell loop doing the same spawn + snapshot (private index,
// `git add -A && git write-tree`, then the turn's delta: `diff-tree` numstat and `patch-id`, as DESIGN.md's
// step 4 defines a snapshot) + check work. Target ≤ 1.3×. The supervisor runs in-process
// (prepareGoal + buildSupervisor, exactly what `goald start --foreground` wires); the real CLI's end-to-end
// time is reported beside it for reference. Run alone with `node dist/bench/supervisor.bench.js [--turns N]`.

import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { openStore } from '../state/index.js';
import { createEventLogObserver } from '../src/supervisor/event-log.js';
import { buildSupervisor, newGoalRecord, prepareGoal } from '../src/supervisor/launch.js';
import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, median, numberFlag, round, runWhenMain } from './bench-runner.js';

export const SUPERVISOR_RATIO_TARGET = 1.3;

export interface SupervisorBenchResult {
  turns: number;
  runs: number;
  /** Median wall time of supervisor.run() over `turns` turns (turn 0's pre-check included). */
  supervisorMs: number;
  /** Median wall time of the shell loop doing the same agent + snapshot + check work. */
  shellLoopMs: number;
  /** supervisorMs / shellLoopMs; the target is ≤ 1.3. */
  ratio: number;
  /** Per turn, both sides. */
  supervisorPerTurnMs: number;
  shellLoopPerTurnMs: number;
  /** `goald start --foreground` end to end (process start included), one run, for reference. */
  cliMs: number;
}


const AGENT = 'echo "$GOALD_TURN" > f.txt';
const checkFor = (turns: number): string => `test "$(cat f.txt 2>/dev/null)" = ${turns}`;

/** Measures the supervisor over `turns` turns against the equivalent shell loop (medians of `runs`). */
export async function benchSupervisor(opts: { turns?: number; runs?: number } = {}): Promise<SupervisorBenchResult> {
  const turns = opts.turns ?? 20;
  const runs = opts.runs ?? 5;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gsb-')));
  try {
    const supervisorTimes: number[] = [];
    const shellTimes: number[] = [];
    // One warm-up of each (page cache, git's first start), then interleaved runs so drift hits both alike.
    await runShellLoop(path.join(root, 'warm-shell'), turns);
    await runSupervisor(path.join(root, 'warm-sup'), turns);
    for (let i = 0; i < runs; i++) {
      shellTimes.push(await runShellLoop(path.join(root, `shell-${i}`), turns));
      supervisorTimes.push(await runSupervisor(path.join(root, `sup-${i}`), turns));
    }
    const cliMs = await runCli(path.join(root, 'cli'), turns);
    const supervisorMs = median(supervisorTimes);
    const shellLoopMs = median(shellTimes);
    return {
      turns,
      runs,
      supervisorMs: round(supervisorMs),
      shellLoopMs: round(shellLoopMs),
      ratio: round(supervisorMs / shellLoopMs),
      supervisorPerTurnMs: round(supervisorMs / turns),
      shellLoopPerTurnMs: round(shellLoopMs / turns),
      cliMs: Math.round(cliMs),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** A fresh repository with one committed file, under `dir/repo`. */
async function makeRepo(dir: string): Promise<string> {
  const repo = path.join(dir, 'repo');
  await mkdir(repo, { recursive: true });
  await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
  for (const [key, value] of [['user.name', 'bench'], ['user.email', 'bench@example.invalid'], ['gc.auto', '0'], ['commit.gpgsign', 'false']]) {
    await runGit(['config', key as string, value as string], { cwd: repo });
  }
  await runGit(['commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
  return repo;
}

function benchEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: path.join(dir, 'h'), XDG_CONFIG_HOME: path.join(dir, 'config') };
  for (const name of Object.keys(env)) if ((name.startsWith('GOALD_') && name !== 'GOALD_HOME') || name.startsWith('GIT_')) delete env[name];
  delete env.NODE_EXTRA_CA_CERTS; // start-up work for every node process, not goald's
  delete env.NODE_OPTIONS;
  return env;
}

/** supervisor.run() over `turns` turns; resolves with its wall time. */
async function runSupervisor(dir: string, turns: number): Promise<number> {
  const repo = await makeRepo(dir);
  const env = benchEnv(dir);
  const store = await openStore(env.GOALD_HOME as string);
  const prepared = await prepareGoal({
    condition: `f.txt says ${turns}`,
    dir: repo,
    flags: { agent: AGENT, check: [checkFor(turns)], evaluator: 'none', cooldown: '0', maxTurns: String(turns + 5) },
    env,
  });
  const goal = newGoalRecord(prepared.settings, { kind: 'foreground', pid: process.pid });
  await store.update((state) => {
    state.goals.push(goal);
  });
  const supervisor = await buildSupervisor({
    store,
    goal,
    prepared,
    observers: [createEventLogObserver(store.goalDir(goal.id))],
    owner: 'foreground',
  });
  const started = performance.now();
  const outcome = await supervisor.run();
  const elapsed = performance.now() - started;
  if (outcome?.status !== 'achieved' || outcome.turns !== turns) {
    throw new Error(`the benchmark goal ended ${outcome?.status ?? 'detached'} after ${outcome?.turns ?? '?'} turns (${outcome?.failure?.message ?? ''})`);
  }
  return elapsed;
}

/** The same work as a plain shell loop: seed a private index, then per turn agent + snapshot + check. */
async function runShellLoop(dir: string, turns: number): Promise<number> {
  const repo = await makeRepo(dir);
  const state = path.join(dir, 'state');
  await mkdir(path.join(state, 'objects'), { recursive: true });
  await copyFile(path.join(repo, '.git', 'index'), path.join(state, 'index')).catch(() => undefined);
  const script = [
    `export GIT_INDEX_FILE='${state}/index' GIT_OBJECT_DIRECTORY='${state}/objects' GIT_ALTERNATE_OBJECT_DIRECTORIES='${repo}/.git/objects'`,
    // Turn 0: the pre-check's snapshot and checks.
    'git add -A && prev=$(git write-tree)',
    `sh -c '${checkFor(turns)}'`,
    'i=1',
    `while [ $i -le ${turns} ]; do`,
    `  GOALD_TURN=$i sh -c '${AGENT}' < /dev/null > /dev/null`,
    // DESIGN.md § One turn, step 4: the snapshot is the tree hash AND the turn's delta (numstat, patch id).
    '  git add -A && cur=$(git write-tree)',
    '  git diff-tree -r --raw --numstat -z "$prev" "$cur" > /dev/null',
    '  git diff-tree -r -p --full-index "$prev" "$cur" | git patch-id --stable > /dev/null',
    '  prev=$cur',
    `  sh -c '${checkFor(turns)}'`,
    '  i=$((i+1))',
    'done',
  ].join('\n');
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script], { cwd: repo, env: benchEnv(dir), stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  return performance.now() - started;
}

/** `goald start --foreground` through the built binary; resolves with its wall time. */
async function runCli(dir: string, turns: number): Promise<number> {
  const repo = await makeRepo(dir);
  const args = [
    GOALD_BIN,
    'start', `f.txt says ${turns}`, '--foreground', '-C', repo, '--agent', AGENT, '--check', checkFor(turns),
    '--evaluator', 'none', '--cooldown', '0', '--max-turns', String(turns + 5), '--json',
  ];
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: benchEnv(dir), stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  if (code !== 0) throw new Error(`goald start --foreground exited ${code}`);
  return performance.now() - started;
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const result = await benchSupervisor({ turns: numberFlag(argv, '--turns'), runs: numberFlag(argv, '--runs') });
  const verdict = result.ratio <= SUPERVISOR_RATIO_TARGET ? 'within' : 'ABOVE';
  process.stdout.write(
    [
      `supervisor bench (node ${process.version})`,
      `  turns            ${result.turns} (median of ${result.runs} runs)`,
      `  supervisor       ${result.supervisorMs} ms (${result.supervisorPerTurnMs} ms/turn)`,
      `  shell loop       ${result.shellLoopMs} ms (${result.shellLoopPerTurnMs} ms/turn)`,
      `  ratio            ${result.ratio} (${verdict} the ${SUPERVISOR_RATIO_TARGET} target)`,
      `  CLI --foreground ${result.cliMs} ms end to end`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
