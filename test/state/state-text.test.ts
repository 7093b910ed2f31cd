import { describe, expect, it } from 'vitest';

import { parseStateText } from '../../state/state-schema.js';
import { recordTextsOf, StateTextBuilder } from '../../state/state-text.js';
import type { StateFile } from '../../state/types.js';
import { redactJson } from '../../src/secrets/redact.js';
import { GoaldError } from '../../src/errors.js';
import { makeGoal, makeLoop } from './fixtures.js';

const KEY = 'sk-test-0123456789abcdef';
const PATH = '/home/u/.goald/state.json';

// What state.json held before records were checked one by one: the whole state redacted and pretty-printed.
function wholeText(state: unknown, env: NodeJS.ProcessEnv): string {
  return `${JSON.stringify(redactJson(state, env), null, 2)}\n`;
}

// A state file as written without any secret in force (so nothing is redacted or refused), and as read back.
function fileOf(state: StateFile): { text: string; state: StateFile } {
  const text = `${JSON.stringify(state, null, 2)}\n`;
  const read = parseStateText(text);
  if (!read.ok) throw new Error(read.problem);
  return { text, state: read.state };
}

function buildError(builder: StateTextBuilder, state: StateFile, validated?: { text: string; state: StateFile }): GoaldError {
  try {
    builder.build(state, validated);
  } catch (error) {
    if (error instanceof GoaldError) return error;
    throw error;
  }
  throw new Error('build did not refuse the state');
}

