import { describe, expect, it } from 'vitest';
import {
  accountUnevaluatedTurn,
  DEFAULT_NOISE_PATHS,
  initialBreakerState,
  nextBreakerState,
  PATCH_HISTORY_LIMIT,
  projectNextTurn,
  TREE_HISTORY_LIMIT,
} from '../../src/breakers/index.js';
import type { BreakerState, TurnFacts } from '../../src/breakers/types.js';
import { factsFor, INITIAL_TREE, repeat, runTurns } from './fixtures.js';

const last = <T>(items: T[]): T => {
  const item = items.at(-1);
  if (item === undefined) throw new Error('no items');
  return item;
};

describe('initialBreakerState', () => {
  it('starts from the pre-turn tree with every counter at zero', () => {
    expect(initialBreakerState('abc')).toEqual({
      turns: 0,
      tokens: 0,
      costUsd: 0,
      activeMs: 0,
      consecutiveAgentFailures: 0,
      consecutiveEvaluatorFailures: 0,
      consecutiveStagnantTurns: 0,
      recentPatchIds: [],
      treeHistory: ['abc'],
      oscillations: 0,
      lastChecksSignature: null,
      lastTurnTokenLimitHit: false,
      recentTurns: [],
      noProgress: { fewestRemaining: null, fewestFailingTests: null, turnsWithout: 0, recent: [] },
    });
  });

  it('takes the precheck signature', () => {
    expect(initialBreakerState('abc', 'test:fail').lastChecksSignature).toBe('test:fail');
  });

  it('is plain JSON', () => {
    const state = last(runTurns(repeat(3))).state;
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });
});

describe('nextBreakerState', () => {
  it('sums tokens, cost and active time and counts turns', () => {
    const state = last(
      runTurns([
        { tokens: 100, costUsd: 0.5, activeMs: 10 },
        { tokens: 200, costUsd: 0.25, activeMs: 20 },
      ]),
    ).state;
    expect(state).toMatchObject({ turns: 2, tokens: 300, costUsd: 0.75, activeMs: 30 });
  });

  it('trusts a turn number that is ahead (an interrupted turn still ran)', () => {
    const state = nextBreakerState(initialBreakerState(INITIAL_TREE), factsFor(4), []);
    expect(state.turns).toBe(4);
  });

  it('does not mutate its input', () => {
    const before = initialBreakerState(INITIAL_TREE);
    const copy = structuredClone(before);
    nextBreakerState(before, factsFor(1), []);
    expect(before).toEqual(copy);
  });

  const same = { tree: INITIAL_TREE, patchId: null, changedPaths: [] };
  // Each row: turns after the initial state, the stagnation streak after the last one.
  it.each<[string, Partial<TurnFacts>[], readonly string[], number]>([
    ['unchanged tree, unchanged checks', repeat(3, same), [], 3],
    ['a source change resets', [...repeat(2, same), {}, { ...same, tree: 'tree-3' }], [], 1],
    [
      'only noise changed',
      [{ tree: 't1', changedPaths: ['package-lock.json', 'logs/a.log'] }, { tree: 't2', changedPaths: ['yarn.lock'] }],
      DEFAULT_NOISE_PATHS,
      2,
    ],
    [
      'noise plus one real file is change',
      [{ tree: 't1', changedPaths: ['package-lock.json', 'src/a.ts'] }],
      DEFAULT_NOISE_PATHS,
      0,
    ],
    ['noise paths do not apply when not configured', [{ tree: 't1', changedPaths: ['yarn.lock'] }], [], 0],
    ['a changed tree without a path list is change', [{ tree: 't1', changedPaths: [] }], DEFAULT_NOISE_PATHS, 0],
    ['changed check results reset', [...repeat(2, same), { ...same, checksSignature: 'test:pass' }], [], 0],
    [
      'the same new check results afterwards count again',
      [{ ...same, checksSignature: 'test:pass' }, { ...same, checksSignature: 'test:pass' }],
      [],
      1,
    ],
    ['an agent commit changes the tree', [...repeat(4, same), { tree: 'committed', changedPaths: ['src/a.ts'] }], [], 0],
  ])('stagnation: %s', (_name, turns, noise, streak) => {
    expect(last(runTurns(turns, undefined, noise)).state.consecutiveStagnantTurns).toBe(streak);
  });

  it('compares the first turn with no checks signature as unchanged checks', () => {
    const start = initialBreakerState(INITIAL_TREE);
    const state = nextBreakerState(start, factsFor(1, { tree: INITIAL_TREE, changedPaths: [] }), []);
    expect(state.consecutiveStagnantTurns).toBe(1);
  });

  it.each<[string, string[], number]>([
    ['a return to the initial tree', ['t1', INITIAL_TREE], 1],
    ['no return: unchanged is not a return', ['t1', 't1', 't1'], 0],
    ['back and forth', ['t1', INITIAL_TREE, 't1', INITIAL_TREE], 3],
    ['all new trees', ['t1', 't2', 't3', 't4'], 0],
    ['a return after a pause on the same tree', ['t1', 't2', 't2', 't1'], 1],
  ])('oscillation: %s', (_name, trees, count) => {
    const outcomes = runTurns(trees.map((tree) => ({ tree })));
    expect(last(outcomes).state.oscillations).toBe(count);
  });

  it.each<[string, Partial<TurnFacts>[], number]>([
    ['failures count', repeat(2, { agentFailed: true }), 2],
    ['a success resets', [{ agentFailed: true }, { agentFailed: true }, {}], 0],
    ['a failure after a success starts over', [{ agentFailed: true }, {}, { agentFailed: true }], 1],
  ])('agent failures: %s', (_name, turns, streak) => {
    expect(last(runTurns(turns)).state.consecutiveAgentFailures).toBe(streak);
  });

  it.each<[string, Partial<TurnFacts>[], number]>([
    ['errors count', repeat(2, { evaluatorFailed: true }), 2],
    ['a verdict resets', [{ evaluatorFailed: true }, {}], 0],
    ['a skip leaves the streak', [{ evaluatorFailed: true }, { evaluatorSkipped: true }], 1],
    ['a skip does not start a streak', [{ evaluatorSkipped: true }], 0],
    ['an error counts even if marked skipped', [{ evaluatorFailed: true, evaluatorSkipped: true }], 1],
  ])('evaluator failures: %s', (_name, turns, streak) => {
    expect(last(runTurns(turns)).state.consecutiveEvaluatorFailures).toBe(streak);
  });

  it('records the patch ids (null for empty deltas) and the token-limit flag', () => {
    const outcomes = runTurns([{ patchId: 'p1' }, { patchId: null, turnTokenLimitHit: true }]);
    expect(last(outcomes).state).toMatchObject({ recentPatchIds: ['p1', null], lastTurnTokenLimitHit: true });
  });

  it('keeps the histories bounded', () => {
    const turns = TREE_HISTORY_LIMIT + 30;
    const state = last(runTurns(repeat(turns))).state;
    expect(state.treeHistory).toHaveLength(TREE_HISTORY_LIMIT);
    expect(last(state.treeHistory)).toBe(`tree-${turns}`);
    expect(state.recentPatchIds).toHaveLength(PATCH_HISTORY_LIMIT);
    expect(last(state.recentPatchIds)).toBe(`patch-${turns}`);
    expect(state.recentTurns).toHaveLength(3);
  });
});

