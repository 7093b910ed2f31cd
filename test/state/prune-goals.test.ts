// Retention on a real store in a temp home: which finished goals go, which stay, and what is freed.

import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../state/index.js';
import { pruneGoals, type PruneOptions } from '../../state/prune-goals.js';
import type { GoalRecord, LoopRecord, Store } from '../../state/types.js';
import { makeGoal } from './fixtures.js';
import { makeTempDir } from './helpers.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2026-03-01T00:00:00.000Z');
const daysAgo = (days: number): string => new Date(NOW - days * DAY_MS).toISOString();

function loop(id: string, lastGoalId: string | null): LoopRecord {
  return {
    id, workspace: '/tmp/ws', every: '1h', condition: null, options: {}, source: 'cli', createdAt: daysAgo(90), nextRunAt: null,
    lastRunAt: null, lastGoalId, lastOutcome: null, runs: 1, skipped: 0, waiting: false, catchUp: 'once', stopped: false,
  };
}

// A home with these goals, each with a directory holding `bytes` of transcript.
async function homeWith(goals: GoalRecord[], loops: LoopRecord[] = [], bytes = 10_000): Promise<Store> {
  const { dir, cleanup } = await makeTempDir();
  onTestFinished(cleanup);
  const store = await openStore(dir);
  await store.update((state) => {
    state.goals.push(...goals);
    state.loops.push(...loops);
  });
  for (const goal of goals) {
    const goalDir = path.join(dir, 'goals', goal.id);
    await mkdir(path.join(goalDir, 'objects', 'ab'), { recursive: true });
    await writeFile(path.join(goalDir, 'turn-1.log'), 'x'.repeat(bytes));
    await writeFile(path.join(goalDir, 'objects', 'ab', 'cdef'), 'object');
  }
  return store;
}

const finished = (id: string, days: number, status: 'achieved' | 'failed' = 'achieved'): GoalRecord =>
  makeGoal(id, { status, phase: status, reason: status === 'failed' ? 'max-turns' : null, finishedAt: daysAgo(days), updatedAt: daysAgo(days) });

const options = (over: Partial<PruneOptions> = {}): PruneOptions => ({ olderThanMs: 30 * DAY_MS, keep: 0, dryRun: false, now: NOW, ...over });

async function ids(store: Store): Promise<string[]> {
  return (await store.read()).goals.map((goal) => goal.id).sort();
}

describe('pruneGoals', () => {
  it('deletes finished goals older than the limit (records and directories), keeping younger ones', async () => {
    const store = await homeWith([finished('old1', 40), finished('old2', 31, 'failed'), finished('young', 5)]);
    const result = await pruneGoals(store, options());
    expect(result.goals.map((goal) => goal.id)).toEqual(['old2', 'old1']);
    expect(result.kept).toBe(1);
    expect(await ids(store)).toEqual(['young']);
    expect(existsSync(path.join(store.home, 'goals', 'old1'))).toBe(false);
    expect(existsSync(path.join(store.home, 'goals', 'young', 'turn-1.log'))).toBe(true);
    // Counted as du does (allocated blocks): at least the bytes written, per goal.
    for (const goal of result.goals) expect(goal.bytes).toBeGreaterThanOrEqual(10_000);
    expect(result.bytes).toBe(result.goals.reduce((sum, goal) => sum + goal.bytes, 0));
  });

  it('keeps the n most recently finished whatever their age', async () => {
    const store = await homeWith([finished('a', 50), finished('b', 40), finished('c', 60), finished('d', 45)]);
    const result = await pruneGoals(store, options({ keep: 2 }));
    expect(result.goals.map((goal) => goal.id).sort()).toEqual(['a', 'c']);
    expect(await ids(store)).toEqual(['b', 'd']);
  });

  it('never touches active, paused or queued goals, a loop\'s latest run, or a goal the caller holds', async () => {
    const store = await homeWith(
      [
        makeGoal('running', { status: 'active', phase: 'running', updatedAt: daysAgo(90) }),
        makeGoal('queued', { status: 'active', phase: 'queued', updatedAt: daysAgo(90) }),
        makeGoal('paused', { status: 'paused', phase: 'paused', updatedAt: daysAgo(90) }),
        finished('loop-last', 90),
        finished('held', 90),
        finished('gone', 90),
      ],
      [loop('l1', 'loop-last'), loop('l2', null)],
    );
    const result = await pruneGoals(store, options({ olderThanMs: 0, isBusy: (id) => id === 'held' }));
    expect(result.goals.map((goal) => goal.id)).toEqual(['gone']);
    expect(await ids(store)).toEqual(['held', 'loop-last', 'paused', 'queued', 'running']);
  });

  it('--dry-run reports the same selection and size and deletes nothing', async () => {
    const store = await homeWith([finished('old', 40), finished('young', 1)]);
    const dry = await pruneGoals(store, options({ dryRun: true }));
    expect(dry).toMatchObject({ dryRun: true, kept: 1, goals: [{ id: 'old' }] });
    expect(await ids(store)).toEqual(['old', 'young']);
    expect(existsSync(path.join(store.home, 'goals', 'old', 'turn-1.log'))).toBe(true);
    const real = await pruneGoals(store, options());
    expect(real.goals).toEqual(dry.goals);
    expect(real.bytes).toBe(dry.bytes);
  });

  it('deletes a finished goal whose directory is already gone (0 bytes), and nothing outside goals/', async () => {
    const store = await homeWith([finished('old', 40)]);
    await writeFile(path.join(store.home, 'goals', 'keep-me.txt'), 'not a goal');
    await rm(path.join(store.home, 'goals', 'old'), { recursive: true });
    const result = await pruneGoals(store, options());
    expect(result.goals).toMatchObject([{ id: 'old', bytes: 0 }]);
    expect(existsSync(path.join(store.home, 'goals', 'keep-me.txt'))).toBe(true);
    expect(existsSync(path.join(store.home, 'state.json'))).toBe(true);
  });
});
