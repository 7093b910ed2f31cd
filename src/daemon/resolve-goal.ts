// Goal ids on the command line: a full id or any unique prefix; or nothing, meaning "the one goal active
// in this workspace".

import type { GoalRecord } from '../../state/types.js';
import { GoaldError } from '../errors.js';

/** Finds the goal an id or unique prefix names. */
export function resolveGoalRef(goals: readonly GoalRecord[], ref: string): GoalRecord {
  const exact = goals.find((goal) => goal.id === ref);
  if (exact) return exact;
  const matches = goals.filter((goal) => goal.id.startsWith(ref));
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length === 0) {
    throw new GoaldError('not-found', `no goal matches "${ref}"`, 'list goals with: goald status (or goald history)');
  }
  const shown = matches.slice(0, 5).map((goal) => goal.id).join(', ');
  throw new GoaldError('ambiguous', `"${ref}" matches ${matches.length} goals (${shown})`, 'type more of the id');
}

/** The single active (or paused, or queued) goal in a workspace, for commands run without a goal id. */
export function resolveWorkspaceGoal(goals: readonly GoalRecord[], workspace: string): GoalRecord {
  const live = goals.filter((goal) => goal.workspace === workspace && (goal.status === 'active' || goal.status === 'paused'));
  if (live.length === 1 && live[0]) return live[0];
  if (live.length === 0) {
    throw new GoaldError('not-found', `no active goal in ${workspace}`, 'name one: goald status lists them all');
  }
  throw new GoaldError('ambiguous', `${live.length} goals are active in ${workspace}`, `name one: ${live.map((goal) => goal.id).join(', ')}`);
}

/** A goal counts as live (holding or waiting for its workspace) while active or paused. */
export function isLiveGoal(goal: GoalRecord): boolean {
  return goal.status === 'active' || goal.status === 'paused';
}
