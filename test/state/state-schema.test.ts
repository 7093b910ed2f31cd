import { describe, expect, expectTypeOf, it } from 'vitest';
import { goalRecordSchema, loopRecordSchema, parseStateText, stateFileSchema } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { makeGoal, makeLoop } from './fixtures.js';

type GoalShape = typeof goalRecordSchema.shape;
type LoopShape = typeof loopRecordSchema.shape;

describe('state.json schema', () => {
  // The schemas `satisfies` the record types, which catches a field of the wrong type or a required one
  // missing; this catches an optional field added to a record type and not to its schema.
  it('checks every field of the goal and loop records (checked by the compiler)', () => {
    expectTypeOf<keyof GoalShape>().toEqualTypeOf<keyof GoalRecord>();
    expectTypeOf<keyof LoopShape>().toEqualTypeOf<keyof LoopRecord>();
  });

  // The store's state is its text's JSON as it stands (parseStateText, atomic-file-adapter.ts), which is
  // right only while no schema fills a default or transforms a value: every field, the optional ones set,
  // comes out as it went in (a `.default()` or `.transform()` anywhere fails this).
  it('only checks: a state parses to exactly its own JSON, every optional field set', () => {
    const goal = makeGoal('g1', {
      status: 'failed',
      reason: 'max-turns',
      reasonMessage: 'turn limit',
      pauseReason: 'drift',
      loopId: 'l1',
      machine: { value: 'failed', context: { turn: 3 } },
      summary: { ...makeGoal('x').summary, filesOmitted: 2, files: [{ path: 'a', added: null, deleted: 1 }], tamper: { turns: 1, last: [{ path: 'p', kind: 'protected-path', detail: 'd' }] } },
      owner: { kind: 'daemon', pid: 7 },
      runningAgent: { pid: 8, startTime: null, turn: 2, token: 't' },
      request: { flags: {} },
      configError: null,
      contract: { configHash: null, loops: [], sealedAt: '2026-01-01T00:00:00.000Z' },
      heldConfig: { hash: 'h', inForceHash: null, since: '2026-01-01T00:00:00.000Z', turn: 1, settings: ['checks'] },
      edits: [{ at: '2026-01-01T00:00:00.000Z', by: 'goald edit', changes: [{ setting: 'maxTurns', from: 1, to: 2 }], resumed: true }],
      worktree: { repo: '/r', dir: '/d', branch: 'b', base: 'c', author: 'a', discardOnFail: false },
      rollbacks: [{ at: '2026-01-01T00:00:00.000Z', by: 'keep-best', toTurn: 1, afterTurn: 2, tree: 't', written: [], removed: [], writtenCount: 0, removedCount: 0, commit: 'c', fromCommit: 'f' }],
      extraFromALaterGoald: { kept: true },
    } as Partial<GoalRecord>);
    const loop = makeLoop('l1', { name: 'nightly', configError: 'bad', lastOutcome: 'achieved' });
    const text = JSON.stringify({ version: 1, goals: [goal], loops: [loop], future: 1 }, null, 2);
    expect(stateFileSchema.parse(JSON.parse(text))).toStrictEqual(JSON.parse(text));
    // What the store reads: the file's JSON itself, in the file's own order (zod's output puts the keys in
    // the schema's order, here summary.filesOmitted), so the state prints back as the text it came from.
    const parsed = parseStateText(text);
    expect(parsed.ok && JSON.stringify(parsed.state, null, 2)).toBe(text);
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
