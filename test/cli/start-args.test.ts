// `goald start`'s commander-free reading (start-args.ts) against commander's own (main.ts): on every line
// the fast reading takes, both give the start action the same condition and raw options; the lines users
// type are taken; the forms commander reads otherwise are left to it. Generated lines (a fixed seed) look
// for a disagreement nobody listed.

import { describe, expect, it } from 'vitest';

import { START_COMMAND_SWITCHES, START_OPTIONS } from '../../src/config/start-options.js';
import { buildProgram } from '../../src/cli/main.js';
import { parseStartArgs, type StartArgs } from '../../src/cli/start-args.js';
import { allSampleArgs } from './start-option-samples.js';

/** What commander hands the start action for `goald start <args>`, or the error it stops with. */
async function readByCommander(args: readonly string[]): Promise<StartArgs | { refused: string }> {
  let read: StartArgs | undefined;
  const io = { out: () => undefined, err: () => undefined, env: {}, cwd: '/' };
  const program = buildProgram(io, { code: 0 }, (condition, options) => {
    read = { condition, options: { ...options } };
    return Promise.resolve(0);
  });
  try {
    await program.parseAsync(['node', 'goald', 'start', ...args]);
  } catch (error) {
    return { refused: error instanceof Error ? error.message : String(error) };
  }
  if (read === undefined) return { refused: 'the start action did not run' };
  return read;
}

// Commander leaves an option it never saw out, or sets it undefined: the same to the start action.
function withoutUndefined(read: StartArgs | { refused: string }): unknown {
  if ('refused' in read) return read;
  return { condition: read.condition, options: Object.fromEntries(Object.entries(read.options).filter(([, value]) => value !== undefined)) };
}

async function expectSameReading(args: readonly string[]): Promise<void> {
  const fast = parseStartArgs(args);
  expect(fast, `the fast path leaves ${JSON.stringify(args)} to commander`).not.toBeNull();
  expect({ args, read: withoutUndefined(fast ?? { refused: '' }) }).toEqual({ args, read: withoutUndefined(await readByCommander(args)) });
}

describe('the lines users type are read as commander reads them', () => {
  it.each([
    [[]],
    [['all tests pass']],
    [['all tests pass', '--foreground', '--json']],
    [['--check', 'npm test', 'the tests pass', '--wait']],
    [['x', ...allSampleArgs()]],
    [['x', '--check', 'a', '--check', 'b', '--check=c', '--check=']],
    [['x', '--agent=echo hi', '--adapter', 'codex', '--model', 'o3']],
    [['x', '-C', '/some dir', '--dir', 'other']],
    [['x', '--max-turns', '3', '--max-turns', '4']],
    [['x', '--no-sandbox', '--no-guard', '--no-queue', '--no-progress', '3']],
    [['x', '--json', '--json', '--foreground', '--foreground']],
    [['', '--agent', '-']],
    [['x', '--evaluator', 'openai:gpt-5', '--cost-budget', '2.5', '--wall-clock', '3h', '--cooldown', '0']],
    [['x', '--worktree', '--discard-on-fail', '--keep-best', '--allow-same-model']],
  ])('%j', async (args) => {
    await expectSameReading(args);
  });

  it('every option of the table and every switch of start is read', async () => {
    const args = ['x', ...allSampleArgs(), '--dir', 'd', '--no-queue', '--json', '--foreground', '--wait'];
    for (const option of [...START_OPTIONS, ...START_COMMAND_SWITCHES]) expect(args).toContain(option.flag);
    await expectSameReading(args);
  });
});

describe('the forms commander reads otherwise are left to it', () => {
  it.each([
    [['--help']],
    [['-h']],
    [['x', '--agent', '-x']], // commander takes a value that starts with "-"; parseArgs would not
    [['x', '--max-turns', '-1']],
    [['x', '-Cdir']],
    [['x', '-C=dir']],
    [['x', '--json=yes']],
    [['x', '--', '--json']],
    [['x', 'y']],
    [['x', '--adapter', 'nope']],
    [['x', '--nope']],
    [['x', '--sandbox']],
    [['x', '--agent']],
    [['x', '-C']],
  ])('%j', (args) => {
    expect(parseStartArgs(args)).toBeNull();
  });
});

// mulberry32: the same lines on every run, so a failure is reproducible.
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('generated lines', () => {
  it('whenever the fast reading takes a line, commander reads it the same', async () => {
    const flags = [...START_OPTIONS, ...START_COMMAND_SWITCHES].map((option) => option.flag);
    const oddities = ['-C', '-Cx', '--help', '-h', '--', '--nope', '--agent=echo hi', '--check=', '--json=1', '-v', '--no-json'];
    const values = ['echo hi', '', '-x', '-', 'a b', '3', '0', 'gemini', 'nope', '2.5', '30s', 'openai:m', '--json'];
    const random = seeded(20261204);
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    let taken = 0;
    for (let line = 0; line < 1500; line++) {
      const args: string[] = [];
      const length = Math.floor(random() * 7);
      for (let index = 0; index < length; index++) {
        const roll = random();
        args.push(roll < 0.5 ? pick(flags) : roll < 0.6 ? pick(oddities) : pick(values));
      }
      const fast = parseStartArgs(args);
      if (fast === null) continue;
      taken += 1;
      expect({ args, read: withoutUndefined(fast) }).toEqual({ args, read: withoutUndefined(await readByCommander(args)) });
    }
    // Enough of them reach the comparison for it to mean something.
    expect(taken).toBeGreaterThan(150);
  });
});
