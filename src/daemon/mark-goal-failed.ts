// Failing a goal from the goal host itself (a supervisor records its own endings): a queued goal that
// could not start or was stopped, a goal whose foreground process died, a supervisor that crashed; and
// storing an ending a supervisor announced but could not store (disk full at the time).

import type { FailureReason } from '../../machines/goal.machine.js';
import type { Store } from '../../state/types.js';
import { isLiveGoal } from './resolve-goal.js';

/** The failure reasons the host itself records (a supervisor records the rest). */
export type HostFailureReason = 'stopped' | 'workspace-gone' | 'storage';

/** How a goal ended, as its record keeps it. */
export interface GoalEnding {
  status: 'achieved' | 'failed';
  reason: FailureReason | null;
  message: string | null;
}

/** Marks a live goal failed with `reason`; a goal that already ended is left as it is. */
export async function markGoalFailed(store: Store, goalId: string, reason: HostFailureReason, message: string, now: Date): Promise<void> {
  await recordGoalEnding(store, goalId, { status: 'failed', reason, message }, now);
}

/** Records `ending` on a goal the store still holds as live; a goal that already ended is left as it is. */
export async function recordGoalEnding(store: Store, goalId: string, ending: GoalEnding, now: Date): Promise<void> {
  const at = now.toISOString();
  await store.update((state) => {
    const goal = state.goals.find((other) => other.id === goalId);
    if (!goal || !isLiveGoal(goal)) return;
    goal.status = ending.status;
    goal.phase = ending.status;
    goal.reason = ending.reason;
    goal.reasonMessage = ending.message;
    goal.finishedAt = at;
    goal.updatedAt = at;
    goal.pauseReason = null;
    goal.runningAgent = null;
  });
}
