// What goald reads back from a goal's persisted XState snapshot (GoalRecord.machine) without restoring
// the machine. Read by hand, with the checks a schema would make: `goald status` reads it on its fast path,
// which loads no zod (the schemas chunk alone would cost it a third of its start-up).

import type { Json } from './types.js';

// The snapshot's `context` object, or null when the snapshot has none.
function contextOf(machine: Json | null): { [key: string]: Json } | null {
  if (machine === null || typeof machine !== 'object' || Array.isArray(machine)) return null;
  const context = machine.context;
  return context !== null && context !== undefined && typeof context === 'object' && !Array.isArray(context) ? context : null;
}

/** The number of the turn a persisted machine snapshot was in; null before turn 1 or when unreadable. */
export function turnOfSnapshot(machine: Json | null): number | null {
  const turn = contextOf(machine)?.turn;
  return typeof turn === 'number' && Number.isInteger(turn) && turn > 0 ? turn : null;
}

/** Whether a persisted machine snapshot has a pause asked for and not yet taken (at the turn's end). */
export function isPausePendingIn(machine: Json | null): boolean {
  return contextOf(machine)?.pausePending === true;
}

/** When a paused goal resumes by itself (a usage limit's reset), epoch milliseconds; null when it waits for `resume`. */
export function resumeAtOfSnapshot(machine: Json | null): number | null {
  const resumeAt = contextOf(machine)?.resumeAt;
  return typeof resumeAt === 'number' ? resumeAt : null;
}

/** When a goal's next turn is due (the end of its cool-down), epoch milliseconds; null when not set. */
export function nextTurnAtOfSnapshot(machine: Json | null): number | null {
  const nextTurnAt = contextOf(machine)?.nextTurnAt;
  return typeof nextTurnAt === 'number' ? nextTurnAt : null;
}
