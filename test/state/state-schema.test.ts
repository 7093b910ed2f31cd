import { describe, expect, expectTypeOf, it } from 'vitest';
import { parseStateText, stateFileSchema } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { makeGoal } from './fixtures.js';

type GoalShape = typeof stateFileSchema.shape.goals.element.shape;
type LoopShape = typeof stateFileSchema.shape.loops.element.shape;

describe('state.json schema', () => {
  // The schemas `satisfies` the record types, which catches a field of the wrong type or a required one
  // missing; this catches an optional field added to a record type and not to its schema.
  it('checks every field of the goal and loop records (checked by the compiler)', () => {
    expectTypeOf<keyof GoalShape>().toEqualTypeOf<keyof GoalRecord>();
    expectTypeOf<keyof LoopShape>().toEqualTypeOf<keyof LoopRecord>();
  });

  it('checks the optional fields too', () => {
    const state = (goal: object): string => JSON.stringify({ version: 1, goals: [goal], loops: [] });
    expect(parseStateText(state(makeGoal('g1', { request: { flags: {} }, configError: null }))).ok).toBe(true);
    expect(parseStateText(state({ ...makeGoal('g1'), configError: 5 }))).toEqual({
      ok: false,
      problem: 'goals.0.configError: Invalid input: expected string, received number',
    });
  });
});
