// Reading Gemini CLI's `--output-format json` result: one JSON object printed when the run ends, with
// `session_id`, `response`, `stats` (per model: `tokens` {prompt, candidates, total, cached, thoughts, tool};
// per tool name: call counts) and, on failure, `error` {type, message, code}.

import { z } from '../zod.js';
import type { ToolCall } from './types.js';

export interface GeminiTokens {
  /** Prompt tokens plus tool-use prompt tokens: everything sent. */
  inputTokens: number;
  /** Candidate (answer) tokens plus thinking tokens: everything generated. */
  outputTokens: number;
  /** As the CLI reports it: prompt + candidates + thoughts + tool. */
  totalTokens: number;
  /** Prompt tokens served from the cache; part of inputTokens, not extra. */
  cachedTokens: number;
}

export interface GeminiOutput {
  response: string | null;
  sessionId: string | null;
  /** The model that used the most tokens (Gemini CLI also calls a small model for routing and checks). */
  model: string | null;
  /** Summed over every model; null when the output had no stats. */
  tokens: GeminiTokens | null;
  /** One call per use counted in `stats.tools.byName`, in the CLI's order; no paths or commands. */
  toolCalls: ToolCall[];
  error: { type: string; message: string; code: string | number | null } | null;
}

const count = z.number().nonnegative().catch(0).default(0);
const tokensSchema = z.looseObject({
  prompt: count,
  candidates: count,
  total: count,
  cached: count,
  thoughts: count,
  tool: count,
});
const outputSchema = z.looseObject({
  session_id: z.string().optional().catch(undefined),
  response: z.string().nullable().optional().catch(undefined),
  stats: z
    .looseObject({
      models: z
        .record(z.string(), z.looseObject({ tokens: tokensSchema.optional().catch(undefined) }))
        .optional()
        .catch(undefined),
      tools: z
        .looseObject({
          byName: z.record(z.string(), z.looseObject({ count: count })).optional().catch(undefined),
        })
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
  error: z
    .looseObject({
      type: z.string().catch('Error').default('Error'),
      message: z.string().catch('').default(''),
      code: z.union([z.string(), z.number()]).nullable().catch(null).default(null),
    })
    .nullable()
    .optional()
    .catch(undefined),
});
// A tool used more often than this in one turn is still counted, but only this many calls are listed.
const MAX_LISTED_TOOL_CALLS = 1_000;
// How many lines that open a JSON object are tried as the start of the result (noise before it is rare).
const MAX_START_CANDIDATES = 50;

/**
 * Parses the JSON result from the CLI's stdout; null when no JSON object is found. The object normally is
 * the whole of stdout; anything a wrapper printed before it is skipped.
 */
export function parseGeminiOutput(stdout: string): GeminiOutput | null {
  const value = findJsonObject(stdout);
  if (value === null) return null;
  const parsed = outputSchema.safeParse(value);
  if (!parsed.success) return null;
  const data = parsed.data;

  let tokens: GeminiTokens | null = null;
  let model: string | null = null;
  let modelTotal = -1;
  for (const [name, stats] of Object.entries(data.stats?.models ?? {})) {
    const used = stats.tokens;
    if (used === undefined) continue;
    tokens ??= { inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedTokens: 0 };
    tokens.inputTokens += used.prompt + used.tool;
    tokens.outputTokens += used.candidates + used.thoughts;
    tokens.totalTokens += used.total > 0 ? used.total : used.prompt + used.tool + used.candidates + used.thoughts;
    tokens.cachedTokens += used.cached;
    if (used.total > modelTotal) {
      modelTotal = used.total;
      model = name;
    }
  }

  const toolCalls: ToolCall[] = [];
  for (const [name, stats] of Object.entries(data.stats?.tools?.byName ?? {})) {
    const calls = Math.min(Math.floor(stats.count), MAX_LISTED_TOOL_CALLS - toolCalls.length);
    for (let index = 0; index < calls; index += 1) toolCalls.push({ name });
  }

  return {
    response: data.response ?? null,
    sessionId: data.session_id ?? null,
    model,
    tokens,
    toolCalls,
    error: data.error ?? null,
  };
}

// Gemini's usage limits: HTTP 429 / RESOURCE_EXHAUSTED from the API, "Quota exceeded ..." and the CLI's
// TerminalQuotaError ("You have exhausted your daily quota"). Only ever matched on the CLI's own error
// object, never on the response or tool output.
const USAGE_LIMIT_TEXT = /\b(quota|RESOURCE_EXHAUSTED|rate limit|too many requests)\b|exhausted your/i;

/** Whether the CLI's error says a usage or rate limit stopped the run. */
export function isGeminiUsageLimit(error: NonNullable<GeminiOutput['error']>): boolean {
  return String(error.code) === '429' || /quota/i.test(error.type) || USAGE_LIMIT_TEXT.test(error.message);
}

function findJsonObject(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const whole = tryParse(trimmed);
  if (isObject(whole)) return whole;
  // Noise first (a wrapper's banner, a warning on stdout): try from each line that opens an object.
  const lines = text.split('\n');
  let tried = 0;
  for (let index = 0; index < lines.length && tried < MAX_START_CANDIDATES; index += 1) {
    if (!(lines[index] ?? '').startsWith('{')) continue;
    tried += 1;
    const candidate = tryParse(lines.slice(index).join('\n').trim());
    if (isObject(candidate)) return candidate;
  }
  return null;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
