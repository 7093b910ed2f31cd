// Minimal valid records for state tests.

import { createEmptySummary } from '../../state/state-schema.js';
import type { GoalRecord } from '../../state/types.js';

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
