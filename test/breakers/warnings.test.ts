import { describe, expect, it } from 'vitest';
import { initialBreakerState, nearBreakerWarnings } from '../../src/breakers/index.js';
import type { BreakerState } from '../../src/breakers/types.js';
import type { Limits } from '../../src/config/types.js';
import { INITIAL_TREE, LIMITS, limitsWith, repeat, runTurns } from './fixtures.js';

const base = initialBreakerState(INITIAL_TREE);
const withState = (over: Partial<BreakerState>): BreakerState => ({ ...base, ...over });
const afterTurns = (turns: Parameters<typeof runTurns>[0]): BreakerState => runTurns(turns).at(-1)?.state ?? base;

describe('nearBreakerWarnings', () => {
  it.each<[string, BreakerState, Limits, string[]]>([
    ['nothing on a fresh goal', base, LIMITS, []],
    ['stagnation 2 of 5 is not close yet', withState({ consecutiveStagnantTurns: 2 }), LIMITS, []],
    [
      'stagnation 3 of 5',
      withState({ consecutiveStagnantTurns: 3 }),
      LIMITS,
      ['3 turns without meaningful change; goald stops at 5'],
    ],
    [
      'stagnation 4 of 5',
      withState({ consecutiveStagnantTurns: 4 }),
      LIMITS,
      ['4 turns without meaningful change; goald stops at 5'],
    ],
    ['stagnation at the limit says nothing (it trips)', withState({ consecutiveStagnantTurns: 5 }), LIMITS, []],
    ['stagnation off', withState({ consecutiveStagnantTurns: 4 }), limitsWith({ stagnation: 0 }), []],
    ['one tamper turn of 2', afterTurns([{ tampered: true }, {}]), LIMITS, ['1 tamper turn; goald stops at 2']],
    ['tamper off', withState({ tamperTurns: 1 }), limitsWith({ tamper: 0 }), []],
    [
      'one agent failure of 3',
      withState({ consecutiveAgentFailures: 1 }),
      LIMITS,
      ['1 agent failure in a row; goald stops at 3'],
    ],
    [
      'two evaluator failures of 3',
      withState({ consecutiveEvaluatorFailures: 2 }),
      LIMITS,
      ['2 evaluator failures in a row; goald stops at 3'],
    ],
    [
      'the same diff twice in the window',
      withState({ recentPatchIds: ['p', null, 'p'] }),
      LIMITS,
      ['the same diff 2 times in the last 5 turns; goald stops at 3'],
    ],
    ['a diff seen once is not a repeat', withState({ recentPatchIds: ['p', 'q'] }), LIMITS, []],
    [
      'oscillation 2 of 3',
      withState({ oscillations: 2 }),
      LIMITS,
      ['the tree returned to an earlier state 2 times; goald stops at 3'],
    ],
    ['max-turns 17 of 20 is not close yet', withState({ turns: 17 }), LIMITS, []],
    ['max-turns 18 of 20', withState({ turns: 18 }), LIMITS, ['18 of 20 turns used; goald stops at 20']],
    [
      'tokens: 2 more turns fit at the recent rate',
      afterTurns(repeat(3, { tokens: 100_000 })),
      limitsWith({ tokenBudget: 500_000 }),
      ['300,000 of 500,000 tokens used, about 2 turns left at the recent rate; goald stops at the budget'],
    ],
    [
      'tokens: 3 more turns fit',
      afterTurns(repeat(3, { tokens: 100_000 })),
      limitsWith({ tokenBudget: 600_000 }),
      [],
    ],
    [
      'cost: 1 more turn fits',
      afterTurns(repeat(3, { costUsd: 0.4 })),
      limitsWith({ costBudgetUsd: 1.6 }),
      ['$1.20 of $1.60 spent, about 1 turn left at the recent rate; goald stops at the budget'],
    ],
    [
      'wall-clock: 2 more turns fit',
      afterTurns(repeat(2, { activeMs: 600_000 })),
      limitsWith({ wallClockMs: 2_400_000 }),
      ['active for 20m 00s of 40m, about 2 turns left at the recent pace; goald stops at the limit'],
    ],
    [
      'several at once, in trip order',
      withState({ turns: 19, consecutiveStagnantTurns: 4, consecutiveAgentFailures: 2 }),
      LIMITS,
      [
        '2 agent failures in a row; goald stops at 3',
        '4 turns without meaningful change; goald stops at 5',
        '19 of 20 turns used; goald stops at 20',
      ],
    ],
  ])('%s', (_name, state, limits, expected) => {
    expect(nearBreakerWarnings(state, limits)).toEqual(expected);
  });
});
