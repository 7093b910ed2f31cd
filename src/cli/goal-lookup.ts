// Finding the goal a command is about: an id or unique prefix, or — when omitted — the one goal active in
// the current workspace. Works from a goal list fetched from the daemon or read from the store.

import type { GoalRecord } from '../../state/types.js';
import { resolveGoalRef, resolveWorkspaceGoal } from '../daemon/resolve-goal.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';

/** The goal named by `ref`, or the single live goal of the workspace at `cwd`. */
export async function lookupGoal(goals: readonly GoalRecord[], ref: string | undefined, cwd: string): Promise<GoalRecord> {
  if (ref !== undefined) return resolveGoalRef(goals, ref);
  const workspace = await resolveWorkspace(cwd);
  return resolveWorkspaceGoal(goals, workspace.root);
}
