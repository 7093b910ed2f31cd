// `goald prune` on a cluster: finished goals leave Redis by the same rules as on one machine
// (state/prune-goals.ts: age, the newest `keep`, a loop's latest run). Redis keeps every key in memory, and
// cluster mode needs `maxmemory-policy noeviction`, so a cluster that never prunes fills its Redis until
// writes are refused. The goal's branch on the remote stays: it is the goal's work. What each goal freed
// is Redis's own count (MEMORY USAGE).

import type { Redis } from 'ioredis';

import { selectPrunable, type PrunedGoal, type PruneOptions, type PruneResult } from '../../state/prune-goals.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { clusterGoalBytes, deleteClusterGoal } from './turn-commit.js';

/** Deletes (or with dryRun, lists) the finished cluster goals no limit protects. */
export async function pruneClusterGoals(redis: Redis, cluster: { goals: GoalRecord[]; loops: LoopRecord[] }, options: PruneOptions): Promise<PruneResult> {
  const selected = selectPrunable(cluster, options);
  const goals: PrunedGoal[] = [];
  let kept = selected.kept;
  for (const goal of selected.prune) {
    const bytes = await clusterGoalBytes(redis, goal.id);
    // Deleted only if still finished (a script checks it in Redis): nothing live is ever pruned.
    if (!options.dryRun && !(await deleteClusterGoal(redis, goal.id))) {
      kept += 1;
      continue;
    }
    goals.push({ id: goal.id, status: goal.status === 'achieved' ? 'achieved' : 'failed', condition: goal.condition, finishedAt: goal.finishedAt, bytes });
  }
  return { dryRun: options.dryRun, goals, bytes: goals.reduce((sum, goal) => sum + goal.bytes, 0), kept };
}
