// The supervisor's own cost per turn: `goald start --foreground` (the real CLI) over 12 and over 36 turns
// of a trivial agent (it changes one file per turn), a trivial check and no evaluator, against a plain
// shell loop doing the same work per turn: spawn the agent, snapshot (private index, `git add -A && git
// write-tree`, then the turn's delta: `diff-tree` numstat and `patch-id`, as DESIGN.md's step 4 defines
// a snapshot), run the check, and append one fsync'd record to a log (durability is part of the job).
// Each side's per-turn figure is the slope (time at 36 turns − time at 12) / 24, so start-up and the
// pre-check cancel out. Target: supervisor slope ≤ 1.5× the shell loop's. Like for like, goald runs its
// turns unsandboxed there (`--no-sandbox`: the shell loop has no sandbox); the same goal in goald's
// default bubblewrap sandbox is measured too and reported beside it, so the sandbox's own cost per turn
// (two `bwrap` set-ups: the agent's and the check's) is a figure of its own, not hidden in either.
// Nine runs of each series by default: a slope is the difference of two medians, and with five runs one
// slow phase of the host gave 1.37× and 1.49× in two full runs of the same build.
// Run alone with `node dist/bench/supervisor.bench.js [--runs N]` after `npm run build`.

import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, goaldBenchEnv, median, numberFlag, round, runNodeToExit, runWhenMain } from './bench-runner.js';

export const SUPERVISOR_RATIO_TARGET = 1.5;
/** The two goal lengths whose difference gives the per-turn slope. */
export const SHORT_TURNS = 12;
export const LONG_TURNS = 36;

export interface SupervisorBenchResult {
  runs: number;
  /** Medians of `goald start --foreground` over SHORT_TURNS and LONG_TURNS turns, exec to exit. */
  supervisorShortMs: number;
  supervisorLongMs: number;
  /** The same in goald's default sandbox (bwrap, when it works here; else the same as unsandboxed). */
  sandboxedShortMs: number;
  sandboxedLongMs: number;
  sandboxedPerTurnMs: number;
  /** The same for the shell loop. */
  shellShortMs: number;
  shellLongMs: number;
  /** (long − short) / (LONG_TURNS − SHORT_TURNS), each side. */
  supervisorPerTurnMs: number;
  shellPerTurnMs: number;
  /** supervisorPerTurnMs / shellPerTurnMs; the target is ≤ 1.5. */
  ratio: number;
}

const AGENT = 'echo "$GOALD_TURN" > f.txt';
const checkFor = (turns: number): string => `test "$(cat f.txt 2>/dev/null)" = ${turns}`;

