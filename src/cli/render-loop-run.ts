// What firing a loop did, in one sentence: `goald loop run` prints it, `goald watch`'s `r` on a loop shows it.

import type { LoopRecord } from '../../state/types.js';

type LoopRunOutcome = 'started' | 'waiting' | 'skipped';

/** "loop l… fired: goal g… started", or why it waits or could not start. */
export function renderLoopRun(loop: LoopRecord, outcome: LoopRunOutcome): string {
  switch (outcome) {
    case 'started':
      return `loop ${loop.id} fired: goal ${loop.lastGoalId ?? '?'} started`;
    case 'waiting':
      return `loop ${loop.id} fired, but a goal is active in ${loop.workspace}; the run waits for it`;
    case 'skipped':
      return `loop ${loop.id} could not start a run${loop.configError ? `: ${loop.configError}` : ''}`;
  }
}
