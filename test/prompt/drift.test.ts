import { describe, expect, test } from 'vitest';
import type { ToolCall } from '../../src/agents/types.js';
import {
  DRIFT_PAUSE_CHECKS,
  INITIAL_DRIFT_STATE,
  driftWarning,
  extractKeywords,
  nextDriftState,
  scoreDrift,
  type DriftResult,
  type DriftState,
} from '../../src/prompt/drift.js';

const write = (filePath: string): ToolCall => ({ name: 'Write', filePath });
const edit = (filePath: string): ToolCall => ({ name: 'Edit', filePath });
const bash = (command: string): ToolCall => ({ name: 'Bash', command });
const read = (): ToolCall => ({ name: 'Read' });

const GOAL = 'Add a --json flag to the status command and cover it with tests';

describe('extractKeywords', () => {
  test.each([
    ['lowercase words of 3+ chars, stop words dropped', 'Make sure ALL the tests pass', ['test', 'pass']],
    ['paths split on / . _ -', 'src/cli/render-status_view.ts', ['src', 'cli', 'render', 'status', 'view']],
    ['camelCase and acronyms split', 'parseJSONFile renderStatus', ['parse', 'json', 'file', 'render', 'status']],
    ['plural s folded, but not ss/us/is', 'tests files class status analysis', ['test', 'file', 'class', 'status', 'analysis']],
    ['short words and punctuation dropped', 'a b cd -- ok?', []],
    ['numbers of 3+ digits kept', 'fix 404 on /v1/goals', ['fix', '404', 'goal']],
  ])('%s', (_, text, expected) => {
    expect([...extractKeywords(text)].sort()).toEqual([...expected].sort());
  });
});

describe('scoreDrift', () => {
  test.each<{ name: string; goal: string; calls: ToolCall[]; expected: Partial<DriftResult> }>([
    {
      name: 'no calls yet: nothing to judge',
      goal: GOAL,
      calls: [],
      expected: { score: 0, circular: 0, objective: 0, repeated: null },
    },
    {
      name: 'on-topic, varied work: low drift',
      goal: GOAL,
      calls: [edit('src/cli/commands/status.ts'), bash('npm test -- status --json'), write('test/cli/status-json.test.ts')],
      // Goal keywords: add, json, flag, status, command, cover, test; json, status, command, test are shared.
      expected: { circular: 0, objective: 0.4286, score: 0.1714, repeated: null },
    },
    {
      name: 'the same file written 3 times: circular',
      goal: GOAL,
      calls: [write('src/cli/status.ts'), bash('npm test'), edit('src/cli/status.ts'), edit('src/cli/status.ts')],
      expected: { circular: 1, repeated: { kind: 'file', value: 'src/cli/status.ts', count: 3 } },
    },
    {
      name: 'the same command run 3 times (whitespace aside): circular',
      goal: GOAL,
      calls: [bash('npm   test'), read(), bash('npm test'), bash(' npm test ')],
      expected: { circular: 1, repeated: { kind: 'command', value: 'npm test', count: 3 } },
    },
    {
      name: 'twice is ordinary work, not circular',
      goal: GOAL,
      calls: [write('a.ts'), edit('a.ts'), bash('npm test'), bash('npm test')],
      expected: { circular: 0, repeated: null },
    },
    {
      name: 'only the last 10 calls count',
      goal: GOAL,
      calls: [write('old.ts'), write('old.ts'), write('old.ts'), ...Array.from({ length: 10 }, read)],
      expected: { circular: 0, repeated: null },
    },
    {
      name: 'the most repeated action is named; ties go to the latest',
      goal: GOAL,
      calls: [bash('make'), bash('make'), bash('make'), write('x.ts'), write('x.ts'), write('x.ts')],
      expected: { repeated: { kind: 'file', value: 'x.ts', count: 3 } },
    },
    {
      name: 'a goal without keywords cannot be off-topic',
      goal: 'do it now',
      calls: [bash('rm -rf node_modules')],
      expected: { score: 0, objective: 0 },
    },
  ])('$name', ({ goal, calls, expected }) => {
    expect(scoreDrift({ goal, recentCalls: calls })).toMatchObject(expected);
  });

  test('objective is 1 − the share of goal keywords found in the actions', () => {
    // Goal keywords: parser, handle, empty, input (4). Actions mention parser and input: overlap 1/2.
    const result = scoreDrift({
      goal: 'The parser should handle empty input',
      recentCalls: [edit('src/parser.ts'), bash('node bin/run.js < input.txt')],
    });
    expect(result.objective).toBe(0.5);
    expect(result.score).toBe(0.2);
  });

  test('drift = 0.6 × circular + 0.4 × objective, with no float noise at the thresholds', () => {
    // Goal keywords: alpha, beta, gamma, delta; the calls mention 3 of 4 → objective 0.25.
    const result = scoreDrift({
      goal: 'alpha beta gamma delta',
      recentCalls: [bash('alpha beta gamma'), bash('alpha beta gamma'), bash('alpha beta gamma')],
    });
    expect(result).toMatchObject({ circular: 1, objective: 0.25, score: 0.7 });
    expect(nextDriftState(INITIAL_DRIFT_STATE, result).consecutiveHigh).toBe(0);
  });

  test('going in circles on something unrelated to the goal scores the maximum', () => {
    const result = scoreDrift({ goal: GOAL, recentCalls: [bash('ping -c1 example.org'), bash('ping -c1 example.org'), bash('ping -c1 example.org')] });
    expect(result).toEqual({
      score: 1,
      circular: 1,
      objective: 1,
      repeated: { kind: 'command', value: 'ping -c1 example.org', count: 3 },
    });
  });
});

