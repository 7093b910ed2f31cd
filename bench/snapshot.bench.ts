// Snapshot cost against `git status` on a large repository (DESIGN.md: "on 50k files this costs about
// what `git status` costs"). Run alone with `node dist/bench/snapshot.bench.js [--files N] [--runs N]`.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { resolveWorkspace } from '../src/workspace/find-workspace.js';
import { runGit } from '../src/workspace/git.js';
import { createSnapshotter } from '../src/workspace/snapshot.js';
import { median, numberFlag, round, runWhenMain } from './bench-runner.js';

export interface SnapshotBenchResult {
  files: number;
  runs: number;
  /** Median wall time of one snapshot() after the seeding one. */
  snapshotMs: number;
  /** Median wall time of `git status --porcelain` on the same tree. */
  gitStatusMs: number;
  /** snapshotMs / gitStatusMs; the target is ≤ 1.3. */
  ratio: number;
  /** Time spent building the repository, for the curious. */
  setupMs: number;
}

const FILES_PER_DIR = 100;
const CHANGED_FILES = 5;
const UNTRACKED_FILES = 5;
// Parallel file writes while generating; more only queues in libuv's 4-thread pool.
const WRITE_CONCURRENCY = 64;
// Generated files are dated an hour back so none is "racily clean" against the index, as in a real repo
// whose files were not all written in the same second as its index.
const FILE_AGE_S = 3_600;

/** Measures the median snapshot() against the median `git status --porcelain` on a generated repository. */
export async function benchSnapshot(opts: { files?: number; runs?: number } = {}): Promise<SnapshotBenchResult> {
  const files = opts.files ?? 50_000;
  const runs = opts.runs ?? 7;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-bench-')));
  try {
    const repo = path.join(root, 'repo');
    const setupStarted = performance.now();
    await generateRepository(repo, files);
    const setupMs = performance.now() - setupStarted;

    const ws = await resolveWorkspace(repo);
    const snapshotter = await createSnapshotter({ ...ws, workspace: ws.root, stateDir: path.join(root, 'state') });
    const status = (): Promise<unknown> => runGit(['status', '--porcelain'], { cwd: repo });

    // Warm up: the seeding snapshot writes every new object; one more of each fills the page cache.
    await snapshotter.snapshot();
    await snapshotter.snapshot();
    await status();

    const snapshotTimes: number[] = [];
    const statusTimes: number[] = [];
    // Interleaved so drift (other load, cache state) weighs on both sides alike.
    for (let i = 0; i < runs; i++) {
      snapshotTimes.push(await time(() => snapshotter.snapshot()));
      statusTimes.push(await time(status));
    }
    const snapshotMs = median(snapshotTimes);
    const gitStatusMs = median(statusTimes);
    return {
      files,
      runs,
      snapshotMs: round(snapshotMs),
      gitStatusMs: round(gitStatusMs),
      ratio: round(snapshotMs / gitStatusMs),
      setupMs: Math.round(setupMs),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Writes `count` small files, commits them with fast-import, then leaves a few modified and untracked. */
/** A committed repository of `count` files (plus a few changed and untracked ones), as the snapshot bench uses. */
export async function generateRepository(repo: string, count: number): Promise<void> {
  await mkdir(repo, { recursive: true });
  await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
  await runGit(['config', 'gc.auto', '0'], { cwd: repo });

  const names = Array.from({ length: count }, (_, i) => fileName(i));
  const dirs = new Set(names.map((name) => path.dirname(name)));
  for (const dir of dirs) await mkdir(path.join(repo, dir), { recursive: true });
  const past = Date.now() / 1000 - FILE_AGE_S;
  await forEachLimited(names, WRITE_CONCURRENCY, async (name, i) => {
    const file = path.join(repo, name);
    await writeFile(file, contentOf(i));
    await utimes(file, past, past);
  });

  // fast-import writes one pack instead of `count` loose objects: seconds instead of a minute.
  const stream: string[] = [];
  names.forEach((_, i) => {
    const data = contentOf(i);
    stream.push(`blob\nmark :${i + 1}\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  });
  stream.push('commit refs/heads/main\ncommitter goald bench <bench@example.invalid> 0 +0000\ndata 6\nbench\n');
  names.forEach((name, i) => stream.push(`M 100644 :${i + 1} ${name}\n`));
  stream.push('\n');
  await runGit(['fast-import', '--quiet'], { cwd: repo, input: stream.join('') });
  // Index from HEAD, refreshed against the files on disk so it carries their stat data like a real one.
  await runGit(['reset', '--quiet', '--mixed', 'HEAD'], { cwd: repo });
  await runGit(['update-index', '--refresh', '-q'], { cwd: repo, allowFailure: true });

  for (let i = 0; i < CHANGED_FILES; i++) {
    const index = Math.floor((i * count) / CHANGED_FILES);
    await writeFile(path.join(repo, fileName(index)), `${contentOf(index)}changed\n`);
  }
  for (let i = 0; i < UNTRACKED_FILES; i++) {
    await writeFile(path.join(repo, fileName(0).replace(/[^/]+$/, `untracked-${i}.txt`)), `new ${i}\n`);
  }
}

function fileName(i: number): string {
  const dir = Math.floor(i / FILES_PER_DIR);
  return `d${Math.floor(dir / 100)}/d${dir}/f${i}.txt`;
}

function contentOf(i: number): string {
  return `file ${i}\n`;
}

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const gitVersion = await new Promise<string>((resolve) => {
    const child = spawn('git', ['--version']);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('close', () => resolve(out.trim()));
    child.on('error', () => resolve('git not found'));
  });
  const result = await benchSnapshot({ files: numberFlag(argv, '--files'), runs: numberFlag(argv, '--runs') });
  const verdict = result.ratio <= 1.3 ? 'within' : 'ABOVE';
  process.stdout.write(
    [
      `snapshot bench (${gitVersion}, node ${process.version})`,
      `  files            ${result.files} (+${UNTRACKED_FILES} untracked, ${CHANGED_FILES} modified)`,
      `  setup            ${result.setupMs} ms`,
      `  runs             ${result.runs}`,
      `  snapshot()       ${result.snapshotMs} ms (median)`,
      `  git status       ${result.gitStatusMs} ms (median)`,
      `  ratio            ${result.ratio} (${verdict} the 1.3 target)`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
