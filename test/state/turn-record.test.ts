import { describe, expect, expectTypeOf, it } from 'vitest';
import type { BreakerState, Trip } from '../../src/breakers/types.js';
import type { TurnOutcome, Usage } from '../../src/agents/types.js';
import type { EvaluationResult } from '../../src/evaluator/types.js';
import type { GuardNote, TamperFinding } from '../../src/guard/types.js';
import type { DriftResult } from '../../src/prompt/drift.js';
import type { CheckResult, FileChange } from '../../src/workspace/types.js';
import type { GoalStatus } from '../../machines/goal.machine.js';
import { turnRecordSchema, type TurnRecord } from '../../state/turn-record.js';
import { makeTurn } from './fixtures.js';

type AgentRecord = NonNullable<TurnRecord['agent']>;

describe('turn record schema', () => {
  // Checked by the compiler (npm run lint): the persisted parts are exactly the types the supervisor fills
  // them from, so a field added on one side and not the other fails to compile.
  it('persists exactly the supervisor types', () => {
    expectTypeOf<AgentRecord['outcome']>().toEqualTypeOf<TurnOutcome | 'interrupted'>();
    expectTypeOf<AgentRecord['usage']>().toEqualTypeOf<Usage>();
    expectTypeOf<TurnRecord['files'][number]>().toEqualTypeOf<FileChange>();
    expectTypeOf<TurnRecord['checks'][number]>().toEqualTypeOf<CheckResult>();
    expectTypeOf<TurnRecord['evaluation']>().toEqualTypeOf<EvaluationResult>();
    expectTypeOf<TurnRecord['breakers']>().toEqualTypeOf<BreakerState>();
    expectTypeOf<NonNullable<TurnRecord['trip']>>().toEqualTypeOf<Trip>();
    expectTypeOf<TurnRecord['status']>().toEqualTypeOf<GoalStatus>();
    type DriftRecord = NonNullable<TurnRecord['drift']>;
    expectTypeOf<Omit<DriftRecord, 'consecutiveHigh' | 'pause'>>().toEqualTypeOf<DriftResult>();
    expectTypeOf<Pick<DriftRecord, 'consecutiveHigh' | 'pause'>>().toEqualTypeOf<{ consecutiveHigh: number; pause: boolean }>();
    expectTypeOf<NonNullable<TurnRecord['tamper']>[number]>().toEqualTypeOf<TamperFinding>();
    expectTypeOf<NonNullable<TurnRecord['guardNotes']>[number]>().toEqualTypeOf<GuardNote>();
  });

  it('accepts a full record and a turn-0 pre-check record', () => {
    const full = makeTurn({
      checks: [{ name: 'test', command: 'npm test', exitCode: 1, passed: false, timedOut: false, durationMs: 5, outputTail: 'x' }],
      evaluation: {
        kind: 'verdict',
        verdict: { achieved: false, blocked: false, reason: 'r', remaining: ['a'], nextStep: 'n', confidence: 0.5 },
        usage: { inputTokens: 1, outputTokens: 2 },
        model: 'm',
      },
      trip: { breaker: 'max-turns', message: 'm', value: 3, limit: 3 },
      drift: { score: 0.5, circular: 1, objective: 0.2, repeated: { kind: 'file', value: 'a.txt', count: 3 }, consecutiveHigh: 1, pause: false },
    });
    expect(turnRecordSchema.parse(full)).toEqual(full);
    const precheck = makeTurn({ turn: 0, agent: null, files: [], patchId: null, promptFile: null, transcriptFile: null });
    expect(turnRecordSchema.parse(precheck)).toEqual(precheck);
  });

  it('rejects a record of the wrong shape', () => {
    expect(turnRecordSchema.safeParse({ turn: 1 }).success).toBe(false);
    expect(turnRecordSchema.safeParse({ ...makeTurn(), status: 'done' }).success).toBe(false);
    expect(turnRecordSchema.safeParse({ ...makeTurn(), agent: { ...makeTurn().agent, usage: null } }).success).toBe(false);
  });
});
