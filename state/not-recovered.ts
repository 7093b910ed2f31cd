// A live goal the daemon could not pick up again (`GoalRecord.notRecovered`, written by recovery): nothing
// of it runs until `goald stop` ends it or a later daemon recovers it. One place for the test and the way
// out, for the status line, watch, the dashboard and the errors. Imports nothing: `goald status` loads it.

import type { GoalRecord } from './types.js';

/** Why a live goal does not run after a daemon start; null for a goal that runs or has ended. */
export function notRecoveredWhy(goal: Pick<GoalRecord, 'status'> & Partial<Pick<GoalRecord, 'notRecovered'>>): string | null {
  return (goal.status === 'active' || goal.status === 'paused') && goal.notRecovered !== undefined ? goal.notRecovered : null;
}

/** What the user does about a goal that cannot be picked up again. */
export function stopUnrecoveredHint(goalId: string): string {
  return `goald stop ${goalId} records it as failed; its turns and transcripts are kept`;
}
