// Worktree goals and races (issue 12). (1) Creating a worktree goal's worktree and branch on a 50 000-file
// repository (what goald adds: the HEAD and branch-name lookups, the workspace resolution) against a bare
// `git worktree add` on the same repository (target ≤ 1.2×). (2) A race of 4 agents that sleep 1 s
// against the same 4 goals one after another, through the real daemon (target ≤ 0.4× the wall time).
// Run alone with `node dist/bench/worktree.bench.js [--files N] [--runs N]`. Each run checks 50 000 files
// out twice: a few seconds on an idle machine, minutes when the disk is busy, so the default is a median of
// 3. The checkouts are deleted after the last timed run, not between runs: on ext4 without a journal a new
// inode skips every inode freed in the last minute or more, and a checkout right after deleting 50 000
// files took 6–18 s where the same checkout took ~1 s with none freed (2026-12-06, thirteenth session).

import { spawn } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { resolveWorkspace } from '../src/workspace/find-workspace.js';
import { runGit } from '../src/workspace/git.js';
import { createGoalWorktree, removeGoalWorktree, deleteGoalBranch } from '../src/worktree/goal-worktree.js';
import { GOALD_BIN, median, numberFlag, round, runWhenMain } from './bench-runner.js';
import { generateRepository } from './snapshot.bench.js';

export const WORKTREE_RATIO_TARGET = 1.2;
export const RACE_RATIO_TARGET = 0.4;

export interface WorktreeBenchResult {
  files: number;
  runs: number;
  goaldMs: number;
  gitMs: number;
  ratio: number;
}

/** Median goald worktree creation against median `git worktree add`, interleaved. */
export async function benchWorktreeCreation(opts: { files?: number; runs?: number } = {}): Promise<WorktreeBenchResult> {
  const files = opts.files ?? 50_000;
  const runs = opts.runs ?? 3;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-bench-wt-')));
  try {
    const repo = path.join(root, 'repo');
    await generateRepository(repo, files);
    const home = path.join(root, 'home');
    const goaldTimes: number[] = [];
    const gitTimes: number[] = [];
    // Each run's cleanup, run once every run is timed (see the top of this file).
    const cleanups: (() => Promise<void>)[] = [];
    const timeGoald = async (i: number): Promise<void> => {
      const started = performance.now();
      const worktree = await createGoalWorktree({ repo, home, goalId: `gbench${String(i).padStart(6, '0')}` });
      await resolveWorkspace(worktree.dir);
      goaldTimes.push(performance.now() - started);
      // Cleanup is not timed: rm, then git forgets the worktree and the branch.
      cleanups.push(async () => {
        await rm(worktree.dir, { recursive: true, force: true });
        await removeGoalWorktree(worktree, home);
        await deleteGoalBranch(repo, worktree.branch);
      });
    };
    const timeGit = async (i: number): Promise<void> => {
      const dir = path.join(root, `plain-${i}`);
      const started = performance.now();
      // No deadline, like goald's own checkout (which gets 15 min): a busy disk takes minutes for 50 000 files.
      await runGit(['worktree', 'add', '--quiet', '-b', `plain-${i}`, dir, 'HEAD'], { cwd: repo, timeoutMs: 0 });
      gitTimes.push(performance.now() - started);
      cleanups.push(async () => {
        await rm(dir, { recursive: true, force: true });
        await runGit(['worktree', 'prune'], { cwd: repo });
      });
    };
    // The order alternates, so neither side always follows the other's writeback or cache.
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        await timeGoald(i);
        await timeGit(i);
      } else {
        await timeGit(i);
        await timeGoald(i);
      }
    }
    for (const cleanup of cleanups) await cleanup();
    const goaldMs = median(goaldTimes);
    const gitMs = median(gitTimes);
    return { files, runs, goaldMs: round(goaldMs), gitMs: round(gitMs), ratio: round(goaldMs / gitMs) };
  } finally {
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  }
}

export interface RaceBenchResult {
  raceMs: number;
  sequentialMs: number;
  ratio: number;
}

/** `goald race` of 4 sleeping agents against 4 `goald start --worktree --wait` one after another. */
export async function benchRace(): Promise<RaceBenchResult> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-bench-race-')));
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: path.join(root, 'h'), HOME: root, XDG_CONFIG_HOME: path.join(root, 'config'), GOALD_SANDBOX: 'off' };
  for (const name of Object.keys(env)) if ((name.startsWith('GOALD_') && !['GOALD_HOME', 'GOALD_SANDBOX'].includes(name)) || name.startsWith('GIT_') || name.endsWith('_API_KEY')) delete env[name];
  const goald = (args: string[]): Promise<number | null> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [GOALD_BIN, ...args], { env, stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', resolve);
    });
  try {
    const repo = path.join(root, 'repo');
    await generateRepository(repo, 200);
    await runGit(['commit', '--quiet', '-am', 'changes'], { cwd: repo, env: { GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' } });
    const agent = 'sleep 1; echo done > done.txt';
    const common = ['-C', repo, '--cooldown', '0', '--evaluator', 'none', '--check', 'test -f done.txt'];
    await goald(['daemon']);
    let started = performance.now();
    for (let i = 0; i < 4; i++) await goald(['start', 'done', ...common, '--worktree', '--agent', agent, '--wait']);
    const sequentialMs = performance.now() - started;
    started = performance.now();
    await goald(['race', 'done', ...common, '--pick', 'best', ...Array.from({ length: 4 }, () => ['--agent', agent]).flat(), '--wait']);
    const raceMs = performance.now() - started;
    await goald(['daemon', 'stop']);
    return { raceMs: round(raceMs), sequentialMs: round(sequentialMs), ratio: round(raceMs / sequentialMs) };
  } finally {
    // The stopping daemon may still write its last lines into the home: rm retries a directory that refilled.
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  }
}

runWhenMain(import.meta.url, async (argv) => {
  // The race first: deleting the 50 000-file checkouts keeps the disk busy for a while after.
  const race = await benchRace();
  process.stdout.write(`race of 4 sleeping agents ${race.raceMs} ms, 4 sequential goals ${race.sequentialMs} ms, ${race.ratio}× (target ≤ ${RACE_RATIO_TARGET})\n`);
  const created = await benchWorktreeCreation({ files: numberFlag(argv, '--files'), runs: numberFlag(argv, '--runs') });
  process.stdout.write(`worktree goal creation, ${created.files} files: goald ${created.goaldMs} ms, git worktree add ${created.gitMs} ms, ${created.ratio}× (target ≤ ${WORKTREE_RATIO_TARGET})\n`);
});
