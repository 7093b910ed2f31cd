// Retention: deleting finished goals' records and directories (transcripts, prompts, turn and event logs,
// the private snapshot index and objects) beyond the limits the user gives. A finished goal is deleted
// only when nothing protects it: it finished within `olderThanMs`, it is one of the `keep` most recently
// finished goals, a loop names it as its latest run (`goald loop list` shows that run's outcome), or the
// caller says it is busy (the daemon still closing it). Active, paused and queued goals are never touched.

import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrnoCode } from '../src/errno.js';
import { isSafeId } from './paths.js';
import type { GoalRecord, StateFile, Store } from './types.js';

export interface PruneOptions {
  /** Goals that finished less than this long ago are kept (0: age protects none). */
  olderThanMs: number;
  /** The most recently finished goals kept whatever their age (0: none). */
  keep: number;
  /** Only say what would be deleted. */
  dryRun: boolean;
  /** Epoch milliseconds. */
  now: number;
  /** A goal the caller still holds (never deleted). */
  isBusy?: (goalId: string) => boolean;
}

/** One goal deleted (or, with dryRun, that would be). */
export interface PrunedGoal {
  id: string;
  status: 'achieved' | 'failed';
  condition: string;
  finishedAt: string | null;
  /** Disk space of its directory, as `du` counts it (allocated blocks). */
  bytes: number;
}

export interface PruneResult {
  dryRun: boolean;
  goals: PrunedGoal[];
  /** Total of the goals' `bytes`. */
  bytes: number;
  /** Finished goals left in place. */
  kept: number;
  /** Worktree directories removed (src/worktree/prune-worktrees.ts; absent from a daemon that predates them). */
  worktrees?: string[];
  /** `goald/*` branches of pruned goals deleted, as `<repo>:<branch>`. */
  branches?: string[];
}

/** Deletes the finished goals no limit protects (records first, under the store's lock; then their directories). */
export async function pruneGoals(store: Store, options: PruneOptions): Promise<PruneResult> {
  let selected: { prune: GoalRecord[]; kept: number };
  if (options.dryRun) selected = selectPrunable(await store.read(), options);
  else {
    selected = await store.update((state) => {
      const chosen = selectPrunable(state, options);
      const gone = new Set(chosen.prune.map((goal) => goal.id));
      state.goals = state.goals.filter((goal) => !gone.has(goal.id));
      return chosen;
    });
  }
  const goals: PrunedGoal[] = [];
  for (const goal of selected.prune) {
    const dir = goalDirectory(store.home, goal.id);
    const bytes = dir === null ? 0 : await diskUsage(dir);
    if (dir !== null && !options.dryRun) await rm(dir, { recursive: true, force: true });
    goals.push({
      id: goal.id,
      status: goal.status === 'achieved' ? 'achieved' : 'failed',
      condition: goal.condition,
      finishedAt: goal.finishedAt,
      bytes,
    });
  }
  return { dryRun: options.dryRun, goals, bytes: goals.reduce((sum, goal) => sum + goal.bytes, 0), kept: selected.kept };
}

// When a goal finished, for ordering and age (a record without finishedAt: its last update).
function finishedAtMs(goal: GoalRecord): number {
  return Date.parse(goal.finishedAt ?? goal.updatedAt);
}

/** The finished goals no limit protects, newest first, and how many finished goals are kept. */
export function selectPrunable(state: Pick<StateFile, 'goals' | 'loops'>, options: PruneOptions): { prune: GoalRecord[]; kept: number } {
  const finished = state.goals
    .filter((goal) => goal.status === 'achieved' || goal.status === 'failed')
    .sort((a, b) => finishedAtMs(b) - finishedAtMs(a));
  const latestRuns = new Set(state.loops.map((loop) => loop.lastGoalId).filter((id) => id !== null));
  const cutoff = options.now - options.olderThanMs;
  const prune = finished.filter(
    (goal, index) =>
      index >= options.keep &&
      finishedAtMs(goal) <= cutoff &&
      !latestRuns.has(goal.id) &&
      options.isBusy?.(goal.id) !== true,
  );
  return { prune, kept: finished.length - prune.length };
}

// The goal's directory, or null for an id that could not be one (never a path outside goals/).
function goalDirectory(home: string, goalId: string): string | null {
  return isSafeId(goalId) ? join(home, 'goals', goalId) : null;
}

/** Bytes allocated to everything under `path` (not following symlinks), as `du` counts; 0 when it is gone. */
async function diskUsage(path: string): Promise<number> {
  let stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return 0;
    throw error;
  }
  let bytes = stats.blocks * 512;
  if (stats.isDirectory()) {
    for (const name of await readdir(path)) bytes += await diskUsage(join(path, name));
  }
  return bytes;
}
