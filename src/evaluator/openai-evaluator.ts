// The OpenAI evaluator: Chat Completions, so any OpenAI-compatible server works (OpenAI, vLLM, llama.cpp,
// Ollama, LM Studio, proxies). Structured Outputs first; a server that rejects them gets a plain request
// with a JSON instruction from then on.

import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { apiErrorDetail } from './describe-sdk-error.js';
import type { ReplyOutcome } from './reply-outcome.js';
import type { SdkEvaluatorOptions } from './sdk-evaluator.js';
import { createSdkEvaluator, sdkTimeoutMs } from './sdk-evaluator.js';
import type { Evaluator } from './types.js';
import { parseVerdictText, VERDICT_JSON_SCHEMA, VERDICT_JSON_SHAPE, VERDICT_TOOL_NAME } from './verdict-schema.js';

export interface OpenAIEvaluatorOptions extends SdkEvaluatorOptions {
  /** Includes the version path, e.g. `https://api.openai.com/v1` or `http://localhost:8000/v1`. */
  baseURL: string;
}

/** Appended to the evidence when the server cannot constrain the reply to the schema. */
export const JSON_INSTRUCTION = `Reply with only one JSON object and nothing else (no prose before or after it), with exactly these keys: ${VERDICT_JSON_SHAPE}`;

// Creates an evaluator that asks an OpenAI-compatible Chat Completions endpoint for the verdict.
export function createOpenAIEvaluator(options: OpenAIEvaluatorOptions): Evaluator {
  const timeoutMs = sdkTimeoutMs(options.timeoutMs);
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    // Our own loop retries (call-with-retries.ts), so tries, waits and caps are ours and counted.
    maxRetries: 0,
    timeout: timeoutMs,
    // Explicit nulls keep OPENAI_ORG_ID / OPENAI_PROJECT_ID of the daemon's environment out of the request.
    organization: null,
    project: null,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  // Remembered per instance: once a server has said it cannot do json_schema, do not ask it again.
  let structured = true;

  function request(system: string, user: string, signal: AbortSignal): Promise<ChatCompletion> {
    // No max_tokens/temperature: reasoning models reject both (or their old names) and the schema keeps
    // the reply short.
    const params: ChatCompletionCreateParamsNonStreaming = structured
      ? {
          model: options.model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
          response_format: {
            type: 'json_schema',
            json_schema: { name: VERDICT_TOOL_NAME, strict: true, schema: { ...VERDICT_JSON_SCHEMA } },
          },
        }
      : {
          model: options.model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: `${user}\n\n${JSON_INSTRUCTION}` },
          ],
        };
    return client.chat.completions.create(params, { signal, timeout: timeoutMs });
  }

  async function attempt(system: string, user: string, signal: AbortSignal): Promise<ReplyOutcome> {
    let completion: ChatCompletion;
    try {
      completion = await request(system, user, signal);
    } catch (error) {
      if (!structured || !rejectsJsonSchema(error)) throw error;
      // The plain request goes out at once, inside the same try: the rejection was an answer, not a fault.
      structured = false;
      completion = await request(system, user, signal);
    }
    const usage = {
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
    };
    const choice = completion.choices[0];
    if (choice === undefined) return { kind: 'malformed', message: 'the reply has no choices', usage };
    const refusal = choice.message.refusal;
    if (typeof refusal === 'string' && refusal !== '') {
      return { kind: 'malformed', message: `the model refused: ${refusal.slice(0, 200)}`, usage };
    }
    const parsed = parseVerdictText(choice.message.content ?? '', choice.finish_reason === 'length');
    if (!parsed.ok) return { kind: 'malformed', message: parsed.message, usage };
    return { kind: 'verdict', verdict: parsed.verdict, usage, model: completion.model || options.model };
  }

  return createSdkEvaluator('openai', options, OpenAI, attempt);
}

// A 400/422 that names response_format or json_schema: the server does not support Structured Outputs.
function rejectsJsonSchema(error: unknown): boolean {
  if (!(error instanceof OpenAI.APIError) || (error.status !== 400 && error.status !== 422)) return false;
  const text = `${error.message} ${apiErrorDetail(error)} ${error.param ?? ''} ${safeStringify(error.error)}`;
  return /response_format|json_schema|json schema|structured output/i.test(text);
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
