import { describe, expect, it } from 'vitest';
import type { TurnResult } from '../../src/agents/types.js';
import { initialBreakerState } from '../../src/breakers/index.js';
import { agentRecordOf, buildTurnRecord, lostAgentRecord, turnFiles } from '../../src/supervisor/turn-record.js';

const result: TurnResult = {
  outcome: 'completed',
  exitCode: 0,
  signal: null,
  durationMs: 12,
  usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7, costUsd: 0.01, estimated: false },
  costComputed: true,
  finalMessage: 'done',
  outputTail: 'tail is not recorded',
};

describe('turn records', () => {
  it('names turn N files after the turn', () => {
    expect(turnFiles(3)).toEqual({ promptFile: 'turn-3.prompt.txt', transcriptFile: 'turn-3.log', stateDir: 'turn-3.state' });
  });

  it('records the agent result without its output tail, and marks an interrupted turn', () => {
    expect(agentRecordOf(result)).toEqual({
      outcome: 'completed',
      exitCode: 0,
      signal: null,
      durationMs: 12,
      usage: result.usage,
      costComputed: true,
      finalMessage: 'done',
      error: null,
    });
    expect(agentRecordOf({ ...result, costComputed: false }, { outcome: 'interrupted', error: 'gone' })).toEqual(
      expect.objectContaining({ outcome: 'interrupted', error: 'gone' }),
    );
    expect(agentRecordOf({ ...result, costComputed: false })).not.toHaveProperty('costComputed');
    expect(lostAgentRecord('daemon died')).toMatchObject({ outcome: 'interrupted', durationMs: 0, error: 'daemon died', usage: { totalTokens: 0 } });
  });

  it('fills what a turn that ended early did not observe, and gives turn 0 no prompt or transcript', () => {
    const breakers = initialBreakerState('tree-0');
    const base = { goalId: 'g1', startedAt: 0, finishedAt: 1_000, tree: 'tree-1', breakers, status: 'active' as const, tokens: 5 };
    const evaluation = { kind: 'skipped' as const, reason: 'interrupted' };
    expect(buildTurnRecord({ ...base, turn: 2, agent: agentRecordOf(result), evaluation })).toEqual({
      goalId: 'g1',
      turn: 2,
      startedAt: '1970-01-01T00:00:00.000Z',
      finishedAt: '1970-01-01T00:00:01.000Z',
      agent: agentRecordOf(result),
      tree: 'tree-1',
      files: [],
      patchId: null,
      checks: [],
      evaluation,
      tokens: 5,
      achieved: false,
      breakers,
      trip: null,
      status: 'active',
      promptFile: 'turn-2.prompt.txt',
      transcriptFile: 'turn-2.log',
      drift: null,
      tamper: [],
      guardNotes: [],
    });
    expect(buildTurnRecord({ ...base, turn: 0, agent: null, evaluation })).toMatchObject({ promptFile: null, transcriptFile: null });
  });
});
