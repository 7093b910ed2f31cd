// Writing a goal's progress into its record in state.json (under the store's lock): status, phase, the
// machine snapshot, the summary and the agent in flight. Everything a restarted daemon resumes from.

import { phaseOf, statusOf, type GoalFailure, type PauseReason } from '../../machines/goal.machine.js';
import type { GoalRecord, GoalSummary, Json, Store, StoreUpdateOptions } from '../../state/types.js';

/** One write's worth of a goal's progress. */
export interface GoalProgress {
  /** The machine's state value (`{ active: 'running' }`, `'paused'`, ...). */
  value: unknown;
  /** True once the machine reached a final state. */
  done: boolean;
  failure: GoalFailure | null;
  pauseReason: PauseReason | null;
  /** The persisted machine snapshot. */
  machine: Json;
  summary: GoalSummary;
  runningAgent: GoalRecord['runningAgent'];
  /** Epoch milliseconds the goal started (active time counted back from now). */
  startedAt: number;
  now: number;
}

/** Stores a goal's progress (its record only); a goal that is no longer in the store is left alone. */
export async function recordGoalProgress(
  store: Store,
  goalId: string,
  progress: GoalProgress,
  options: StoreUpdateOptions = {},
): Promise<void> {
  const status = statusOf(progress.value);
  const now = new Date(progress.now).toISOString();
  await store.updateGoal(goalId, (goal) => {
    goal.status = status;
    goal.phase = status === 'active' ? phaseOf(progress.value) : status;
    goal.machine = progress.machine;
    goal.summary = progress.summary;
    goal.updatedAt = now;
    goal.startedAt ??= new Date(progress.startedAt).toISOString();
    goal.pauseReason = status === 'paused' ? progress.pauseReason : null;
    goal.runningAgent = progress.runningAgent;
    if (progress.done) {
      goal.finishedAt ??= now;
      goal.reason = progress.failure?.reason ?? null;
      goal.reasonMessage = progress.failure?.message ?? null;
      goal.runningAgent = null;
    }
  }, options);
}
