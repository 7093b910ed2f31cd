// `goald prune` for worktree goals (issue 12): the worktrees and branches of the goals it prunes go with
// them, and any worktree directory under GOALD_HOME/worktrees whose goal no longer exists or has ended (a
// daemon killed before it could remove it) is removed. Nothing outside GOALD_HOME and no branch but a pruned
// goal's recorded `goald/*` branch is ever deleted.

import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pruneGoals, type PruneOptions, type PruneResult } from '../../state/prune-goals.js';
import type { GoalRecord, GoalWorktree, Store } from '../../state/types.js';
import { runGit } from '../workspace/git.js';
import { deleteGoalBranch, removeGoalWorktree, worktreeDirFor } from './goal-worktree.js';

/** What prune removed besides goal records: worktree directories and `goald/*` branches. */
export interface WorktreePrune {
  /** Worktree directories removed (or, with dryRun, that would be). */
  worktrees: string[];
  /** Branches deleted, as `<repo>:<branch>`. */
  branches: string[];
}

/** pruneGoals, then the pruned goals' worktrees and branches and every leftover worktree directory. */
export async function pruneGoalsAndWorktrees(store: Store, options: PruneOptions): Promise<PruneResult & WorktreePrune> {
  const before = new Map((await store.read()).goals.map((goal) => [goal.id, goal]));
  const result = await pruneGoals(store, options);
  const removed: WorktreePrune = { worktrees: [], branches: [] };
  for (const pruned of result.goals) {
    const worktree = before.get(pruned.id)?.worktree;
    if (worktree === undefined) continue;
    if (existsSync(worktree.dir)) {
      removed.worktrees.push(worktree.dir);
      if (!options.dryRun) await removeGoalWorktree(worktree, store.home);
    }
    if (options.dryRun || (await deleteGoalBranch(worktree.repo, worktree.branch))) removed.branches.push(`${worktree.repo}:${worktree.branch}`);
  }
  const goals = options.dryRun ? [...before.values()].filter((goal) => !result.goals.some((pruned) => pruned.id === goal.id)) : (await store.read()).goals;
  for (const dir of await leftoverWorktrees(store.home, goals, options.isBusy)) {
    if (removed.worktrees.includes(dir)) continue;
    removed.worktrees.push(dir);
    if (!options.dryRun) await removeLeftover(dir, store.home);
  }
  return { ...result, ...removed };
}

// Directories under GOALD_HOME/worktrees that no live goal works in.
async function leftoverWorktrees(home: string, goals: readonly GoalRecord[], isBusy?: (goalId: string) => boolean): Promise<string[]> {
  const root = path.join(home, 'worktrees');
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const live = new Set(goals.filter((goal) => goal.status === 'active' || goal.status === 'paused').map((goal) => goal.worktree?.dir));
  return names
    .map((name) => worktreeDirFor(home, name))
    .filter((dir) => !live.has(dir) && isBusy?.(path.basename(dir)) !== true)
    .sort();
}

// A leftover's repository is named by its own `.git` file; git forgets it once the directory is gone.
async function removeLeftover(dir: string, home: string): Promise<void> {
  const common = await runGit(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: dir, allowFailure: true }).catch(() => null);
  const commonDir = common?.exitCode === 0 ? common.stdout.trim() : '';
  const repo = commonDir === '' ? dir : path.dirname(commonDir);
  const worktree: Pick<GoalWorktree, 'repo' | 'dir'> = { repo: existsSync(repo) ? repo : dir, dir };
  await removeGoalWorktree(worktree, home);
}
