import { describe, expect, it } from 'vitest';
import {
  findTrip,
  initialBreakerState,
  mostRepeatedPatch,
  nextBreakerState,
  refuseNextTurn,
  TRIP_PRIORITY,
} from '../../src/breakers/index.js';
import type { BreakerName, BreakerState, TurnFacts } from '../../src/breakers/types.js';
import type { Limits } from '../../src/config/types.js';
import { factsFor, firstTripTurn, INITIAL_TREE, LIMITS, limitsWith, repeat, runTurns } from './fixtures.js';

const unchanged = { tree: INITIAL_TREE, patchId: null, changedPaths: [] };

interface TripCase {
  breaker: BreakerName;
  limits: Limits;
  turns: Partial<TurnFacts>[];
  /** The turn that trips; every earlier turn must not. */
  tripsAt: number;
  value: number;
  limit: number;
  message: string;
}

const TRIP_CASES: [string, TripCase][] = [
  [
    'tamper at the second tamper turn, in a row or not',
    {
      breaker: 'tamper',
      limits: LIMITS,
      turns: [{ tampered: true }, {}, {}, { tampered: true }],
      tripsAt: 4,
      value: 2,
      limit: 2,
      message: "2 turns weakened the goal's own grading (limit 2): protected paths, deleted or skipped tests, or a check's script",
    },
  ],
  [
    'max-turns at 4 turns',
    {
      breaker: 'max-turns',
      limits: limitsWith({ maxTurns: 4 }),
      turns: repeat(4),
      tripsAt: 4,
      value: 4,
      limit: 4,
      message: 'ran 4 turns without meeting the goal (limit 4)',
    },
  ],
  [
    'token-budget when the total reaches the budget',
    {
      breaker: 'token-budget',
      limits: limitsWith({ tokenBudget: 10_000 }),
      turns: repeat(4, { tokens: 2_500 }),
      tripsAt: 4,
      value: 10_000,
      limit: 10_000,
      message: 'used 10,000 tokens (budget 10,000)',
    },
  ],
  [
    'turn-token-limit at once',
    {
      breaker: 'turn-token-limit',
      limits: LIMITS,
      turns: [{}, { tokens: 50_123, turnTokenLimitHit: true }],
      tripsAt: 2,
      value: 50_123,
      limit: 50_000,
      message: 'turn 2 was killed at 50,123 tokens (per-turn limit 50,000)',
    },
  ],
  [
    'repeated-diff on the third same patch within 5 turns',
    {
      breaker: 'repeated-diff',
      limits: LIMITS,
      turns: [{ patchId: '1a2b3c4d5e6f' }, {}, { patchId: '1a2b3c4d5e6f' }, {}, { patchId: '1a2b3c4d5e6f' }],
      tripsAt: 5,
      value: 3,
      limit: 3,
      message: 'same diff 3 times in the last 5 turns (patch 1a2b3c4)',
    },
  ],
  [
    'oscillation on the third return',
    {
      breaker: 'oscillation',
      limits: LIMITS,
      turns: [{ tree: 't1' }, { tree: INITIAL_TREE }, { tree: 't1' }, { tree: INITIAL_TREE }],
      tripsAt: 4,
      value: 3,
      limit: 3,
      message: 'the tree returned to an earlier state 3 times (limit 3)',
    },
  ],
  [
    'stagnation after 5 unchanged turns',
    {
      breaker: 'stagnation',
      limits: LIMITS,
      turns: repeat(5, unchanged),
      tripsAt: 5,
      value: 5,
      limit: 5,
      message: 'no meaningful change for 5 consecutive turns (limit 5)',
    },
  ],
  [
    'evaluator-failures after 3 errors in a row',
    {
      breaker: 'evaluator-failures',
      limits: LIMITS,
      turns: repeat(3, { evaluatorFailed: true }),
      tripsAt: 3,
      value: 3,
      limit: 3,
      message: 'the evaluator failed 3 times in a row (limit 3)',
    },
  ],
  [
    'evaluator-failures counts across a skip',
    {
      breaker: 'evaluator-failures',
      limits: LIMITS,
      turns: [{ evaluatorFailed: true }, { evaluatorSkipped: true }, { evaluatorFailed: true }, { evaluatorFailed: true }],
      tripsAt: 4,
      value: 3,
      limit: 3,
      message: 'the evaluator failed 3 times in a row (limit 3)',
    },
  ],
  [
    'agent-failures after 3 failed turns in a row',
    {
      breaker: 'agent-failures',
      limits: LIMITS,
      turns: repeat(3, { agentFailed: true }),
      tripsAt: 3,
      value: 3,
      limit: 3,
      message: 'the agent failed 3 turns in a row (limit 3)',
    },
  ],
  [
    'cost-budget once the sum passes the budget',
    {
      breaker: 'cost-budget',
      limits: limitsWith({ costBudgetUsd: 1 }),
      turns: repeat(4, { costUsd: 0.3 }),
      tripsAt: 4,
      value: 0.3 * 4,
      limit: 1,
      message: 'spent $1.20 (budget $1.00)',
    },
  ],
  [
    'cost-budget: exactly the budget is not past it',
    {
      breaker: 'cost-budget',
      limits: limitsWith({ costBudgetUsd: 1 }),
      turns: repeat(5, { costUsd: 0.25 }),
      tripsAt: 5,
      value: 1.25,
      limit: 1,
      message: 'spent $1.25 (budget $1.00)',
    },
  ],
  [
    'wall-clock once active time passes the limit',
    {
      breaker: 'wall-clock',
      limits: limitsWith({ wallClockMs: 600_000 }),
      turns: repeat(4, { activeMs: 180_000 }),
      tripsAt: 4,
      value: 720_000,
      limit: 600_000,
      message: 'active for 12m 00s (limit 10m)',
    },
  ],
];

