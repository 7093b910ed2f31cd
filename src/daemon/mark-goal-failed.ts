// Failing a goal from the goal host itself (a supervisor records its own endings): a queued goal that
// could not start or was stopped, a goal whose foreground process died, a supervisor that crashed.

import type { Store } from '../../state/types.js';
import { isLiveGoal } from './resolve-goal.js';

/** The failure reasons the host itself records (a supervisor records the rest). */
export type HostFailureReason = 'stopped' | 'workspace-gone';

/** Marks a live goal failed with `reason`; a goal that already ended is left as it is. */
export async function markGoalFailed(store: Store, goalId: string, reason: HostFailureReason, message: string, now: Date): Promise<void> {
  const at = now.toISOString();
  await store.update((state) => {
    const goal = state.goals.find((other) => other.id === goalId);
    if (!goal || !isLiveGoal(goal)) return;
    goal.status = 'failed';
    goal.phase = 'failed';
    goal.reason = reason;
    goal.reasonMessage = message;
    goal.finishedAt = at;
    goal.updatedAt = at;
    goal.runningAgent = null;
  });
}
