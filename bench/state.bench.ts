// What a running goal's write to state.json costs as the home's history grows. state.json holds every goal
// the home ran, and a running goal writes its record there twice a turn (its agent's pid, then the turn's
// end); `goald loop 30m` alone adds 48 finished goals a day. Measured: one goal's write (Store.updateGoal,
// the supervisor's) in a home holding that goal only, and in one holding it beside 1 000 finished goals
// (copies of a real goal's record, made by running goald once); the whole-state update (Store.update) in the
// large home is reported beside them. And a registration there as a new process makes it (a store that has
// read nothing yet): Store.addGoal, which checks the new record only, beside the same goal pushed by a
// whole-state update. Each figure is the median of interleaved runs, fsync included.
// Run alone with `node dist/bench/state.bench.js [--runs N]` after `npm run build`.

import { mkdir, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { openStore } from '../state/store.js';
import type { GoalRecord, Store } from '../state/types.js';
import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, goaldBenchEnv, median, numberFlag, round, runNodeToExit, runWhenMain } from './bench-runner.js';

export const HISTORY_GOALS = 1_000;

export interface StateBenchResult {
  runs: number;
  /** Bytes of state.json with HISTORY_GOALS finished goals. */
  largeFileBytes: number;
  /** Median ms of one goal's write in a home holding only that goal. */
  aloneMs: number;
  /** The same beside HISTORY_GOALS finished goals. */
  withHistoryMs: number;
  /** withHistoryMs / aloneMs. */
  ratio: number;
  /** Median ms of a whole-state update (Store.update) of the same goal beside the history. */
  wholeStateMs: number;
  /** Median ms of a registration (Store.addGoal) beside the history, by a store that has read nothing yet. */
  registrationMs: number;
  /** The same registration as a whole-state update (Store.update pushing the goal). */
  registrationByUpdateMs: number;
}

/** Measures one goal's state write alone and beside a large history. */
export async function benchState(opts: { runs?: number } = {}): Promise<StateBenchResult> {
  const runs = opts.runs ?? 30;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gstate-')));
  try {
    const record = await realGoalRecord(root);
    const alone = await homeWith(path.join(root, 'alone'), [liveCopy(record)]);
    const finished = Array.from({ length: HISTORY_GOALS }, (_, index) => ({ ...structuredClone(record), id: `gh${String(index).padStart(10, '0')}` }));
    const large = await homeWith(path.join(root, 'large'), [...finished, liveCopy(record)]);
    // Registrations go to a home of their own: a write by another store sends the one-goal writes above to
    // their slow path (a file they did not write is read and checked whole).
    const registrations = path.join(root, 'registrations');
    await homeWith(registrations, finished);
    let tick = 0;
    const touch = (goal: GoalRecord): void => {
      goal.updatedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, (tick += 1))).toISOString();
      goal.phase = tick % 2 === 0 ? 'running' : 'checking';
    };
    const timed = async (write: () => Promise<unknown>): Promise<number> => {
      const started = performance.now();
      await write();
      return performance.now() - started;
    };
    const writeGoal = (store: Store) => (): Promise<number> => timed(() => store.updateGoal('glive', touch));
    const writeWhole = (store: Store) => (): Promise<number> =>
      timed(() =>
        store.update((state) => {
          const goal = state.goals.find((candidate) => candidate.id === 'glive');
          if (goal !== undefined) touch(goal);
        }),
      );
    let registered = 0;
    const newGoal = (): GoalRecord => ({ ...liveCopy(record), id: `gnew${String((registered += 1)).padStart(8, '0')}` });
    // A fresh store each time: a new process's first read of the file, and its schema pass, included.
    const register = (): Promise<number> => {
      const goal = newGoal();
      return timed(async () => (await openStore(registrations, { env: {} })).addGoal(goal, () => true));
    };
    const registerByUpdate = (): Promise<number> => {
      const goal = newGoal();
      return timed(async () => (await openStore(registrations, { env: {} })).update((state) => void state.goals.push(goal)));
    };
    const sides = { alone: writeGoal(alone), withHistory: writeGoal(large), whole: writeWhole(large), register, registerByUpdate };
    for (const write of Object.values(sides)) await write(); // warm
    const times = { alone: [] as number[], withHistory: [] as number[], whole: [] as number[], register: [] as number[], registerByUpdate: [] as number[] };
    for (let i = 0; i < runs; i++) {
      times.alone.push(await sides.alone());
      times.withHistory.push(await sides.withHistory());
      times.whole.push(await sides.whole());
      times.register.push(await sides.register());
      times.registerByUpdate.push(await sides.registerByUpdate());
    }
    const { size } = await stat(path.join(root, 'large', 'state.json'));
    const aloneMs = median(times.alone);
    const withHistoryMs = median(times.withHistory);
    return {
      runs,
      largeFileBytes: size,
      aloneMs: round(aloneMs),
      withHistoryMs: round(withHistoryMs),
      ratio: round(withHistoryMs / aloneMs),
      wholeStateMs: round(median(times.whole)),
      registrationMs: round(median(times.register)),
      registrationByUpdateMs: round(median(times.registerByUpdate)),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** A finished goal's record as goald writes it: one real `goald start --foreground` run in `root`. */
export async function realGoalRecord(root: string): Promise<GoalRecord> {
  const repo = path.join(root, 'repo');
  await mkdir(repo, { recursive: true });
  await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
  await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
  const runDir = path.join(root, 'real');
  const args = [GOALD_BIN, 'start', 'f.txt exists', '--foreground', '-C', repo, '--agent', 'touch f.txt', '--check', 'test -f f.txt', '--evaluator', 'none', '--no-sandbox', '--json'];
  await runNodeToExit(args, goaldBenchEnv(runDir), 'goald start --foreground');
  const home = path.join(runDir, 'h');
  const [goal] = (await (await openStore(home, { env: {} })).read()).goals;
  if (goal === undefined) throw new Error('the goal run for its record left no record');
  return goal;
}

function liveCopy(record: GoalRecord): GoalRecord {
  return { ...structuredClone(record), id: 'glive', status: 'active', phase: 'running', finishedAt: null, reason: null, reasonMessage: null };
}

async function homeWith(home: string, goals: GoalRecord[]): Promise<Store> {
  const store = await openStore(home, { env: {} });
  await store.update((state) => {
    state.goals.push(...goals);
  });
  return store;
}

/** Prints the figures when this file is run directly. */
async function main(argv: string[]): Promise<void> {
  const r = await benchState({ runs: numberFlag(argv, '--runs') });
  process.stdout.write(
    [
      `state bench (node ${process.version}, median of ${r.runs})`,
      `  one goal's write, home with that goal only   ${r.aloneMs} ms`,
      `  the same beside ${HISTORY_GOALS} finished goals        ${r.withHistoryMs} ms, ${r.ratio}× (state.json ${(r.largeFileBytes / 1e6).toFixed(1)} MB)`,
      `  a whole-state update there                   ${r.wholeStateMs} ms`,
      `  a registration there, by a fresh store       ${r.registrationMs} ms (Store.addGoal; ${r.registrationByUpdateMs} ms as a whole-state update)`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