describe('findTrip', () => {
  it.each(TRIP_CASES)('%s, not one turn earlier', (_name, c) => {
    const outcomes = runTurns(c.turns, c.limits);
    expect(firstTripTurn(outcomes)).toBe(c.tripsAt);
    const trip = outcomes[c.tripsAt - 1]?.trip;
    expect(trip?.breaker).toBe(c.breaker);
    expect(trip?.value).toBeCloseTo(c.value);
    expect(trip?.limit).toBe(c.limit);
    expect(trip?.message).toBe(c.message);
  });

  it.each<[string, Partial<TurnFacts>[], Limits]>([
    ['a stagnation streak broken by a real change', [...repeat(4, unchanged), {}, ...repeat(4, { ...unchanged, tree: 'tree-5' })], LIMITS],
    [
      'a stagnation streak broken by changed checks',
      [...repeat(4, unchanged), { ...unchanged, checksSignature: 'test:pass' }, ...repeat(4, { ...unchanged, checksSignature: 'test:pass' })],
      LIMITS,
    ],
    ['agent failures broken by a success', [...repeat(2, { agentFailed: true }), {}, ...repeat(2, { agentFailed: true })], LIMITS],
    [
      'evaluator errors broken by a verdict',
      [...repeat(2, { evaluatorFailed: true }), {}, ...repeat(2, { evaluatorFailed: true })],
      LIMITS,
    ],
    [
      'the same patch spread wider than the window',
      [{ patchId: 'p' }, {}, {}, { patchId: 'p' }, {}, {}, { patchId: 'p' }],
      LIMITS,
    ],
    ['empty deltas are never a repeated diff', repeat(5, { patchId: null }), LIMITS],
    ['two returns only', [{ tree: 't1' }, { tree: INITIAL_TREE }, { tree: 't1' }], LIMITS],
    ['budgets off', repeat(6, { costUsd: 100, activeMs: 1e9 }), limitsWith({ costBudgetUsd: null, wallClockMs: null })],
    [
      'counters set to 0 are off',
      repeat(8, { ...unchanged, agentFailed: true, evaluatorFailed: true }),
      limitsWith({ stagnation: 0, agentFailures: 0, evaluatorFailures: 0 }),
    ],
  ])('does not trip: %s', (_name, turns, limits) => {
    expect(firstTripTurn(runTurns(turns, limits))).toBeNull();
  });

  it('counts noise-only turns toward stagnation', () => {
    const noisy = Array.from({ length: 5 }, (_, index) => ({ tree: `noisy-${index}`, changedPaths: ['yarn.lock', 'debug.log'] }));
    const outcomes = runTurns(noisy, LIMITS, ['yarn.lock', '*.log']);
    expect(firstTripTurn(outcomes)).toBe(5);
    expect(outcomes[4]?.trip?.breaker).toBe('stagnation');
  });

  it('follows the documented priority order', () => {
    expect(TRIP_PRIORITY).toEqual([
      'turn-token-limit',
      'tamper',
      'token-budget',
      'cost-budget',
      'wall-clock',
      'permission-denied',
      'agent-failures',
      'evaluator-failures',
      'repeated-diff',
      'oscillation',
      'stagnation',
      'no-progress',
      'max-turns',
    ]);
  });

  // A state where every breaker is at its limit: removing the winner each time walks the whole order.
  const everythingTripped: BreakerState = {
    ...initialBreakerState(INITIAL_TREE),
    turns: 20,
    tokens: 500_000,
    costUsd: 10,
    activeMs: 10_000,
    consecutiveAgentFailures: 3,
    consecutivePermissionDenials: 2,
    consecutiveEvaluatorFailures: 3,
    consecutiveStagnantTurns: 5,
    recentPatchIds: ['p', 'p', 'p'],
    oscillations: 3,
    tamperTurns: 2,
    noProgress: { fewestRemaining: 3, fewestFailingTests: null, turnsWithout: 4, recent: [] },
  };
  const allOn = limitsWith({ costBudgetUsd: 1, wallClockMs: 1_000 });
  const off: Record<BreakerName, Partial<Limits>> = {
    'turn-token-limit': {},
    'token-budget': { tokenBudget: 0 },
    'cost-budget': { costBudgetUsd: null },
    'wall-clock': { wallClockMs: null },
    'agent-failures': { agentFailures: 0 },
    'evaluator-failures': { evaluatorFailures: 0 },
    'repeated-diff': { repeatedDiff: { count: 0, window: 5 } },
    oscillation: { oscillation: 0 },
    stagnation: { stagnation: 0 },
    'max-turns': { maxTurns: 0 },
    'permission-denied': { permissionDenials: 0 },
    tamper: { tamper: 0 },
    'no-progress': { noProgress: 0 },
  };

  it.each(TRIP_PRIORITY.map((breaker, index) => [breaker, index] as const))(
    'picks %s when every breaker before it is quiet',
    (breaker, index) => {
      const limits = TRIP_PRIORITY.slice(0, index).reduce<Limits>((acc, name) => ({ ...acc, ...off[name] }), allOn);
      const facts = factsFor(20, { turnTokenLimitHit: index === 0 });
      expect(findTrip(everythingTripped, limits, facts)?.breaker).toBe(breaker);
    },
  );

  it('trips nothing for a healthy turn', () => {
    const state = nextBreakerState(initialBreakerState(INITIAL_TREE), factsFor(1), []);
    expect(findTrip(state, LIMITS, factsFor(1))).toBeNull();
  });
});

