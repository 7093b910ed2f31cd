// The Anthropic evaluator: the Messages API with the report_verdict tool forced, so the verdict arrives as
// the tool call's JSON input rather than as prose to be parsed.

import Anthropic from '@anthropic-ai/sdk';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import type { ReplyOutcome } from './reply-outcome.js';
import type { SdkEvaluatorOptions } from './sdk-evaluator.js';
import { createSdkEvaluator, sdkTimeoutMs } from './sdk-evaluator.js';
import type { Evaluator } from './types.js';
import {
  parseVerdict,
  parseVerdictText,
  VERDICT_JSON_SCHEMA,
  VERDICT_TOOL_DESCRIPTION,
  VERDICT_TOOL_NAME,
} from './verdict-schema.js';

export interface AnthropicEvaluatorOptions extends SdkEvaluatorOptions {
  /** Without the version path: the SDK appends `/v1/messages` (default `https://api.anthropic.com`). */
  baseURL: string;
}

// A verdict is a few hundred tokens; 1024 leaves room for a long `remaining` list without paying for essays.
const MAX_OUTPUT_TOKENS = 1_024;

// Creates an evaluator that asks the Anthropic Messages API for the verdict through a forced tool call.
export function createAnthropicEvaluator(options: AnthropicEvaluatorOptions): Evaluator {
  const timeoutMs = sdkTimeoutMs(options.timeoutMs);
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    // Our own loop retries (call-with-retries.ts), so tries, waits and caps are ours and counted.
    maxRetries: 0,
    timeout: timeoutMs,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  async function attempt(system: string, user: string, signal: AbortSignal): Promise<ReplyOutcome> {
    const message: Message = await client.messages.create(
      {
        model: options.model,
        max_tokens: MAX_OUTPUT_TOKENS,
        system,
        messages: [{ role: 'user', content: user }],
        tools: [
          {
            name: VERDICT_TOOL_NAME,
            description: VERDICT_TOOL_DESCRIPTION,
            input_schema: { ...VERDICT_JSON_SCHEMA, type: 'object' },
          },
        ],
        tool_choice: { type: 'tool', name: VERDICT_TOOL_NAME },
      },
      { signal, timeout: timeoutMs },
    );
    const usage = {
      // Cached prompt tokens are reported apart from input_tokens; all of them were read.
      inputTokens:
        message.usage.input_tokens +
        (message.usage.cache_creation_input_tokens ?? 0) +
        (message.usage.cache_read_input_tokens ?? 0),
      outputTokens: message.usage.output_tokens,
    };
    const truncated = message.stop_reason === 'max_tokens';
    const model = message.model || options.model;
    const call = message.content.find((block) => block.type === 'tool_use' && block.name === VERDICT_TOOL_NAME);
    if (call !== undefined && call.type === 'tool_use') {
      const parsed = parseVerdict(call.input);
      if (!parsed.ok) {
        const note = truncated ? ' (the reply was cut at the token limit)' : '';
        return { kind: 'malformed', message: `${parsed.message}${note}`, usage };
      }
      return { kind: 'verdict', verdict: parsed.verdict, usage, model };
    }
    // Compatible servers that ignore tools answer in text; take a JSON verdict from it if there is one.
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
    const parsed = parseVerdictText(text, truncated);
    if (!parsed.ok) {
      return { kind: 'malformed', message: `no ${VERDICT_TOOL_NAME} tool call in the reply, and ${parsed.message}`, usage };
    }
    return { kind: 'verdict', verdict: parsed.verdict, usage, model };
  }

  return createSdkEvaluator('anthropic', options, Anthropic, attempt);
}
