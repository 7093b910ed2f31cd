// The tamper guard's per-turn cost (issue 9: "≤ 5 ms or ≤ 5 % per turn, whichever is larger"): a 5 000-file
// repository, turns that alternate between two states each about 200 changed lines from the start, and for
// each turn what the supervisor does after the agent (supervisor.ts observeWorkspace): the snapshot, then
// at once the turn's delta and the changes since the start, the goal's check (the repository's own tests,
// `node --test`), and, with the guard, inspectTurn as soon as the changes are known. Turns with and without
// the guard interleave in one run; the figure is what the guard adds to a turn's wall time (the median
// turn with it minus the median turn without), with the guard's own duration beside it. Two kinds of turn:
// one that changes source files only (the guard keeps the last turn's test findings: no git process), and
// one that also changes a test file and package.json (one `git diff-tree` of those paths: the guard's
// worst ordinary case, hidden behind the check). Run alone with `node dist/bench/guard.bench.js [--files N]
// [--runs N]`.

import { mkdtemp, realpath, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { DEFAULT_GUARD } from '../src/config/defaults.js';
import { goaldPathsIn } from '../src/guard/goald-paths.js';
import { inspectTurn } from '../src/guard/inspect-turn.js';
import { cleanReport, type GuardReport } from '../src/guard/types.js';
import { resolveWorkspace } from '../src/workspace/find-workspace.js';
import { runGit } from '../src/workspace/git.js';
import { createCheckRunner } from '../src/workspace/checks.js';
import { createSnapshotter } from '../src/workspace/snapshot.js';
import { median, numberFlag, round, runWhenMain } from './bench-runner.js';

/** The larger of the two bounds applies (issue 9 § Benchmark). */
export const GUARD_EXTRA_MS_TARGET = 5;
export const GUARD_EXTRA_SHARE_TARGET = 0.05;

export interface GuardBenchResult {
  files: number;
  runs: number;
  /** What the turns change besides source files. */
  turns: TurnKind;
  /** Changed lines (added + deleted) between the start and each turn's tree. */
  patchLines: number;
  /** Median turn without the guard: snapshot, then the turn's delta, the changes since the start and the check at once. */
  withoutMs: number;
  /** Median of the same turns with inspectTurn started once the changes are known. */
  withMs: number;
  /**
   * What the guard adds to a turn's wall time, measured inside each guarded turn: when the last of the
   * deltas, the check and the guard ended, minus when the last of the deltas and the check ended (median).
   * Unlike withMs − withoutMs, the check's own variance (hundreds of ms under load) does not swamp it.
   */
  addedMs: number;
  /** withMs − withoutMs, for context (noisy: two medians of turns dominated by the check). */
  medianDifferenceMs: number;
  /** Median of inspectTurn's own duration in the turns that ran it. */
  guardMs: number;
  /** addedMs / withoutMs. */
  share: number;
  /** The bound that applies: max(5 ms, 5 % of withoutMs). */
  targetMs: number;
  /** Findings on the last turn (the bench's turns are honest: must be 0). */
  findings: number;
}

const FILES_PER_DIR = 100;
/** The goal's check: the repository's own tests (package.json's `test` script runs the same). */
const CHECK = 'node --test test/module.test.js';
/** `source`: source files only; `tests`: a test file and package.json too. */
export type TurnKind = 'source' | 'tests';

const SOURCE_FILES_CHANGED = 4;
const LINES_PER_SOURCE_FILE = 20; // 4 files × 20 lines replaced = 160 changed lines (+80 -80)
const TEST_LINES = 36; // `tests`: + 36 added to a test file, and package.json (scripts no check runs): 4 more
const EXTRA_SOURCE_LINES = 40; // `source`: a fifth source file instead, so both kinds change about 200 lines

/** Measures the guard's cost per turn against the snapshot and delta every turn already pays for. */
export async function benchGuard(opts: { files?: number; runs?: number; turns?: TurnKind } = {}): Promise<GuardBenchResult> {
  const files = opts.files ?? 5_000;
  const runs = opts.runs ?? 15;
  const turns = opts.turns ?? 'tests';
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-guard-bench-')));
  try {
    const repo = path.join(root, 'repo');
    await generateRepository(repo, files);
    const ws = await resolveWorkspace(repo);
    const snapshotter = await createSnapshotter({ ...ws, workspace: ws.root, stateDir: path.join(root, 'state') });
    const initialTree = await snapshotter.snapshot();
    const settings = { ...DEFAULT_GUARD, testFiles: [...DEFAULT_GUARD.testFiles] };
    const goaldPaths = goaldPathsIn(repo, { home: path.join(root, 'home'), userConfig: path.join(root, 'config.json') });

    const checks = createCheckRunner({ workspace: repo, checks: [{ name: 'tests', run: CHECK, timeoutMs: 60_000 }] });
    const without: number[] = [];
    const withGuard: number[] = [];
    const guard: number[] = [];
    const added: number[] = [];
    let patchLines = 0;
    let findings = 0;
    // Two warm-up turns, then 2 × `runs` measured ones. The tree flips between two states every turn and
    // the guard is on every other pair of turns, so both variants see both states.
    let previousTree = initialTree;
    let prior: GuardReport = cleanReport();
    for (let i = 0; i < 2 * runs + 2; i++) {
      const guarded = Math.floor(i / 2) % 2 === 1;
      await writeTurnState(repo, i % 2 === 0 ? 2 : 3, turns);
      const started = performance.now();
      const tree = await snapshotter.snapshot();
      const deltas = Promise.all([snapshotter.diff(previousTree, tree), snapshotter.diff(initialTree, tree)]);
      const ended = (promise: Promise<unknown>): Promise<number> => promise.then(() => performance.now());
      const inspected = deltas.then(async ([delta, sinceStart]) => {
        if (!guarded) return null;
        const input = { delta: sinceStart, turnFiles: delta.files, prior, toolCalls: [], workspace: repo, checkCommands: [CHECK], settings, goaldPaths };
        const guardStarted = performance.now();
        const report = await inspectTurn(input, snapshotter);
        guard.push(performance.now() - guardStarted);
        return report;
      });
      const checked = checks.run();
      const [[, sinceStart], , report, deltasEnd, checkEnd, guardEnd] = await Promise.all([deltas, checked, inspected, ended(deltas), ended(checked), ended(inspected)]);
      const elapsed = performance.now() - started;
      previousTree = tree;
      if (report !== null) {
        prior = report;
        findings = report.tamper.length;
      }
      if (i < 2) {
        patchLines = sinceStart.files.reduce((sum, file) => sum + (file.added ?? 0) + (file.deleted ?? 0), 0);
        guard.length = 0;
        added.length = 0;
        continue;
      }
      (guarded ? withGuard : without).push(elapsed);
      if (guarded) added.push(Math.max(0, guardEnd - Math.max(deltasEnd, checkEnd)));
    }
    const withoutMs = median(without);
    const withMs = median(withGuard);
    const addedMs = median(added);
    return {
      files,
      runs,
      turns,
      patchLines,
      withoutMs: round(withoutMs),
      withMs: round(withMs),
      addedMs: round(addedMs),
      medianDifferenceMs: round(withMs - withoutMs),
      guardMs: round(median(guard)),
      share: round(addedMs / withoutMs),
      targetMs: round(Math.max(GUARD_EXTRA_MS_TARGET, GUARD_EXTRA_SHARE_TARGET * withoutMs)),
      findings,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function sourceFile(i: number): string {
  return `src/module${i}.js`;
}

// The project files at the start (factor 1) and in the states turns move between (factors 2 and 3).
async function writeTurnState(repo: string, factor: number, turns: TurnKind): Promise<void> {
  const changed = factor !== 1;
  for (let i = 0; i < SOURCE_FILES_CHANGED; i++) {
    const lines = Array.from({ length: LINES_PER_SOURCE_FILE }, (_, n) => `export const value${n} = ${n * factor};`);
    await writeFile(path.join(repo, sourceFile(i)), `${lines.join('\n')}\n`);
  }
  const extra = Array.from({ length: turns === 'source' && changed ? EXTRA_SOURCE_LINES : 0 }, (_, n) => `export const extra${n} = ${n * factor};`);
  await writeFile(path.join(repo, sourceFile(SOURCE_FILES_CHANGED)), `${extra.join('\n')}\n`);
  if (turns === 'source' && changed) return;
  const tests = Array.from({ length: changed ? TEST_LINES : 0 }, (_, n) => `test('case ${n}', () => { assert.equal(value${n}, ${n * factor}); });`);
  await writeFile(path.join(repo, 'test/module.test.js'), ["import { test } from 'node:test';", "import assert from 'node:assert';", ...tests, ''].join('\n'));
  const scripts: Record<string, string> = { test: 'node --test', lint: 'eslint .' };
  if (changed) Object.assign(scripts, { build: `tsc -p . # ${factor}`, format: 'prettier -w .' });
  await writeFile(path.join(repo, 'package.json'), `${JSON.stringify({ name: 'bench', private: true, scripts }, null, 2)}\n`);
}

/** `count` small committed files (fast-import: one pack), plus the project files a turn changes. */
async function generateRepository(repo: string, count: number): Promise<void> {
  await mkdir(path.join(repo, 'src'), { recursive: true });
  await mkdir(path.join(repo, 'test'), { recursive: true });
  await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
  await runGit(['config', 'gc.auto', '0'], { cwd: repo });
  const names = Array.from({ length: count }, (_, i) => `lib/d${Math.floor(i / FILES_PER_DIR)}/f${i}.txt`);
  const stream: string[] = [];
  names.forEach((_, i) => {
    const data = `file ${i}\n`;
    stream.push(`blob\nmark :${i + 1}\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  });
  stream.push('commit refs/heads/main\ncommitter goald bench <bench@example.invalid> 0 +0000\ndata 6\nbench\n');
  names.forEach((name, i) => stream.push(`M 100644 :${i + 1} ${name}\n`));
  stream.push('\n');
  await runGit(['fast-import', '--quiet'], { cwd: repo, input: stream.join('') });
  // The work tree and index from HEAD, then the project files in their original state, committed.
  await runGit(['checkout', '--quiet', '--force', 'main'], { cwd: repo });
  await writeTurnState(repo, 1, 'tests');
  await runGit(['add', '--all'], { cwd: repo });
  await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '-m', 'project'], { cwd: repo });
}

export interface IgnoredLookResult {
  ignoredFiles: number;
  runs: number;
  /** Median of the guard's look at the ignored files (snapshotter.ignoredChanges) after a turn that edited one. */
  lookMs: number;
  /** Median of `git status --porcelain` in the same repository, interleaved: the reference a user knows. */
  gitStatusMs: number;
  ratio: number;
}

/**
 * The look at files git ignores that a turn whose checks all passed pays for (src/workspace/ignored-changes.ts,
 * run after the checks): a repository with `ignoredFiles` files under an ignored node_modules/, one of them
 * edited in the "agent's" window each run. It must find that file, and only it.
 */
export async function benchIgnoredLook(opts: { ignoredFiles?: number; runs?: number } = {}): Promise<IgnoredLookResult> {
  const ignoredFiles = opts.ignoredFiles ?? 20_000;
  const runs = opts.runs ?? 15;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-ignored-bench-')));
  try {
    const repo = path.join(root, 'repo');
    await generateRepository(repo, 1_000);
    await writeFile(path.join(repo, '.gitignore'), 'node_modules/\n');
    await runGit(['add', '.gitignore'], { cwd: repo });
    await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '-m', 'ignore'], { cwd: repo });
    for (let dir = 0; dir * FILES_PER_DIR < ignoredFiles; dir++) {
      await mkdir(path.join(repo, 'node_modules', `pkg${dir}`), { recursive: true });
      const count = Math.min(FILES_PER_DIR, ignoredFiles - dir * FILES_PER_DIR);
      await Promise.all(Array.from({ length: count }, (_, i) => writeFile(path.join(repo, 'node_modules', `pkg${dir}`, `f${i}.js`), `module.exports = ${i};\n`)));
    }
    const ws = await resolveWorkspace(repo);
    const snapshotter = await createSnapshotter({ ...ws, workspace: ws.root, stateDir: path.join(root, 'state') });
    const look: number[] = [];
    const status: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const edited = path.join(repo, 'node_modules', `pkg${i % 10}`, 'f0.js');
      // The window opens as the supervisor opens it: at a ctime the kernel stamped (its clock may lag the wall clock).
      const marker = path.join(root, 'marker');
      await writeFile(marker, String(i));
      const from = Math.min(Date.now(), (await stat(marker)).ctimeMs);
      await writeFile(edited, `module.exports = 'run ${i}';\n`);
      const window = { from, to: Date.now() };
      const lookStarted = performance.now();
      const found = await snapshotter.ignoredChanges?.([window]);
      const lookMs = performance.now() - lookStarted;
      if (found?.files.length !== 1 || found.files[0]?.path !== path.relative(repo, edited)) throw new Error(`the look found ${JSON.stringify(found)}`);
      const statusStarted = performance.now();
      await runGit(['status', '--porcelain'], { cwd: repo });
      const statusMs = performance.now() - statusStarted;
      if (i === 0) continue; // warm-up
      look.push(lookMs);
      status.push(statusMs);
    }
    return { ignoredFiles, runs, lookMs: round(median(look)), gitStatusMs: round(median(status)), ratio: round(median(look) / median(status)) };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  process.stdout.write(`guard bench (node ${process.version})\n`);
  for (const turns of ['source', 'tests'] as const) {
    const r = await benchGuard({ files: numberFlag(argv, '--files'), runs: numberFlag(argv, '--runs'), turns });
    const verdict = r.addedMs <= r.targetMs ? 'within' : 'ABOVE';
    process.stdout.write(
      [
        `  turns changing ${turns === 'source' ? 'source files only' : 'a test file and package.json too'}`,
        `    files            ${r.files}, ${r.patchLines} changed lines per turn, ${r.runs} runs`,
        `    turn, no guard   ${r.withoutMs} ms (snapshot, then deltas and the check at once; median)`,
        `    turn, guard      ${r.withMs} ms (median)`,
        `    guard adds       ${r.addedMs} ms to a turn (${Math.round(r.share * 1000) / 10} %; median, inside each turn), ${verdict} the ${r.targetMs} ms target`,
        `    medians differ   ${r.medianDifferenceMs} ms (turns with the guard − without; noisy)`,
        `    guard alone      ${r.guardMs} ms (median; beside the check)`,
        '',
      ].join('\n'),
    );
  }
  const look = await benchIgnoredLook({ runs: numberFlag(argv, '--runs') });
  process.stdout.write(`  look at ignored files (a passing turn), ${look.ignoredFiles} ignored files: ${look.lookMs} ms; git status ${look.gitStatusMs} ms (${look.ratio}×)\n`);
}

runWhenMain(import.meta.url, main);