describe('driftWarning', () => {
  const result = (score: number, repeated: DriftResult['repeated'], objective = 0.2): DriftResult => ({
    score,
    circular: repeated === null ? 0 : 1,
    objective,
    repeated,
  });

  test.each([
    ['at 0.5 or below: none', result(0.5, { kind: 'file', value: 'a.ts', count: 3 }), null],
    ['a repeated file is named', result(0.68, { kind: 'file', value: 'src/a.ts', count: 4 }), 'you wrote src/a.ts 4 times in the last 10 tool calls'],
    ['a repeated command is quoted', result(0.68, { kind: 'command', value: 'npm test', count: 3 }), 'you ran `npm test` 3 times in the last 10 tool calls'],
    ['off-topic too', result(1, { kind: 'command', value: 'ls', count: 5 }, 1), 'and your recent actions share little with the task'],
  ])('%s', (_, input, expected) => {
    const warning = driftWarning(input);
    if (expected === null) {
      expect(warning).toBeNull();
    } else {
      expect(warning).toContain(expected);
      expect(warning).toMatch(/^ATTENTION — drift \d\.\d\d:/);
      expect(warning).not.toContain('\n');
    }
  });

  test('a long command is cut', () => {
    const warning = driftWarning(result(0.9, { kind: 'command', value: `echo ${'x'.repeat(500)}`, count: 3 }));
    expect(warning?.length).toBeLessThan(400);
    expect(warning).toContain('...`');
  });
});

describe('nextDriftState', () => {
  const check = (score: number): DriftResult => ({ score, circular: 1, objective: 0, repeated: null });

  test.each<{ name: string; scores: number[]; expected: DriftState }>([
    { name: 'no checks', scores: [], expected: { consecutiveHigh: 0, shouldPause: false } },
    { name: 'two high checks', scores: [0.8, 0.9], expected: { consecutiveHigh: 2, shouldPause: false } },
    { name: 'three high checks in a row pause', scores: [0.8, 0.9, 1], expected: { consecutiveHigh: 3, shouldPause: true } },
    { name: 'exactly 0.7 is not high', scores: [0.8, 0.9, 0.7], expected: { consecutiveHigh: 0, shouldPause: false } },
    { name: 'a low check resets the run', scores: [0.8, 0.9, 0.2, 0.8, 0.9], expected: { consecutiveHigh: 2, shouldPause: false } },
    { name: 'stays paused while drift stays high', scores: [0.8, 0.8, 0.8, 0.8], expected: { consecutiveHigh: 4, shouldPause: true } },
  ])('$name', ({ scores, expected }) => {
    expect(scores.map(check).reduce(nextDriftState, INITIAL_DRIFT_STATE)).toEqual(expected);
  });

  test('pauses at DRIFT_PAUSE_CHECKS', () => {
    expect(DRIFT_PAUSE_CHECKS).toBe(3);
  });
});
