// A loop run of a worktree loop (issue 12: `goald loop ... --worktree`, or `isolation: "worktree"`): each run
// is a fresh worktree goal on its own branch, so it never waits for the user's in-place goals (nor they for
// it). Runs of one loop still never overlap: a run waits while the loop's previous goal is live (the same
// one-waiting-run rule as a busy workspace), and is released when that goal ends (loop-host.ts).

import type { GoalRecord, LoopRecord, Store } from '../../state/types.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import { abandonWorktree, isolateInWorktree } from '../worktree/worktree-goal.js';
import { isLiveGoal } from './resolve-goal.js';
import type { StartGoalRequest } from './types.js';
import type { WorkspaceQueue } from './workspace-queue.js';

/** Starts a worktree loop run, or reports that the loop's previous run is still live. */
export async function startWorktreeLoopRun(
  host: { store: Store; queue: WorkspaceQueue },
  loop: Pick<LoopRecord, 'id'>,
  request: StartGoalRequest,
  inPlace: PreparedGoal,
): Promise<{ outcome: 'started'; goal: GoalRecord } | { outcome: 'waiting' }> {
  const { goals } = await host.store.read();
  if (goals.some((goal) => goal.loopId === loop.id && isLiveGoal(goal))) return { outcome: 'waiting' };
  const prepared = await isolateInWorktree(inPlace, host.store.home);
  try {
    const admitted = await host.queue.admit(prepared, request, { queue: false, loopId: loop.id, waitIfBusy: true });
    if (admitted.goal !== null) return { outcome: 'started', goal: admitted.goal };
  } catch (error) {
    await abandonWorktree(prepared, host.store.home);
    throw error;
  }
  await abandonWorktree(prepared, host.store.home);
  return { outcome: 'waiting' };
}
