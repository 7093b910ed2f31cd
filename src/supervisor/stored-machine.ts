// A goal's state machine as state.json keeps it (XState's persisted snapshot), checked before the machine
// is rebuilt from it. XState restores whatever it is given: a state value the machine does not have throws
// from a timer, which ended the whole daemon at every start (every goal and loop with it), and a context of
// the wrong shape breaks the turns after. The record's schema leaves `machine` as plain JSON on purpose:
// one goal's bad machine must not make the whole file unreadable, so it is checked here, for its own goal.

import type { SnapshotFrom } from 'xstate';

import { FAILURE_REASONS, goalMachine, type GoalContext } from '../../machines/goal.machine.js';
import { GoaldError } from '../errors.js';
import { z } from '../zod-mini.js';
import type { Json } from '../../state/types.js';
import { stopUnrecoveredHint } from '../../state/not-recovered.js';
import { describeSchemaProblem, pauseReasonSchema } from '../../state/state-schema.js';

type GoalSnapshot = SnapshotFrom<typeof goalMachine>;

// GoalContext, field for field: a field missing here fails the typecheck (`satisfies`).
const storedContextSchema = z.object({
  goalId: z.string(),
  turn: z.int().check(z.nonnegative()),
  blockedStreak: z.int().check(z.nonnegative()),
  blockedLimit: z.int().check(z.positive()),
  pausePending: z.boolean(),
  pauseReason: z.nullable(pauseReasonSchema),
  resumeTo: z.enum(['running', 'coolingDown']),
  turnDeadline: z.nullable(z.number()),
  nextTurnAt: z.nullable(z.number()),
  resumeAt: z.nullable(z.number()),
  failure: z.nullable(z.object({ reason: z.enum(FAILURE_REASONS), message: z.string() })),
}) satisfies z.ZodMiniType<GoalContext>;

// What XState's getPersistedSnapshot wrote; its other fields (children, historyValue) are not read.
const storedMachineSchema = z.looseObject({
  status: z.enum(['active', 'done']),
  value: z.union([z.string(), z.record(z.string(), z.string())]),
  context: storedContextSchema,
});

/**
 * The machine of goal `goalId` rebuilt from its stored snapshot: its state and context only (the goal
 * machine starts no actors and has no history states, so nothing else of a snapshot is taken). Throws
 * `state-corrupt`, naming what is wrong, for a snapshot that is not this goal's machine.
 */
export function restoreGoalMachine(goalId: string, stored: Json): GoalSnapshot {
  const unreadable = (problem: string): GoaldError =>
    new GoaldError(
      'state-corrupt',
      `goal ${goalId}'s stored state machine is unreadable (${problem})`,
      stopUnrecoveredHint(goalId),
    );
  const parsed = storedMachineSchema.safeParse(stored);
  if (!parsed.success) throw unreadable(describeSchemaProblem(parsed.error, ['machine']));
  const { value, context } = parsed.data;
  if (context.goalId !== goalId) throw unreadable(`machine.context.goalId: it is goal ${context.goalId}'s`);
  try {
    return goalMachine.resolveState({ value, context });
  } catch (error) {
    // XState names the state it does not know ("Child state 'x' does not exist on 'goal'").
    throw unreadable(`machine.value: ${error instanceof Error ? error.message : String(error)}`);
  }
}
