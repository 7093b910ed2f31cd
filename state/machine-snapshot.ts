// What goald reads back from a goal's persisted XState snapshot (GoalRecord.machine) without restoring
// the machine: read through a schema, never by hand.

import { z } from 'zod';
import type { Json } from './types.js';

// Only the fields read here; the rest of the snapshot is XState's business.
const snapshotTurnSchema = z.looseObject({
  context: z.looseObject({ turn: z.number().int().positive() }),
});

/** The number of the turn a persisted machine snapshot was in; null before turn 1 or when unreadable. */
export function turnOfSnapshot(machine: Json | null): number | null {
  const parsed = snapshotTurnSchema.safeParse(machine);
  return parsed.success ? parsed.data.context.turn : null;
}

const snapshotPauseSchema = z.looseObject({ context: z.looseObject({ pausePending: z.boolean() }) });

/** Whether a persisted machine snapshot has a pause asked for and not yet taken (at the turn's end). */
export function isPausePendingIn(machine: Json | null): boolean {
  const parsed = snapshotPauseSchema.safeParse(machine);
  return parsed.success && parsed.data.context.pausePending;
}
