// Goal and loop ids on the command line: a full id or any unique prefix; or, for goals, nothing, meaning
// "the one goal active in this workspace".

import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { GoaldError } from '../errors.js';

/** Finds the record an id or unique prefix names; `noun` and `listHint` word the errors. */
function resolveIdRef<T extends { id: string }>(records: readonly T[], ref: string, noun: string, listHint: string): T {
  const exact = records.find((record) => record.id === ref);
  if (exact) return exact;
  const matches = records.filter((record) => record.id.startsWith(ref));
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length === 0) throw new GoaldError('not-found', `no ${noun} matches "${ref}"`, listHint);
  const shown = matches.slice(0, 5).map((record) => record.id).join(', ');
  throw new GoaldError('ambiguous', `"${ref}" matches ${matches.length} ${noun}s (${shown})`, 'type more of the id');
}

/** Finds the goal an id or unique prefix names. */
export function resolveGoalRef(goals: readonly GoalRecord[], ref: string): GoalRecord {
  return resolveIdRef(goals, ref, 'goal', 'list goals with: goald status (or goald history)');
}

/** Finds the loop an id or unique prefix names. */
export function resolveLoopRef(loops: readonly LoopRecord[], ref: string): LoopRecord {
  return resolveIdRef(loops, ref, 'loop', 'list loops with: goald loop list');
}

/** The single active (or paused, or queued) goal in a workspace, for commands run without a goal id. */
export function resolveWorkspaceGoal(goals: readonly GoalRecord[], workspace: string): GoalRecord {
  const live = goals.filter((goal) => goal.workspace === workspace && isLiveGoal(goal));
  if (live.length === 1 && live[0]) return live[0];
  if (live.length === 0) {
    throw new GoaldError('not-found', `no active goal in ${workspace}`, 'name one: goald status lists them all');
  }
  throw new GoaldError('ambiguous', `${live.length} goals are active in ${workspace}`, `name one: ${live.map((goal) => goal.id).join(', ')}`);
}

/** The statuses of a live goal (holding or waiting for its workspace). */
const LIVE_GOAL_STATUSES: readonly GoalRecord['status'][] = ['active', 'paused'];

/** A goal counts as live (holding or waiting for its workspace) while active or paused. */
export function isLiveGoal(goal: GoalRecord): boolean {
  return LIVE_GOAL_STATUSES.includes(goal.status);
}

/**
 * What to ask a daemon for to find the goal `ref` names (resolveGoalRef) or, without one, the workspace's
 * live goal (resolveWorkspaceGoal): the goals the reference could name, and nothing of the home's history
 * besides.
 */
export function goalFilterFor(ref: string | undefined): GoalFilter {
  return ref === undefined ? { status: [...LIVE_GOAL_STATUSES] } : { idPrefix: ref };
}

/** The goals `filter` keeps, as GET /v1/goals filters them. */
export function filterGoals(goals: readonly GoalRecord[], filter: GoalFilter): GoalRecord[] {
  return goals.filter((goal) => matchesGoalFilter(goal, filter));
}

/** What GET /v1/goals filters on (each absent or empty: any). */
export interface GoalFilter {
  workspace?: string;
  status?: string[];
  /** Goals whose id starts with this: what a goal reference on the command line can name. */
  idPrefix?: string;
}

/** Whether filterGoals keeps `goal`. */
export function matchesGoalFilter(goal: Readonly<GoalRecord>, filter: GoalFilter): boolean {
  return (
    (filter.workspace === undefined || goal.workspace === filter.workspace) &&
    (filter.status === undefined || filter.status.length === 0 || filter.status.includes(goal.status)) &&
    (filter.idPrefix === undefined || goal.id.startsWith(filter.idPrefix))
  );
}
