// Minimal valid records for state tests.

import { createEmptySummary } from '../../state/state-schema.js';
import type { TurnRecord } from '../../state/turn-record.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';

/** A valid goal record with the given id. */
export function makeGoal(id: string, overrides: Partial<GoalRecord> = {}): GoalRecord {
  return {
    id,
    condition: 'all tests pass',
    workspace: '/tmp/ws',
    status: 'active',
    phase: 'running',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    reason: null,
    reasonMessage: null,
    pauseReason: null,
    loopId: null,
    settings: { condition: 'all tests pass' },
    machine: null,
    summary: createEmptySummary(),
    owner: null,
    runningAgent: null,
    ...overrides,
  };
}

/** A valid loop record with the given id: every 30m, scheduled, never run yet. */
export function makeLoop(id: string, overrides: Partial<LoopRecord> = {}): LoopRecord {
  return {
    id,
    workspace: '/ws',
    every: '30m',
    condition: 'deps are up to date',
    options: {},
    source: 'cli',
    createdAt: '2026-12-02T08:00:00.000Z',
    nextRunAt: '2026-12-02T10:30:00.000Z',
    lastRunAt: null,
    lastGoalId: null,
    lastOutcome: null,
    runs: 0,
    skipped: 0,
    waiting: false,
    catchUp: 'once',
    stopped: false,
    ...overrides,
  };
}

/** A valid turn record (turn 1 of goal g1 unless overridden). */
export function makeTurn(overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    goalId: 'g1',
    turn: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    agent: {
      outcome: 'completed',
      exitCode: 0,
      signal: null,
      durationMs: 1000,
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: null, estimated: true },
      finalMessage: 'done',
      error: null,
    },
    tree: 'a'.repeat(40),
    files: [{ path: 'a.txt', status: 'A', added: 1, deleted: 0 }],
    patchId: 'b'.repeat(40),
    checks: [],
    evaluation: { kind: 'skipped', reason: 'no evaluator' },
    tokens: 15,
    achieved: false,
    breakers: {
      turns: 1,
      tokens: 15,
      costUsd: 0,
      activeMs: 1000,
      consecutiveAgentFailures: 0,
      consecutiveEvaluatorFailures: 0,
      consecutiveStagnantTurns: 0,
      recentPatchIds: ['b'.repeat(40)],
      treeHistory: ['c'.repeat(40), 'a'.repeat(40)],
      oscillations: 0,
      lastChecksSignature: null,
      lastTurnTokenLimitHit: false,
    },
    trip: null,
    status: 'active',
    promptFile: 'turn-1.prompt.txt',
    transcriptFile: 'turn-1.log',
    ...overrides,
  };
}
