// The turn record: one line of goals/<id>/turns.jsonl. Its zod schema is the persisted type (TurnRecord is
// inferred from it) and checks every record read back. The parts mirror the supervisor's own types (Usage,
// CheckResult, EvaluationResult, BreakerState, Trip, DriftResult...); test/state/turn-record.test.ts
// proves at compile time that each is exactly the same type, so the two cannot drift apart. Unknown keys
// (a newer goald's) are dropped on read; the log is append-only, so nothing is lost on disk.

import { z } from '../src/zod-mini.js';
import { BREAKER_NAMES } from '../machines/goal.machine.js';
import { GUARD_NOTE_KINDS } from '../src/guard/types.js';
import { goalStatusSchema, tamperFindingSchema } from './state-schema.js';

/** An agent turn's outcome (src/agents/types.ts TurnOutcome), or `interrupted` by a daemon that died. */
export const turnOutcomeSchema = z.enum([
  'completed',
  'failed',
  'timed-out',
  'token-limit',
  'aborted',
  'usage-limited',
  'spawn-failed',
  'interrupted',
]);

const usageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  cachedInputTokens: z.optional(z.number()),
  costUsd: z.nullable(z.number()),
  estimated: z.boolean(),
});

const agentRecordSchema = z.object({
  outcome: turnOutcomeSchema,
  exitCode: z.nullable(z.number()),
  signal: z.nullable(z.string()),
  durationMs: z.number(),
  usage: usageSchema,
  /** True when usage.costUsd was priced from goald's table rather than reported by the CLI (Codex). */
  costComputed: z.optional(z.boolean()),
  /** When the agent ran (epoch ms, from its release to its group's end): the guard's window on ignored files. Absent in older records. */
  window: z.optional(z.object({ from: z.number(), to: z.number() })),
  finalMessage: z.string(),
  error: z.nullable(z.string()),
});

const fileChangeSchema = z.object({
  path: z.string(),
  status: z.enum(['A', 'M', 'D', 'T']),
  added: z.nullable(z.number()),
  deleted: z.nullable(z.number()),
});

const checkResultSchema = z.object({
  name: z.string(),
  command: z.string(),
  exitCode: z.nullable(z.number()),
  passed: z.boolean(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  outputTail: z.string(),
  /** The test runner's counts, when goald recognised it in the check's output (absent in older records). */
  tests: z.optional(z.object({ runner: z.string(), passed: z.number(), failed: z.number(), skipped: z.number() })),
});

const verdictSchema = z.object({
  achieved: z.boolean(),
  blocked: z.boolean(),
  reason: z.string(),
  remaining: z.array(z.string()),
  nextStep: z.optional(z.string()),
  confidence: z.optional(z.number()),
});

const evaluatorUsageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });

const evaluationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('verdict'), verdict: verdictSchema, usage: evaluatorUsageSchema, model: z.string() }),
  z.object({
    kind: z.literal('error'),
    message: z.string(),
    usage: evaluatorUsageSchema,
    attempts: z.number(),
    rateLimited: z.optional(z.object({ retryAfterMs: z.nullable(z.number()) })),
  }),
  z.object({ kind: z.literal('skipped'), reason: z.string() }),
]);

const turnUsageSchema = z.object({ tokens: z.number(), costUsd: z.number(), activeMs: z.number() });

const breakerStateSchema = z.object({
  turns: z.number(),
  tokens: z.number(),
  costUsd: z.number(),
  activeMs: z.number(),
  consecutiveAgentFailures: z.number(),
  consecutivePermissionDenials: z.optional(z.number()),
  consecutiveEvaluatorFailures: z.number(),
  consecutiveStagnantTurns: z.number(),
  recentPatchIds: z.array(z.nullable(z.string())),
  treeHistory: z.array(z.string()),
  oscillations: z.number(),
  lastChecksSignature: z.nullable(z.string()),
  lastTurnTokenLimitHit: z.boolean(),
  recentTurns: z.optional(z.array(turnUsageSchema)),
  tamperTurns: z.optional(z.number()),
  noProgress: z.optional(z
    .object({
      fewestRemaining: z.nullable(z.number()),
      fewestFailingTests: z.nullable(z.number()),
      turnsWithout: z.number(),
      recent: z.array(z.object({ turn: z.number(), remaining: z.nullable(z.number()), failingTests: z.nullable(z.number()) })),
    })),
});

const tripSchema = z.object({
  breaker: z.enum(BREAKER_NAMES),
  message: z.string(),
  value: z.number(),
  limit: z.number(),
});

const driftRecordSchema = z.object({
  score: z.number(),
  circular: z.number(),
  objective: z.number(),
  repeated: z.nullable(z.object({ kind: z.enum(['file', 'command']), value: z.string(), count: z.number() })),
  consecutiveHigh: z.number(),
  pause: z.boolean(),
});

const guardNoteSchema = z.object({ path: z.string(), kind: z.enum(GUARD_NOTE_KINDS), detail: z.string() });

/** One line of goals/<id>/turns.jsonl. Turn 0 is the pre-check (no agent). */
export const turnRecordSchema = z.object({
  goalId: z.string(),
  turn: z.number(),
  startedAt: z.string(),
  finishedAt: z.string(),
  /** Null for turn 0 (no agent ran). */
  agent: z.nullable(agentRecordSchema),
  tree: z.string(),
  files: z.array(fileChangeSchema),
  patchId: z.nullable(z.string()),
  checks: z.array(checkResultSchema),
  /** The evaluator's result, stored as it came back. */
  evaluation: evaluationSchema,
  /** Agent + evaluator tokens of this turn. */
  tokens: z.number(),
  achieved: z.boolean(),
  breakers: breakerStateSchema,
  trip: z.nullable(tripSchema),
  /** Status after the turn. */
  status: goalStatusSchema,
  /** Relative to the goal's directory. */
  promptFile: z.nullable(z.string()),
  transcriptFile: z.nullable(z.string()),
  /** Drift measured from the turn's tool calls (structured adapters); null when there were none. */
  drift: z.optional(z.nullable(driftRecordSchema)),
  /** The tamper guard's findings on this turn ([] when clean; absent in records older than the guard). */
  tamper: z.optional(z.array(tamperFindingSchema)),
  /** What the guard reported without counting it as tamper (lost assertions, a config change nobody claimed). */
  guardNotes: z.optional(z.array(guardNoteSchema)),
  /** The regression guard (`--keep-best`): this turn's score, the best turn after it, and a rollback it made. */
  keepBest: z.optional(z
    .object({
      passingChecks: z.number(),
      passingTests: z.number(),
      best: z.object({ turn: z.number(), tree: z.string(), passingChecks: z.number(), passingTests: z.number(), allPassed: z.boolean() }),
      rolledBackTo: z.nullable(z.number()),
      /** Why a rollback the guard wanted did not happen (the user edited one of the files). */
      refused: z.optional(z.string()),
    })),
  /** Items the evaluator said remain and tests the checks failed (null: not measured); absent in older records. */
  distance: z.optional(z.object({ remaining: z.nullable(z.number()), failingTests: z.nullable(z.number()) })),
  /** How the turn's agent and checks ran: `bwrap` (sandboxed), `off` (by setting), `unavailable` (auto, no working bwrap). Absent in older records. */
  sandbox: z.optional(z.enum(['bwrap', 'off', 'unavailable'])),
  /** What the owner said with `goald say` that this turn's prompt carried (absent when nothing). */
  guidance: z.optional(z.array(z.string())),
});

/** One line of goals/<id>/turns.jsonl, as written and as read back. */
export type TurnRecord = z.infer<typeof turnRecordSchema>;
