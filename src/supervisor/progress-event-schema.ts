// The zod schema of a progress event (types.ts ProgressEvent), for events read back from a goal's
// events.jsonl. test/supervisor/event-log.test.ts proves at compile time that it is exactly ProgressEvent.

import { z } from '../zod.js';
import { BREAKER_NAMES, FAILURE_REASONS } from '../../machines/goal.machine.js';
import { pauseReasonSchema } from '../../state/index.js';
import { turnOutcomeSchema } from '../../state/turn-record.js';
import { tamperFindingSchema } from '../../state/state-schema.js';

const checkBriefSchema = z.object({ name: z.string(), passed: z.boolean() });

/** One progress event, as `--json` prints it and events.jsonl stores it. */
export const progressEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('goal.started'),
    id: z.string(),
    condition: z.string(),
    workspace: z.string(),
    maxTurns: z.number(),
  }),
  z.object({ type: z.literal('precheck.finished'), id: z.string(), checks: z.array(checkBriefSchema), achieved: z.boolean() }),
  z.object({ type: z.literal('turn.started'), id: z.string(), turn: z.number(), maxTurns: z.number() }),
  z.object({
    type: z.literal('turn.finished'),
    id: z.string(),
    turn: z.number(),
    maxTurns: z.number(),
    outcome: turnOutcomeSchema,
    durationMs: z.number(),
    tokens: z.number(),
    tokensEstimated: z.boolean(),
    filesChanged: z.number(),
    checks: z.array(checkBriefSchema),
    verdict: z.object({ achieved: z.boolean(), reason: z.string() }).nullable(),
    evaluatorError: z.string().nullable(),
    agentError: z.string().nullable(),
    // Events written before the guard existed have none.
    tamper: z.array(tamperFindingSchema).default([]),
    view: z
      .object({
        costUsd: z.number().nullable(),
        remaining: z.array(z.string()),
        files: z.array(z.string()),
        breakers: z.partialRecord(z.enum(BREAKER_NAMES), z.number()),
      })
      .optional(),
    // Events written before the no-progress breaker existed have none.
    distance: z.object({ remaining: z.number().nullable(), failingTests: z.number().nullable() }).optional(),
  }),
  z.object({ type: z.literal('goal.paused'), id: z.string(), reason: pauseReasonSchema }),
  z.object({ type: z.literal('goal.resumed'), id: z.string() }),
  z.object({ type: z.literal('config.held'), id: z.string(), turn: z.number().nullable(), settings: z.array(z.string()) }),
  z.object({
    type: z.literal('goal.edited'),
    id: z.string(),
    by: z.enum(['goald edit', 'goald edit --apply-config', 'goal.config.json']),
    settings: z.array(z.string()),
    resumed: z.boolean(),
  }),
  z.object({
    type: z.literal('goal.finished'),
    id: z.string(),
    status: z.enum(['achieved', 'failed']),
    reason: z.enum(FAILURE_REASONS).nullable(),
    breaker: z.enum(BREAKER_NAMES).nullable(),
    turns: z.number(),
    tokens: z.number(),
  }),
]);
