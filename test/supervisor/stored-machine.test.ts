// A goal's stored machine, checked before XState rebuilds it: every state the machine can reach comes back
// from state.json as it was, and a snapshot that is not this goal's machine is refused with state-corrupt
// (XState alone would throw it from a timer, which ended the daemon).

import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { goalMachine, type GoalEvent } from '../../machines/goal.machine.js';
import { toJson } from '../../state/json.js';
import type { Json } from '../../state/types.js';
import { GoaldError } from '../../src/errors.js';
import { restoreGoalMachine } from '../../src/supervisor/stored-machine.js';

const GOAL = 'g1';

// The snapshot as GoalSession stores it: the persisted snapshot's JSON form.
function storedAfter(events: GoalEvent[]): Json {
  const actor = createActor(goalMachine, { input: { goalId: GOAL } }).start();
  for (const event of events) actor.send(event);
  return toJson(actor.getPersistedSnapshot());
}

// A stored snapshot of a goal mid-turn, with one field changed by `edit`.
type StoredMachine = { [key: string]: Json } & { value: Json; context: { [key: string]: Json } };
function storedWith(edit: (machine: StoredMachine) => void): Json {
  const stored = storedAfter([
    { type: 'precheck.finished', achieved: false, at: 1_000 },
    { type: 'turn.started', turn: 1, deadline: 5_000 },
  ]) as StoredMachine;
  edit(stored);
  return stored;
}

function refusal(stored: Json, goalId = GOAL): GoaldError {
  try {
    restoreGoalMachine(goalId, stored);
  } catch (error) {
    if (error instanceof GoaldError) return error;
    throw error;
  }
  throw new Error('the stored machine was restored');
}

describe('restoreGoalMachine', () => {
  it('brings back every state the machine reaches, value and context as stored, as a machine that runs on', () => {
    const paths = getShortestPaths(goalMachine, {
      input: { goalId: GOAL },
      events: [
        { type: 'precheck.finished', achieved: false, at: 1_000 },
        { type: 'precheck.finished', achieved: true, at: 1_000 },
        { type: 'turn.started', turn: 1, deadline: 5_000 },
        { type: 'turn.finished' },
        { type: 'checks.finished' },
        { type: 'verdict.received', achieved: false, blocked: true, trip: null, nextTurnAt: 2_000 },
        { type: 'verdict.received', achieved: false, blocked: false, trip: { reason: 'stagnation', message: 'no change' }, nextTurnAt: 2_000 },
        { type: 'goal.pause', now: true, reason: 'drift' },
        { type: 'goal.pause', now: false },
        { type: 'usage.limited', resumeAt: 9_000 },
        { type: 'goal.resume', at: 3_000 },
        { type: 'goal.stop', message: 'enough' },
      ],
    });
    const reached = new Set<string>();
    for (const path of paths) {
      const stored = storedAfter(path.steps.map((step) => step.event));
      const restored = restoreGoalMachine(GOAL, stored);
      expect(restored.value).toEqual(path.state.value);
      expect(restored.context).toEqual(path.state.context);
      expect(restored.status).toBe(path.state.status);
      reached.add(JSON.stringify(restored.value));
    }
    expect([...reached].sort()).toEqual(
      ['"achieved"', '"failed"', '"paused"', '{"active":"checking"}', '{"active":"coolingDown"}', '{"active":"evaluating"}', '{"active":"preparing"}', '{"active":"running"}'].sort(),
    );

    // Rebuilt mid-turn, the actor takes the turn's next events as the original would have.
    const actor = createActor(goalMachine, { input: { goalId: GOAL }, snapshot: restoreGoalMachine(GOAL, storedWith(() => undefined)) }).start();
    actor.send({ type: 'turn.finished' });
    actor.send({ type: 'checks.finished' });
    actor.send({ type: 'verdict.received', achieved: true, blocked: false, trip: null, nextTurnAt: 0 });
    expect(actor.getSnapshot().value).toBe('achieved');
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('refuses a state the machine does not have, naming it, with state-corrupt and the way out', () => {
    const error = refusal(storedWith((machine) => (machine.value = 'bogus')));
    expect(error.code).toBe('state-corrupt');
    expect(error.message).toMatch(/^goal g1's stored state machine is unreadable \(machine\.value: .*'bogus'/);
    expect(error.hint).toBe('goald stop g1 records it as failed; its turns and transcripts are kept');
    expect(refusal(storedWith((machine) => (machine.value = { active: 'sleeping' }))).message).toMatch(/machine\.value: .*sleeping/);
    expect(refusal(storedWith((machine) => (machine.value = { paused: 'running' }))).code).toBe('state-corrupt');
  });

  it('refuses a context of the wrong shape, naming the field', () => {
    expect(refusal(storedWith((machine) => (machine.context.turn = 'two'))).message).toMatch(/machine\.context\.turn/);
    expect(refusal(storedWith((machine) => (machine.context.turn = -1))).message).toMatch(/machine\.context\.turn/);
    expect(refusal(storedWith((machine) => delete machine.context.blockedLimit)).message).toMatch(/machine\.context\.blockedLimit/);
    expect(refusal(storedWith((machine) => (machine.context.failure = { reason: 'bored', message: 'x' }))).message).toMatch(/machine\.context\.failure\.reason/);
    expect(refusal(storedWith((machine) => (machine.context.resumeTo = 'elsewhere'))).message).toMatch(/machine\.context\.resumeTo/);
  });

  it("refuses another goal's machine and anything that is not a snapshot", () => {
    expect(refusal(storedWith(() => undefined), 'g2').message).toMatch(/machine\.context\.goalId: it is goal g1's/);
    for (const stored of [42, 'active', [], {}, { status: 'active', value: 'paused' }] as Json[]) {
      expect(refusal(stored).code).toBe('state-corrupt');
    }
  });
});
