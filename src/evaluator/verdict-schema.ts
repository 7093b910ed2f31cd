// The verdict as the model writes it (snake_case JSON) and as goald uses it (Verdict). One zod schema
// describes the wire shape for the providers' strict modes; a more forgiving one parses what comes back.

import { z } from '../zod.js';
import type { Verdict } from './types.js';

/** The name of the Anthropic tool the model is forced to call, and of the OpenAI json_schema. */
export const VERDICT_TOOL_NAME = 'report_verdict';

export const VERDICT_TOOL_DESCRIPTION =
  'Report your verdict on whether the goal condition is met, judged only from the evidence given.';

// Strict-mode shape: OpenAI's strict json_schema requires every property to be listed in `required` and
// `additionalProperties: false`, so the optional fields are required-but-nullable here. Numeric bounds are
// left to the description (and enforced by the parser) because some OpenAI-compatible grammar engines
// reject `minimum`/`maximum`.
const verdictWireSchema = z
  .object({
    achieved: z.boolean().describe('true only when every clause of the condition is shown satisfied by the evidence'),
    blocked: z
      .boolean()
      .describe('true only when the goal cannot progress without a human (missing credentials, an impossible condition)'),
    reason: z.string().describe('one or two sentences citing the evidence that decided the verdict'),
    remaining: z.array(z.string()).describe('what is still unmet, one item per clause; empty when achieved'),
    next_step: z.string().nullable().describe('the single most useful next action for the agent, or null'),
    confidence: z.number().nullable().describe('confidence in this verdict from 0 to 1, or null'),
  })
  .strict();

function buildVerdictJsonSchema(): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(verdictWireSchema) as Record<string, unknown>;
  return schema;
}

/** JSON Schema for `response_format.json_schema.schema` (strict) and the report_verdict tool's input_schema. */
export const VERDICT_JSON_SCHEMA: Readonly<Record<string, unknown>> = buildVerdictJsonSchema();

/** A one-line description of the shape, for servers that only follow a plain-text JSON instruction. */
export const VERDICT_JSON_SHAPE =
  '{"achieved": boolean, "blocked": boolean, "reason": string, "remaining": string[], "next_step": string or null, "confidence": number from 0 to 1 or null}';

// What we accept back: null stands for absent (strict mode writes null for "no value"), `blocked` defaults to
// false and a missing `remaining` to [] because neither omission changes the meaning of the verdict.
// `achieved` and `reason` are required: without them there is no verdict.
const verdictSchema = z
  .object({
    achieved: z.boolean(),
    blocked: z.boolean().nullish(),
    reason: z.string(),
    remaining: z.array(z.string()).nullish(),
    next_step: z.string().nullish(),
    confidence: z.number().min(0).max(1).nullish(),
  })
  .transform((wire): Verdict => {
    const verdict: Verdict = {
      achieved: wire.achieved,
      blocked: wire.blocked ?? false,
      reason: wire.reason,
      remaining: wire.remaining ?? [],
    };
    if (wire.next_step !== null && wire.next_step !== undefined && wire.next_step.trim() !== '') {
      verdict.nextStep = wire.next_step;
    }
    if (wire.confidence !== null && wire.confidence !== undefined) verdict.confidence = wire.confidence;
    return verdict;
  });

export type VerdictParse = { ok: true; verdict: Verdict } | { ok: false; message: string };

// Validates a decoded JSON value as a verdict; the message names the offending fields.
export function parseVerdict(value: unknown): VerdictParse {
  const result = verdictSchema.safeParse(value);
  if (result.success) return { ok: true, verdict: result.data };
  const problems = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`);
  return { ok: false, message: `the verdict does not match the schema (${problems.join('; ')})` };
}

// Decodes and validates a model's text reply; `truncated` (the reply hit the token limit) is named in the
// message because it is the usual cause of broken JSON.
export function parseVerdictText(text: string, truncated: boolean): VerdictParse {
  const note = truncated ? ' (the reply was cut at the token limit)' : '';
  if (text.trim() === '') return { ok: false, message: `the reply is empty${note}` };
  const decoded = decodeReplyObject(text);
  if (decoded === undefined) {
    return {
      ok: false,
      message: `the reply is not JSON${note}: it must be one JSON object and nothing else; it starts ${JSON.stringify(text.trim().slice(0, 80))}`,
    };
  }
  const parsed = parseVerdict(decoded);
  return parsed.ok ? parsed : { ok: false, message: `${parsed.message}${note}` };
}

// One ```json (or bare ```) fence that is the whole reply, whitespace around it allowed.
const WHOLE_FENCE = /^```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

// Decodes a reply that IS one JSON object: the whole text, or the whole text inside one fence. Never an
// object found inside prose: the evidence the evaluator read (agent output, diffs) may hold an object like
// `{"achieved": true}`, and a reply that echoes it must not count as the verdict. Undefined otherwise.
export function decodeReplyObject(text: string): unknown {
  const trimmed = text.trim();
  const fenced = WHOLE_FENCE.exec(trimmed);
  const body = fenced ? (fenced[1] ?? '').trim() : trimmed;
  if (!body.startsWith('{')) return undefined;
  const value = tryParse(body);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
