// A loop's record as it starts out: what defines it, and a history of no runs. Both loop hosts (the
// embedded daemon's and a cluster's) make their records here.

import type { LoopRecord } from '../../state/types.js';

/** A loop that has never run, from what defines it. */
export function newLoopRecord(
  defined: Pick<LoopRecord, 'id' | 'workspace' | 'every' | 'condition' | 'options' | 'source' | 'createdAt' | 'catchUp' | 'name'>,
): LoopRecord {
  return {
    ...defined,
    nextRunAt: null,
    lastRunAt: null,
    lastGoalId: null,
    lastOutcome: null,
    runs: 0,
    skipped: 0,
    waiting: false,
    stopped: false,
    configError: null,
  };
}
