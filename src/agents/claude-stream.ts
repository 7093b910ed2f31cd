// Reads Claude Code's `--output-format stream-json --verbose` output, one JSON event per line, as it
// arrives: session id and model (`system/init`), tool calls (`tool_use` blocks of `assistant` events),
// permission denials, usage limits (`rate_limit_event`, API error messages) and the final `result` with the
// turn's usage and cost. Pure: lines in, a summary out; the clock is an argument. Over 400 lines because
// Claude Code's event shapes (the zod schemas) and their quirks (below) are read in one place, beside
// their readers.
//
// Usage while the turn runs: each assistant event carries the usage snapshot of its API call as it
// started (input tokens, output_tokens ≈ 1), repeated on every content block of that call, so summing
// the events would count the same input many times. The live count is, per API call (message id), its
// input (uncached + cache writes) plus the larger of its reported output and its content's characters / 4.
// It only grows, stays near what the final `result.usage` will say, and the result replaces it.

import { z } from '../zod.js';
import { readClaudeToolCall } from '../hook/claude-tool-call.js';
import { clip } from '../cut-text.js';
import type { ToolCall } from './types.js';
import { readUsageLimitMessage, resetAtFromEpoch, type UsageLimitInfo } from './usage-limit.js';

// The usual rule of thumb for English text and code with BPE tokenizers (the command adapter's too).
const CHARS_PER_TOKEN = 4;
// Tool calls kept per turn; drift detection looks at the last few only, and a runaway turn must not
// fill memory.
const MAX_TOOL_CALLS = 1_000;
// How much of a message or error is kept.
const MAX_TEXT_CHARS = 4 * 1024;

const count = z.number().nonnegative().nullish();

const usageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
});

const rateLimitInfoSchema = z.looseObject({
  status: z.string().nullish(),
  resetsAt: z.number().nullish(),
  rateLimitType: z.string().nullish(),
});

const contentBlockSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  input: z.unknown().optional(),
});

const systemSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.string().nullish(),
  session_id: z.string().nullish(),
  model: z.string().nullish(),
  tool_name: z.string().nullish(),
  tool_use_id: z.string().nullish(),
});

const assistantSchema = z.looseObject({
  type: z.literal('assistant'),
  session_id: z.string().nullish(),
  uuid: z.string().nullish(),
  message: z.looseObject({
    id: z.string().nullish(),
    model: z.string().nullish(),
    content: z.array(contentBlockSchema).nullish(),
    usage: usageSchema.nullish(),
  }),
  // Set on the synthetic message Claude Code writes when an API call failed.
  error: z.string().nullish(),
  is_api_error_message: z.boolean().nullish(),
  api_error_status: z.number().nullish(),
  api_error: z.string().nullish(),
  api_error_params: z.looseObject({ rate_limit_info: rateLimitInfoSchema.nullish() }).nullish(),
});

const rateLimitEventSchema = z.looseObject({
  type: z.literal('rate_limit_event'),
  rate_limit_info: rateLimitInfoSchema,
});

const modelCostSchema = z.record(z.string(), z.looseObject({ costUSD: z.number().nullish() }));

const resultSchema = z.looseObject({
  type: z.literal('result'),
  subtype: z.string().nullish(),
  is_error: z.boolean().nullish(),
  result: z.string().nullish(),
  errors: z.array(z.unknown()).nullish(),
  session_id: z.string().nullish(),
  num_turns: z.number().nullish(),
  terminal_reason: z.string().nullish(),
  usage: usageSchema.nullish(),
  total_cost_usd: z.number().nullish(),
  model_usage_since_last_result: modelCostSchema.nullish(),
  permission_denials: z.array(z.looseObject({ tool_name: z.string().nullish() })).nullish(),
  api_error_status: z.number().nullish(),
  api_error_type: z.string().nullish(),
  api_error: z.string().nullish(),
});

type ResultEvent = z.infer<typeof resultSchema>;

/** Token counts of a turn as Claude Code reports them (the four are disjoint). */
export interface ClaudeTokens {
  inputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  outputTokens: number;
}

/** What the final `result` event said. */
export interface ClaudeResult {
  subtype: string | null;
  isError: boolean;
  /** completed, max_turns, api_error, ... */
  terminalReason: string | null;
  /** The final answer (or, with isError, the error text). */
  text: string | null;
  errors: string[];
  numTurns: number | null;
  tokens: ClaudeTokens;
  /** `total_cost_usd`: since the session began — after `--resume`, earlier invocations included. */
  totalCostUsd: number | null;
  /** The cost of this invocation alone (`model_usage_since_last_result`), when the CLI gives it. */
  invocationCostUsd: number | null;
  apiErrorStatus: number | null;
}