describe('projectNextTurn', () => {
  it.each<[string, BreakerState, { tokens: number; costUsd: number; activeMs: number }]>([
    ['nothing before turn 1', initialBreakerState(INITIAL_TREE), { tokens: 0, costUsd: 0, activeMs: 0 }],
    [
      'the average of the last three turns',
      last(
        runTurns([
          { tokens: 100_000, costUsd: 1, activeMs: 9_000 },
          { tokens: 10_000, costUsd: 0.1, activeMs: 1_000 },
          { tokens: 20_000, costUsd: 0.2, activeMs: 2_000 },
          { tokens: 30_000, costUsd: 0.3, activeMs: 3_000 },
        ]),
      ).state,
      { tokens: 20_000, costUsd: 0.2, activeMs: 2_000 },
    ],
    [
      'all turns when the state has no recent list',
      { ...initialBreakerState(INITIAL_TREE), turns: 4, tokens: 40_000, costUsd: 2, activeMs: 8_000, recentTurns: undefined },
      { tokens: 10_000, costUsd: 0.5, activeMs: 2_000 },
    ],
  ])('%s', (_name, state, expected) => {
    const projected = projectNextTurn(state);
    expect(projected.tokens).toBeCloseTo(expected.tokens);
    expect(projected.costUsd).toBeCloseTo(expected.costUsd);
    expect(projected.activeMs).toBeCloseTo(expected.activeMs);
  });
});

describe('accountUnevaluatedTurn', () => {
  it('adds what a turn without a verdict spent to the budgets and leaves the pattern breakers alone', () => {
    const before = { ...initialBreakerState('tree-0', 'sig'), consecutiveStagnantTurns: 2, recentTurns: [{ tokens: 5, costUsd: 0.1, activeMs: 10 }] };
    const after = accountUnevaluatedTurn(before, 3, { tokens: 1_100, costUsd: 0.6, activeMs: 2_000 });
    expect(after).toEqual({ ...before, turns: 3, tokens: 1_100, costUsd: 0.6, activeMs: 2_000 });
  });

  it('never moves the turn count back', () => {
    const before = { ...initialBreakerState('tree-0'), turns: 5 };
    expect(accountUnevaluatedTurn(before, 0, { tokens: 7, costUsd: 0, activeMs: 0 })).toMatchObject({ turns: 5, tokens: 7 });
  });
});
