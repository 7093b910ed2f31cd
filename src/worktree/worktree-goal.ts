// How a worktree goal differs from an in-place one (issue 12): before it is stored it gets its worktree
// (the settings' workspace becomes the worktree, so the agent, the checks, the snapshots and the evaluator
// all see it), each recorded turn that changed the tree is committed on its branch, and when it ends its
// worktree directory goes (and a failed goal's branch with --discard-on-fail).

import { newGoalId } from '../../state/index.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { SupervisorDeps } from '../supervisor/supervisor.js';
import type { Snapshotter } from '../workspace/types.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { closeGoalWorktree, commitTurn, createGoalWorktree, removeGoalWorktree, turnReason } from './goal-worktree.js';


/** Creates the goal's worktree and points the prepared goal at it; an in-place goal is returned as is. */
export async function isolateInWorktree(prepared: PreparedGoal, home: string): Promise<PreparedGoal> {
  if (prepared.settings.isolation?.mode !== 'worktree' || prepared.worktree !== undefined) return prepared;
  const goalId = newGoalId();
  const worktree = await createGoalWorktree({
    repo: prepared.workspace.root,
    home,
    goalId,
    author: prepared.settings.isolation?.author ?? null,
    discardOnFail: prepared.settings.isolation?.discardOnFail ?? false,
  });
  try {
    const workspace = await resolveWorkspace(worktree.dir);
    return { ...prepared, goalId, worktree, workspace, settings: { ...prepared.settings, workspace: workspace.root } };
  } catch (error) {
    await removeGoalWorktree(worktree, home);
    throw error;
  }
}

/** Undoes isolateInWorktree when the goal was never stored (admission refused it): worktree and branch go. */
export async function abandonWorktree(prepared: PreparedGoal, home: string): Promise<void> {
  if (prepared.worktree === undefined) return;
  await closeGoalWorktree({ ...prepared.worktree, discardOnFail: true }, 'failed', home);
}

/** The short reason of a turn's commit: the verdict's reason, else what the checks or the skip said. */
type WorktreeHooks = Pick<SupervisorDeps, 'onTurnRecorded' | 'onEnding' | 'rollbackWorktree'>;

/** The supervisor hooks of a worktree goal (none for an in-place goal). */
export function worktreeHooks(goal: Pick<GoalRecord, 'id' | 'worktree'>, store: Pick<Store, 'home' | 'read'>, snapshotter: Snapshotter): WorktreeHooks {
  const { worktree } = goal;
  if (worktree === undefined) return {};
  return {
    onTurnRecorded: async (record) => {
      if (record.turn === 0) return;
      await commitTurn(worktree, record.turn, turnReason(record));
    },
    onEnding: async (status) => {
      // The branch holds every turn; a leftover directory is for `goald prune` to remove.
      await closeGoalWorktree(worktree, status, store.home).catch(() => undefined);
    },
    rollbackWorktree: async (how) => {
      // The earlier rollbacks name the tips they moved the branch away from: read them fresh.
      const rollbacks = (await store.read()).goals.find((candidate) => candidate.id === goal.id)?.rollbacks;
      const { rollBackPausedWorktree } = await import('../checkpoints/rollback-worktree.js');
      return rollBackPausedWorktree({ ...how, goal: { id: goal.id, worktree, ...(rollbacks ? { rollbacks } : {}) }, snapshotter });
    },
  };
}