describe('StateTextBuilder', () => {
  const env = { OPENAI_API_KEY: KEY };
  const states: Array<[string, StateFile]> = [
    ['no records', { version: 1, goals: [], loops: [] }],
    ['goals and loops', { version: 1, goals: [makeGoal('g1'), makeGoal('g2', { status: 'achieved', finishedAt: '2026-01-02T00:00:00.000Z' })], loops: [makeLoop('l1')] }],
    ['a secret in a goal', { version: 1, goals: [makeGoal('g1', { settings: { agent: { command: `my-agent --key ${KEY}` } } })], loops: [] }],
    // A later goald's field at the top, and the records' arrays in another order: kept where they are.
    ['fields a later goald added', { loops: [makeLoop('l1')], version: 1, future: { nested: ['a', 1, null] }, goals: [makeGoal('g1')] } as unknown as StateFile],
    ['nested arrays and odd strings', { version: 1, goals: [makeGoal('g\n"1"', { summary: { ...makeGoal('x').summary, remaining: ['a\nb', 'c'], files: [] } })], loops: [] }],
  ];

  it.each(states)('writes exactly what pretty-printing the whole redacted state gives: %s', (_name, state) => {
    const { text, state: parsed } = new StateTextBuilder(PATH, env).build(state);
    expect(text).toBe(wholeText(state, env));
    expect(text).not.toContain(KEY);
    // What it reads back as is what the file will read back as.
    const reread = parseStateText(text);
    expect(reread.ok && reread.state).toEqual(parsed);
  });

  it('checks a record again only when it changed, and again all of them when the secrets change', () => {
    const environment: NodeJS.ProcessEnv = { ...env };
    const builder = new StateTextBuilder(PATH, environment);
    const goals = Array.from({ length: 50 }, (_, index) => makeGoal(`g${index}`, { status: 'achieved' }));
    const state: StateFile = { version: 1, goals, loops: [makeLoop('l1')] };
    builder.build(state);
    expect(builder.lastChecked).toBe(51);

    state.goals[7] = { ...goals[7]!, reasonMessage: `done with ${KEY}` };
    const { text } = builder.build(state);
    expect(builder.lastChecked).toBe(1);
    expect(text).toBe(wholeText(state, environment));

    // A new credential in the environment: every record is redacted and scanned against it.
    const SECOND = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    environment.GITHUB_TOKEN = SECOND;
    state.goals[3] = { ...goals[3]!, reasonMessage: `pushed with ${SECOND}` };
    const again = builder.build(state);
    expect(builder.lastChecked).toBe(51);
    expect(again.text).not.toContain(SECOND);
    expect(again.text).toBe(wholeText(state, environment));
  });

  it("takes the records of the file it replaces, as read and validated, as checked: only changed ones are checked", () => {
    const goals = Array.from({ length: 20 }, (_, index) => makeGoal(`g${index}`, { status: 'achieved' }));
    const onDisk = fileOf({ version: 1, goals, loops: [makeLoop('l1')] });
    // A fresh process's first write: the state as read, one goal changed and one added.
    const builder = new StateTextBuilder(PATH, env);
    const state = structuredClone(onDisk.state);
    state.goals[2] = { ...state.goals[2]!, reasonMessage: `done with ${KEY}` };
    state.goals.push(makeGoal('g20'));
    const built = builder.build(state, onDisk);
    expect(builder.lastChecked).toBe(2);
    expect(built.text).toBe(wholeText(state, env));
    expect(built.text).not.toContain(KEY);
    const reread = parseStateText(built.text);
    expect(reread.ok && reread.state).toEqual(built.state);
  });

  it("reuses a record's text from the file as it was written, in any layout or key order", () => {
    const goals = [makeGoal('g1'), makeGoal('g2', { condition: 'braces } and "quotes" [ in a string \\' })];
    const state: StateFile = { version: 1, goals, loops: [makeLoop('l1')] };
    // Written by hand, on one line; the second goal's fields in another order than the schema lists them.
    const reversed = Object.fromEntries(Object.entries(goals[1]!).reverse());
    const handWritten = JSON.stringify({ ...state, goals: [goals[0], reversed] });
    const read = parseStateText(handWritten);
    if (!read.ok) throw new Error(read.problem);
    const builder = new StateTextBuilder(PATH, env);
    const built = builder.build(JSON.parse(handWritten) as StateFile, { text: handWritten, state: read.state });
    expect(builder.lastChecked).toBe(0);
    expect(built.text).toContain(JSON.stringify(goals[0])); // the file's own text, as it was
    expect(built.text).toContain(JSON.stringify(reversed)); // in its own order, which it reads back in
    const reread = parseStateText(built.text);
    expect(reread.ok && JSON.stringify(reread.state)).toBe(JSON.stringify(read.state));
  });

  it("pretty-prints a record whose text in the file does not read back as the record it is taken for", () => {
    const file = fileOf({ version: 1, goals: [makeGoal('g1'), makeGoal('g2')], loops: [] });
    // A state that disagrees with its text (never the case for a real read): g2's text says otherwise.
    const claimed = structuredClone(file.state);
    claimed.goals[1] = { ...claimed.goals[1]!, condition: 'not what the text says' };
    const builder = new StateTextBuilder(PATH, env);
    const built = builder.build(structuredClone(claimed), { text: file.text, state: claimed });
    expect(builder.lastChecked).toBe(0);
    expect(built.text).toBe(wholeText(claimed, env));
  });

  it('checks a record read from the file in full when it holds what this environment redacts or refuses', () => {
    // Written by a process that did not have these keys (so nothing was redacted then), or by hand.
    const stranger = 'sk-other-0123456789abcdefXYZ';
    const read = fileOf({
      version: 1,
      goals: [makeGoal('g1'), makeGoal('g2', { reasonMessage: `used ${stranger}` })],
      loops: [makeLoop('l1', { condition: 'uses ./plainvalue-plainvalue' })],
    });
    const environment = { OTHER_API_KEY: stranger, PLAIN_API_KEY: './plainvalue-plainvalue' };
    const builder = new StateTextBuilder(PATH, environment);
    // The loop holds a value only the guard refuses (redaction leaves path-like values alone).
    expect(buildError(builder, structuredClone(read.state), read).message).toBe(`refusing to write ${PATH}: it contains the value of PLAIN_API_KEY`);
    const withoutLoop = fileOf({ ...read.state, loops: [] });
    const built = builder.build(structuredClone(withoutLoop.state), withoutLoop);
    expect(builder.lastChecked).toBe(1);
    expect(built.text).not.toContain(stranger);
    expect(built.text).toContain('[redacted:OTHER_API_KEY]');

    const named = fileOf({ version: 1, goals: [makeGoal('g1', { settings: { evaluator: { apiKey: 'whatever-it-is' } } })], loops: [] });
    expect(buildError(new StateTextBuilder(PATH, {}), structuredClone(named.state), named).message).toBe(
      `refusing to write ${PATH}: the field goals.0.settings.evaluator.apiKey looks like a credential`,
    );
  });

  it('refuses a record that would not read back, naming where it is, and remembers nothing of that build', () => {
    const builder = new StateTextBuilder(PATH, {});
    const good: StateFile = { version: 1, goals: [makeGoal('g1'), makeGoal('g2')], loops: [] };
    builder.build(good);
    // NaN becomes null in JSON, which a count may not be: the record is checked as it will read back.
    const bad: StateFile = { ...good, goals: [good.goals[0]!, makeGoal('g2', { summary: { ...makeGoal('x').summary, tokens: Number.NaN } })] };
    const error = buildError(builder, bad);
    expect(error.code).toBe('internal');
    expect(error.message).toMatch(/^refusing to write invalid goald state to \/home\/u\/\.goald\/state\.json \(goals\.1\.summary\.tokens: /);
    expect(buildError(builder, bad).message).toBe(error.message); // not remembered as checked
    builder.build(good);
    expect(builder.lastChecked).toBe(0);
  });

  it('refuses a credential-named field and an API key value, naming the field or the variable, never the value', () => {
    const builder = new StateTextBuilder(PATH, {});
    const named = buildError(builder, { version: 1, goals: [makeGoal('g1'), makeGoal('g2', { settings: { evaluator: { apiKey: 'whatever-it-is' } } })], loops: [] });
    expect(named.message).toBe(`refusing to write ${PATH}: the field goals.1.settings.evaluator.apiKey looks like a credential`);
    expect(named.message).not.toContain('whatever-it-is');

    // A value redaction leaves alone (it looks like a path) but the guard still refuses.
    const guarded = new StateTextBuilder(PATH, { PLAIN_API_KEY: './plainvalue-plainvalue' });
    const valued = buildError(guarded, { version: 1, goals: [], loops: [makeLoop('l1', { condition: 'uses ./plainvalue-plainvalue' })] });
    expect(valued.message).toBe(`refusing to write ${PATH}: it contains the value of PLAIN_API_KEY`);
  });

  it('refuses a state whose top is wrong, as the schema words it', () => {
    const error = buildError(new StateTextBuilder(PATH, {}), { version: 2, goals: [], loops: [] } as unknown as StateFile);
    expect(error.message).toMatch(/\(version: /);
  });
});

describe('StateTextBuilder.buildWithGoal', () => {
  it('checks only the goal it replaces and writes what a whole build would', () => {
    const env: NodeJS.ProcessEnv = { OPENAI_API_KEY: KEY };
    const builder = new StateTextBuilder(PATH, env);
    const state: StateFile = { version: 1, goals: Array.from({ length: 30 }, (_, index) => makeGoal(`g${index}`)), loops: [makeLoop('l1')] };
    expect(builder.buildWithGoal(0, state.goals[0]!)).toBeNull(); // nothing built yet
    builder.build(state);
    const changed = makeGoal('g4', { phase: 'checking', reasonMessage: `key ${KEY}` });
    const built = builder.buildWithGoal(4, changed);
    expect(builder.lastChecked).toBe(1);
    const whole: StateFile = { ...state, goals: state.goals.with(4, changed) };
    expect(built?.text).toBe(wholeText(whole, env));
    expect(builder.lastText).toBe(built?.text);
    expect(built?.state.goals[4]).toMatchObject({ phase: 'checking', reasonMessage: 'key [redacted:OPENAI_API_KEY]' });
    // Out of range, or a secret that appeared since: the caller builds the whole state instead.
    expect(builder.buildWithGoal(30, changed)).toBeNull();
    env.GITHUB_TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    expect(builder.buildWithGoal(4, changed)).toBeNull();
  });
});

describe('recordTextsOf', () => {
  it("finds each element of the top's goals and loops arrays, whatever their strings hold", () => {
    const goal = { id: 'g1', note: 'a } b ] c { "d" \\', goals: [{ nested: true }] };
    const loop = { id: 'l1', list: [[1], { x: '}' }] };
    const text = JSON.stringify({ version: 1, note: 'goals', goals: [goal, { id: 'g2' }], loops: [loop] }, null, 2);
    const found = recordTextsOf(text);
    expect(found?.goals.map((element) => JSON.parse(element) as unknown)).toEqual([goal, { id: 'g2' }]);
    expect(found?.loops.map((element) => JSON.parse(element) as unknown)).toEqual([loop]);
  });

  it('finds the same records in the layout the builder writes as in any other layout', () => {
    const tricky = 'ends a record?\n    },\n    {\n  ]\n  "loops": [';
    const goals = [makeGoal('g1', { reasonMessage: tricky }), makeGoal('g2'), makeGoal('g3', { condition: '{ "goals": [ ] }' })];
    const loops = [makeLoop('l1')];
    const state: StateFile = { version: 1, goals, loops };
    const built = new StateTextBuilder(PATH, {}).build(state);
    const inLayout = recordTextsOf(built.text);
    expect(inLayout?.goals.map((element) => JSON.parse(element) as unknown)).toEqual(built.state.goals);
    expect(inLayout?.loops.map((element) => JSON.parse(element) as unknown)).toEqual(built.state.loops);
    // Each element is the file's own text of that record, as the builder indented it.
    expect(inLayout?.goals.every((element) => built.text.includes(element))).toBe(true);
    // The same state written compactly, or with another indent, is found by the token scan.
    for (const text of [JSON.stringify(built.state), JSON.stringify(built.state, null, 4), JSON.stringify(built.state, null, '\t')]) {
      const found = recordTextsOf(text);
      expect(found?.goals.map((element) => JSON.parse(element) as unknown)).toEqual(built.state.goals);
      expect(found?.loops.map((element) => JSON.parse(element) as unknown)).toEqual(built.state.loops);
    }
    // Empty arrays, in the layout.
    const empty = new StateTextBuilder(PATH, {}).build({ version: 1, goals: [], loops: [] });
    expect(recordTextsOf(empty.text)).toEqual({ goals: [], loops: [] });
  });

  it('finds nothing in text that does not scan as one JSON value', () => {
    expect(recordTextsOf('{"goals": [{"id": "g1"}')).toBeNull();
    expect(recordTextsOf('{"goals": [{"id": "g1}]}')).toBeNull();
    expect(recordTextsOf('{"goals": []}}')).toBeNull();
  });
});

describe('StateTextBuilder.buildWithAddedGoal', () => {
  const env = { OPENAI_API_KEY: KEY };

  it('checks the new goal only, and writes what the whole state pretty-printed gives', () => {
    const goals = Array.from({ length: 30 }, (_, index) => makeGoal(`g${index}`, { status: 'achieved' }));
    const onDisk = fileOf({ version: 1, goals, loops: [makeLoop('l1')] });
    const builder = new StateTextBuilder(PATH, env);
    const added = makeGoal('gnew', { reasonMessage: `with ${KEY}` });
    const built = builder.buildWithAddedGoal(onDisk, added);
    expect(builder.lastChecked).toBe(1);
    const whole: StateFile = { ...onDisk.state, goals: [...onDisk.state.goals, added] };
    expect(built?.text).toBe(wholeText(whole, env));
    const reread = parseStateText(built?.text ?? '');
    expect(reread.ok && reread.state).toEqual(built?.state);
    // And its next one-goal write starts from it.
    const next = builder.buildWithGoal(30, { ...added, phase: 'checking' });
    expect(builder.lastChecked).toBe(1);
    expect(next?.text).toBe(wholeText({ ...whole, goals: whole.goals.with(30, { ...added, phase: 'checking' }) }, env));
  });

  it('declines (null) a file it cannot take whole: another layout, or a value this environment acts on', () => {
    const state: StateFile = { version: 1, goals: [makeGoal('g1')], loops: [] };
    const oneLine = JSON.stringify(state);
    const read = parseStateText(oneLine);
    if (!read.ok) throw new Error(read.problem);
    expect(new StateTextBuilder(PATH, env).buildWithAddedGoal({ text: oneLine, state: read.state }, makeGoal('g2'))).toBeNull();
    const holding = fileOf({ version: 1, goals: [makeGoal('g1', { reasonMessage: 'sk-other-0123456789abcdefXYZ' })], loops: [] });
    expect(new StateTextBuilder(PATH, { OTHER_API_KEY: 'sk-other-0123456789abcdefXYZ' }).buildWithAddedGoal(holding, makeGoal('g2'))).toBeNull();
    // A state that disagrees with its text (never the case for a real read) is not taken whole either.
    const file = fileOf(state);
    const claimed = { ...file.state, goals: [{ ...file.state.goals[0]!, condition: 'not the text' }] };
    expect(new StateTextBuilder(PATH, env).buildWithAddedGoal({ text: file.text, state: claimed }, makeGoal('g2'))).toBeNull();
  });
});