describe('mostRepeatedPatch', () => {
  it.each<[(string | null)[], number, { patchId: string; times: number } | null]>([
    [[], 5, null],
    [[null, null], 5, null],
    [['a', 'b', 'a'], 5, { patchId: 'a', times: 2 }],
    [['a', 'a', 'b', 'b'], 5, { patchId: 'b', times: 2 }],
    [['a', 'a', 'a', 'b', 'c'], 2, { patchId: 'c', times: 1 }],
  ])('%j in a window of %i -> %j', (ids, window, expected) => {
    expect(mostRepeatedPatch(ids, window)).toEqual(expected);
  });
});

describe('refuseNextTurn', () => {
  const afterTurns = (turns: Partial<TurnFacts>[], start?: BreakerState): BreakerState => {
    const outcomes = runTurns(turns, LIMITS, [], start);
    return outcomes.at(-1)?.state ?? initialBreakerState(INITIAL_TREE);
  };

  it.each<[string, BreakerState, Limits, number | undefined, { breaker: BreakerName; value: number; limit: number } | null]>([
    ['a fresh goal', initialBreakerState(INITIAL_TREE), LIMITS, undefined, null],
    ['turns left', afterTurns(repeat(3)), limitsWith({ maxTurns: 4 }), undefined, null],
    ['max-turns already reached', afterTurns(repeat(4)), limitsWith({ maxTurns: 4 }), undefined, { breaker: 'max-turns', value: 4, limit: 4 }],
    [
      'token-budget: the projection lands on the budget',
      afterTurns(repeat(3, { tokens: 100_000 })),
      limitsWith({ tokenBudget: 400_000 }),
      undefined,
      null,
    ],
    [
      'token-budget: the projection crosses it',
      afterTurns(repeat(3, { tokens: 100_000 })),
      limitsWith({ tokenBudget: 399_999 }),
      undefined,
      { breaker: 'token-budget', value: 400_000, limit: 399_999 },
    ],
    [
      'token-budget: projected from the recent turns, not the first big one',
      afterTurns([{ tokens: 300_000 }, ...repeat(3, { tokens: 10_000 })]),
      limitsWith({ tokenBudget: 345_000 }),
      undefined,
      null,
    ],
    [
      'token-budget: already reached before turn 1 (precheck evaluator tokens)',
      { ...initialBreakerState(INITIAL_TREE), tokens: 1_000 },
      limitsWith({ tokenBudget: 1_000 }),
      undefined,
      { breaker: 'token-budget', value: 1_000, limit: 1_000 },
    ],
    [
      'cost-budget: the projection crosses it',
      afterTurns(repeat(3, { costUsd: 0.4 })),
      limitsWith({ costBudgetUsd: 1.5 }),
      undefined,
      { breaker: 'cost-budget', value: 1.6, limit: 1.5 },
    ],
    ['cost-budget: fits', afterTurns(repeat(3, { costUsd: 0.4 })), limitsWith({ costBudgetUsd: 1.6 }), undefined, null],
    ['cost-budget off', afterTurns(repeat(3, { costUsd: 40 })), LIMITS, undefined, null],
    [
      'wall-clock: no time left (state)',
      afterTurns(repeat(2, { activeMs: 5_000 })),
      limitsWith({ wallClockMs: 10_000 }),
      undefined,
      { breaker: 'wall-clock', value: 10_000, limit: 10_000 },
    ],
    [
      'wall-clock: no time left (measured by the caller)',
      afterTurns(repeat(1, { activeMs: 5_000 })),
      limitsWith({ wallClockMs: 10_000 }),
      12_000,
      { breaker: 'wall-clock', value: 12_000, limit: 10_000 },
    ],
    ['wall-clock: time left', afterTurns(repeat(1, { activeMs: 5_000 })), limitsWith({ wallClockMs: 10_000 }), 9_999, null],
    [
      'max-turns comes before the budgets',
      afterTurns(repeat(2, { tokens: 1_000_000 })),
      limitsWith({ maxTurns: 2 }),
      undefined,
      { breaker: 'max-turns', value: 2, limit: 2 },
    ],
  ])('%s', (_name, state, limits, activeMs, expected) => {
    const refusal = refuseNextTurn(state, limits, activeMs);
    if (expected === null) {
      expect(refusal).toBeNull();
      return;
    }
    expect(refusal).toMatchObject({ breaker: expected.breaker, limit: expected.limit });
    expect(refusal?.value).toBeCloseTo(expected.value);
    expect(refusal?.message).toMatch(/\d/);
  });

  it('says what it projected', () => {
    const state = afterTurns(repeat(3, { tokens: 100_000 }));
    expect(refuseNextTurn(state, limitsWith({ tokenBudget: 350_000 }))?.message).toBe(
      'the next turn would cross the token budget: 300,000 used + about 100,000 projected > 350,000',
    );
  });
});
