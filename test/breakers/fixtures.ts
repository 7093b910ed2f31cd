// Shared inputs for the breaker tables: default limits and a turn-by-turn driver.

import { findTrip, initialBreakerState, nextBreakerState } from '../../src/breakers/index.js';
import type { BreakerState, Trip, TurnFacts } from '../../src/breakers/types.js';
import type { Limits } from '../../src/config/types.js';

export const INITIAL_TREE = 'tree-0';

/** DESIGN.md's defaults. */
export const LIMITS: Limits = {
  maxTurns: 20,
  tokenBudget: 500_000,
  turnTokenLimit: 50_000,
  turnTimeoutMs: 1_800_000,
  costBudgetUsd: null,
  wallClockMs: null,
  cooldownMs: 2_000,
  repeatedDiff: { count: 3, window: 5 },
  oscillation: 3,
  stagnation: 5,
  evaluatorFailures: 3,
  agentFailures: 3,
  blockedVerdicts: 3,
  permissionDenials: 2,
  tamper: 2,
  noProgress: 4,
};

export function limitsWith(over: Partial<Limits>): Limits {
  return { ...LIMITS, ...over };
}

/** A healthy turn `n`: a new tree, a new patch, one source file changed, checks unchanged. */
export function factsFor(turn: number, over: Partial<TurnFacts> = {}): TurnFacts {
  return {
    turn,
    tokens: 1_000,
    costUsd: 0,
    tree: `tree-${turn}`,
    patchId: `patch-${turn}`,
    changedPaths: ['src/index.ts'],
    checksSignature: 'test:fail',
    agentFailed: false,
    evaluatorFailed: false,
    turnTokenLimitHit: false,
    activeMs: 1_000,
    ...over,
  };
}

export interface TurnOutcome {
  state: BreakerState;
  trip: Trip | null;
}

/** Folds the turns (1-based; each entry overrides factsFor) and returns the state and trip after each. */
export function runTurns(
  turns: Partial<TurnFacts>[],
  limits: Limits = LIMITS,
  noisePaths: readonly string[] = [],
  start: BreakerState = initialBreakerState(INITIAL_TREE, 'test:fail'),
): TurnOutcome[] {
  const outcomes: TurnOutcome[] = [];
  let state = start;
  turns.forEach((over, index) => {
    const facts = factsFor(start.turns + index + 1, over);
    state = nextBreakerState(state, facts, noisePaths);
    outcomes.push({ state, trip: findTrip(state, limits, facts) });
  });
  return outcomes;
}

/** The 1-based turn at which the first trip happened, or null. */
export function firstTripTurn(outcomes: TurnOutcome[]): number | null {
  const index = outcomes.findIndex((outcome) => outcome.trip !== null);
  return index === -1 ? null : index + 1;
}

/** `n` copies of the same turn override. */
export function repeat(n: number, over: Partial<TurnFacts> = {}): Partial<TurnFacts>[] {
  return Array.from({ length: n }, () => ({ ...over }));
}