export interface ClaudeStreamSummary {
  sessionId: string | null;
  model: string | null;
  toolCalls: ToolCall[];
  /** The result's text, else the last text the assistant wrote. */
  finalMessage: string;
  /** From the result's `permission_denials` (authoritative), else the `permission_denied` events seen. */
  permissionDenials: number;
  /** The tools denied, in order, without repeats. */
  deniedTools: string[];
  result: ClaudeResult | null;
  /** Set when a usage or rate limit ended the turn; null when the turn ended for any other reason. */
  usageLimit: UsageLimitInfo | null;
  /** Why the CLI says the turn failed (max turns, an API error), in one line; null when it did not. */
  failure: string | null;
  /** Lines on stdout that were not stream-json events. */
  otherLines: number;
}

export interface ClaudeStreamOptions {
  /** The workspace: file paths in tool calls are made relative to it. */
  cwd?: string;
  /** The current time (ms since epoch), for reset times written as a wall-clock time. */
  now: () => number;
  /** The CLI's time zone (its TZ), for reset times written without one. */
  timeZone?: string;
}

export interface ClaudeStreamParser {
  /** Feeds one line of stdout. */
  push(line: string): void;
  /** The tokens the turn has used so far, as best known while it runs; the result's total once it came. */
  liveTokens(): number;
  summary(): ClaudeStreamSummary;
}

interface CallTokens {
  input: number;
  output: number;
  chars: number;
}

/** Creates a parser for one Claude Code invocation's stream-json output. */
export function createClaudeStreamParser(options: ClaudeStreamOptions): ClaudeStreamParser {
  let sessionId: string | null = null;
  let model: string | null = null;
  const toolCalls: ToolCall[] = [];
  const seenToolUses = new Set<string>();
  let lastAssistantText = '';
  const deniedEvents: string[] = [];
  const calls = new Map<string, CallTokens>();
  let liveFloor = 0;
  let result: ClaudeResult | null = null;
  let resultEvent: ResultEvent | null = null;
  // Usage-limit evidence, read only from the CLI's own events: never from tool results.
  let rejectedResetAt: number | null | undefined;
  let apiRateLimited = false;
  let apiErrorText: string | null = null;
  let otherLines = 0;

  const handleSystem = (event: z.infer<typeof systemSchema>): void => {
    if (event.subtype === 'init') {
      sessionId = event.session_id ?? sessionId;
      model = event.model ?? model;
    } else if (event.subtype === 'permission_denied') {
      deniedEvents.push(event.tool_name ?? 'unknown tool');
    }
  };

  const handleAssistant = (event: z.infer<typeof assistantSchema>): void => {
    sessionId ??= event.session_id ?? null;
    const message = event.message;
    if (event.is_api_error_message === true || event.error != null) {
      // The synthetic message Claude Code writes for a failed API call: its own words, not the model's.
      const text = textOf(message.content ?? []);
      if (text !== '') apiErrorText = cut(text);
      if (event.error === 'rate_limit' || event.api_error_status === 429 || event.api_error === 'usage_limit_reached') {
        apiRateLimited = true;
      }
      const info = event.api_error_params?.rate_limit_info;
      if (info?.status === 'rejected') rejectedResetAt = resetAtFromEpoch(info.resetsAt) ?? rejectedResetAt ?? null;
      return;
    }
    if (message.model != null && message.model !== '<synthetic>') model = message.model;

    const key = message.id ?? event.uuid ?? `call-${calls.size}`;
    const tokens = calls.get(key) ?? { input: 0, output: 0, chars: 0 };
    const usage = message.usage;
    if (usage != null) {
      tokens.input = Math.max(tokens.input, (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0));
      tokens.output = Math.max(tokens.output, usage.output_tokens ?? 0);
    }
    for (const block of message.content ?? []) {
      if (block.type === 'text' && block.text != null) {
        tokens.chars += block.text.length;
        if (block.text.trim() !== '') lastAssistantText = block.text;
      } else if (block.type === 'thinking' && block.thinking != null) {
        tokens.chars += block.thinking.length;
      } else if (block.type === 'tool_use' && block.name != null) {
        tokens.chars += block.name.length + jsonLength(block.input);
        const id = block.id ?? `${key}:${toolCalls.length}`;
        if (!seenToolUses.has(id) && toolCalls.length < MAX_TOOL_CALLS) {
          seenToolUses.add(id);
          toolCalls.push(readClaudeToolCall(block.name, block.input, options.cwd));
        }
      }
    }
    calls.set(key, tokens);
  };

  const handleResult = (event: ResultEvent): void => {
    resultEvent = event;
    sessionId = event.session_id ?? sessionId;
    const usage = event.usage;
    const invocationCosts = Object.values(event.model_usage_since_last_result ?? {})
      .map((entry) => entry.costUSD)
      .filter((cost): cost is number => typeof cost === 'number');
    result = {
      subtype: event.subtype ?? null,
      isError: event.is_error === true,
      terminalReason: event.terminal_reason ?? null,
      text: event.result ?? null,
      errors: (event.errors ?? []).map((error) => (typeof error === 'string' ? error : JSON.stringify(error))),
      numTurns: event.num_turns ?? null,
      tokens: {
        inputTokens: usage?.input_tokens ?? 0,
        cacheCreationInputTokens: usage?.cache_creation_input_tokens ?? 0,
        cacheReadInputTokens: usage?.cache_read_input_tokens ?? 0,
        outputTokens: usage?.output_tokens ?? 0,
      },
      totalCostUsd: event.total_cost_usd ?? null,
      invocationCostUsd: invocationCosts.length === 0 ? null : sum(invocationCosts),
      apiErrorStatus: event.api_error_status ?? null,
    };
    if (event.api_error_status === 429 || event.api_error_type === 'rate_limit_error' || event.api_error === 'usage_limit_reached') {
      apiRateLimited = true;
    }
  };

  const estimate = (): number => {
    let total = 0;
    for (const call of calls.values()) total += call.input + Math.max(call.output, Math.ceil(call.chars / CHARS_PER_TOKEN));
    liveFloor = Math.max(liveFloor, total);
    return liveFloor;
  };

  return {
    push(line) {
      const event = parseJsonLine(line);
      if (event === undefined) {
        if (line.trim() !== '') otherLines += 1;
        return;
      }
      switch (event.type) {
        case 'system': {
          const parsed = systemSchema.safeParse(event);
          if (parsed.success) handleSystem(parsed.data);
          return;
        }
        case 'assistant': {
          const parsed = assistantSchema.safeParse(event);
          if (parsed.success) handleAssistant(parsed.data);
          return;
        }
        case 'rate_limit_event': {
          const parsed = rateLimitEventSchema.safeParse(event);
          // `allowed` and `allowed_warning` only say how close the limit is.
          if (parsed.success && parsed.data.rate_limit_info.status === 'rejected') {
            rejectedResetAt = resetAtFromEpoch(parsed.data.rate_limit_info.resetsAt) ?? rejectedResetAt ?? null;
          }
          return;
        }
        case 'result': {
          const parsed = resultSchema.safeParse(event);
          if (parsed.success) handleResult(parsed.data);
          return;
        }
        default:
          // `user` events hold tool results: what tools printed is never read as the CLI's own word.
          return;
      }
    },
    liveTokens() {
      if (result !== null) return totalOf(result.tokens);
      return estimate();
    },
    summary() {
      const denials = resultEvent?.permission_denials;
      const deniedTools = denials != null ? denials.map((denial) => denial.tool_name ?? 'unknown tool') : deniedEvents;
      return {
        sessionId,
        model,
        toolCalls: [...toolCalls],
        finalMessage: result?.text ?? lastAssistantText,
        permissionDenials: deniedTools.length,
        deniedTools: [...new Set(deniedTools)],
        result,
        usageLimit: findUsageLimit(),
        failure: describeFailure(result),
        otherLines,
      };
    },
  };

  // A limit counts only when the turn ended on an error: Claude Code may fall back and go on after a
  // `rejected` rate-limit event, and then nothing stopped the turn.
  function findUsageLimit(): UsageLimitInfo | null {
    if (result !== null && !result.isError) return null;
    const clock = { now: options.now(), timeZone: options.timeZone };
    const errorText = result?.isError === true ? result.text : null;
    const fromText =
      (errorText !== null ? readUsageLimitMessage(errorText, clock) : null) ??
      (apiErrorText !== null ? readUsageLimitMessage(apiErrorText, clock) : null);
    const structured = rejectedResetAt !== undefined || apiRateLimited;
    if (!structured && fromText === null) return null;
    const message = fromText?.message ?? errorText ?? apiErrorText ?? 'usage limit reached';
    return { resetAt: rejectedResetAt ?? fromText?.resetAt ?? null, message: cut(message) };
  }
}

