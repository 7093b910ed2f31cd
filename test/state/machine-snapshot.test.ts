import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { goalMachine } from '../../machines/goal.machine.js';
import { toJson } from '../../state/json.js';
import { turnOfSnapshot } from '../../state/machine-snapshot.js';

describe('turnOfSnapshot', () => {
  it('reads the turn of a real persisted snapshot, and null before the first turn', () => {
    const actor = createActor(goalMachine, { input: { goalId: 'g1' } }).start();
    expect(turnOfSnapshot(toJson(actor.getPersistedSnapshot()))).toBeNull();
    actor.send({ type: 'precheck.finished', achieved: false, at: 0 });
    actor.send({ type: 'turn.started', turn: 1, deadline: null });
    expect(turnOfSnapshot(toJson(actor.getPersistedSnapshot()))).toBe(1);
    actor.stop();
  });

  it.each([
    ['a snapshot in turn 3', { value: { active: 'running' }, context: { turn: 3, other: true } }, 3],
    ['turn 0 (the pre-check)', { context: { turn: 0 } }, null],
    ['no snapshot', null, null],
    ['no context', { value: 'paused' }, null],
    ['a turn that is not a number', { context: { turn: '3' } }, null],
    ['not an object', [1, 2], null],
  ] as const)('%s', (_name, machine, turn) => {
    expect(turnOfSnapshot(toJson(machine))).toBe(turn);
  });
});