/** Measures both sides at both lengths (medians of `runs`, interleaved) and their per-turn slopes. */
export async function benchSupervisor(opts: { runs?: number } = {}): Promise<SupervisorBenchResult> {
  const runs = opts.runs ?? 9;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gsb-')));
  try {
    let made = 0;
    const fresh = (): string => path.join(root, `run-${(made += 1)}`);
    const times = { supShort: [] as number[], supLong: [] as number[], sbShort: [] as number[], sbLong: [] as number[], shShort: [] as number[], shLong: [] as number[] };
    // One warm-up of each (page cache, git's first start), then interleaved runs so drift hits all alike.
    await runShellLoop(fresh(), SHORT_TURNS);
    await runSupervisor(fresh(), SHORT_TURNS, false);
    await runSupervisor(fresh(), SHORT_TURNS, true);
    for (let i = 0; i < runs; i++) {
      times.shShort.push(await runShellLoop(fresh(), SHORT_TURNS));
      times.supShort.push(await runSupervisor(fresh(), SHORT_TURNS, false));
      times.sbShort.push(await runSupervisor(fresh(), SHORT_TURNS, true));
      times.shLong.push(await runShellLoop(fresh(), LONG_TURNS));
      times.supLong.push(await runSupervisor(fresh(), LONG_TURNS, false));
      times.sbLong.push(await runSupervisor(fresh(), LONG_TURNS, true));
    }
    const slope = (long: number[], short: number[]): number => (median(long) - median(short)) / (LONG_TURNS - SHORT_TURNS);
    const supervisorPerTurnMs = slope(times.supLong, times.supShort);
    const shellPerTurnMs = slope(times.shLong, times.shShort);
    return {
      runs,
      supervisorShortMs: round(median(times.supShort)),
      supervisorLongMs: round(median(times.supLong)),
      sandboxedShortMs: round(median(times.sbShort)),
      sandboxedLongMs: round(median(times.sbLong)),
      sandboxedPerTurnMs: round(slope(times.sbLong, times.sbShort)),
      shellShortMs: round(median(times.shShort)),
      shellLongMs: round(median(times.shLong)),
      supervisorPerTurnMs: round(supervisorPerTurnMs),
      shellPerTurnMs: round(shellPerTurnMs),
      ratio: round(supervisorPerTurnMs / shellPerTurnMs),
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
  for (const [key, value] of [['user.name', 'bench'], ['user.email', 'bench@example.invalid'], ['gc.auto', '0'], ['commit.gpgsign', 'false']] as const) {
    await runGit(['config', key, value], { cwd: repo });
  }
  await runGit(['commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
  return repo;
}

/** `goald start --foreground` over `turns` turns through the built binary (in its sandbox or not); resolves with its wall time. */
async function runSupervisor(dir: string, turns: number, sandboxed: boolean): Promise<number> {
  const repo = await makeRepo(dir);
  const args = [
    GOALD_BIN, 'start', `f.txt says ${turns}`, '--foreground', '-C', repo, '--agent', AGENT, '--check', checkFor(turns),
    '--evaluator', 'none', '--cooldown', '0', '--max-turns', String(turns + 5), '--json', ...(sandboxed ? [] : ['--no-sandbox']),
  ];
  const started = performance.now();
  await runNodeToExit(args, goaldBenchEnv(dir), `goald start --foreground over ${turns} turns`);
  return performance.now() - started;
}

/**
 * The same work as a plain shell loop: seed a private index, then per turn agent + snapshot + check, and
 * one record appended to a log and fsynced (`sync FILE`, GNU coreutils ≥ 8.24).
 */
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
    '  numstat=$(git diff-tree -r --raw --numstat -z "$prev" "$cur" | tr "\\0" " ")',
    '  patch=$(git diff-tree -r -p --full-index "$prev" "$cur" | git patch-id --stable)',
    `  sh -c '${checkFor(turns)}'; check=$?`,
    // The turn's record, durably: appended, then fsynced before the next turn starts.
    `  printf '{"turn":%d,"tree":"%s","prev":"%s","patch":"%s","check":%d,"numstat":"%s"}\\n' $i "$cur" "$prev" "$patch" $check "$numstat" >> '${state}/turns.jsonl'`,
    `  sync '${state}/turns.jsonl'`,
    '  prev=$cur',
    '  i=$((i+1))',
    'done',
  ].join('\n');
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script], { cwd: repo, env: goaldBenchEnv(dir), stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  if (code !== 0) throw new Error(`the shell loop over ${turns} turns exited ${code}`);
  return performance.now() - started;
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const r = await benchSupervisor({ runs: numberFlag(argv, '--runs') });
  const verdict = r.ratio <= SUPERVISOR_RATIO_TARGET ? 'within' : 'ABOVE';
  process.stdout.write(
    [
      `supervisor bench (node ${process.version}, median of ${r.runs} runs)`,
      `  goald start --foreground  ${SHORT_TURNS} turns ${r.supervisorShortMs} ms, ${LONG_TURNS} turns ${r.supervisorLongMs} ms → ${r.supervisorPerTurnMs} ms/turn (--no-sandbox)`,
      `  the same, sandboxed       ${SHORT_TURNS} turns ${r.sandboxedShortMs} ms, ${LONG_TURNS} turns ${r.sandboxedLongMs} ms → ${r.sandboxedPerTurnMs} ms/turn`,
      `  shell loop                ${SHORT_TURNS} turns ${r.shellShortMs} ms, ${LONG_TURNS} turns ${r.shellLongMs} ms → ${r.shellPerTurnMs} ms/turn`,
      `  ratio                     ${r.ratio} (${verdict} the ${SUPERVISOR_RATIO_TARGET} target)`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