/** Input (uncached and cache writes) plus output: the tokens a turn is charged against its limits. */
export function totalOf(tokens: ClaudeTokens): number {
  return tokens.inputTokens + tokens.cacheCreationInputTokens + tokens.outputTokens;
}

// One line saying why Claude Code reported the turn as failed; null when it did not.
function describeFailure(result: ClaudeResult | null): string | null {
  if (result === null || !result.isError) return null;
  const detail = result.errors.join('; ') || result.text || '';
  if (result.subtype === 'error_max_turns' || result.terminalReason === 'max_turns') {
    // Claude Code's own words say it: "Reached maximum number of turns (3)".
    return cut(detail === '' ? 'reached its maximum number of turns' : detail);
  }
  if (result.terminalReason === 'api_error' || result.apiErrorStatus !== null) {
    return cut(`API error${result.apiErrorStatus === null ? '' : ` ${result.apiErrorStatus}`}: ${detail || 'no detail'}`);
  }
  const reason = result.terminalReason ?? result.subtype ?? 'error';
  return cut(detail === '' ? reason : `${reason}: ${detail}`);
}

function parseJsonLine(line: string): { type: unknown } | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && 'type' in value ? value : undefined;
  } catch {
    // A line cut at the splitter's limit, or noise.
    return undefined;
  }
}

function textOf(blocks: ReadonlyArray<{ type: string; text?: string | null }>): string {
  return blocks
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n')
    .trim();
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

// Error and limit texts travel on one line, bounded.
function cut(text: string): string {
  return clip(text, MAX_TEXT_CHARS);
}
