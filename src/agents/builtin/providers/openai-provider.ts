// The OpenAI Chat Completions provider: any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp's
// server, LM Studio), streaming, with function tools. Temperature 0 unless the server refuses it
// (reasoning models do): then it is left out from then on.

import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { apiErrorDetail } from '../../../evaluator/describe-sdk-error.js';
import { estimateMessageTokens, estimateTextTokens, type Message, type ModelToolCall } from '../conversation.js';
import type { ModelProvider, ModelReply, ModelRequest } from './provider.js';

export interface ProviderOptions {
  model: string;
  apiKey: string;
  baseURL: string;
}

/** Creates the Chat Completions provider. */
export function createOpenAIProvider(options: ProviderOptions): ModelProvider {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    // Our own loop retries (call-model.ts).
    maxRetries: 0,
    // Explicit nulls keep OPENAI_ORG_ID / OPENAI_PROJECT_ID of the environment out of the request.
    organization: null,
    project: null,
  });
  let sendTemperature = true;

  async function stream(request: ModelRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    const params: ChatCompletionCreateParamsStreaming = {
      model: options.model,
      messages: toOpenAIMessages(request.system, request.messages),
      stream: true,
      stream_options: { include_usage: true },
      ...(request.tools.length > 0 ? { tools: request.tools.map(toOpenAITool) } : {}),
      ...(sendTemperature ? { temperature: 0 } : {}),
    };
    try {
      return await client.chat.completions.create(params, { signal });
    } catch (error) {
      if (!sendTemperature || !rejectsTemperature(error)) throw error;
      sendTemperature = false;
      return stream(request, signal);
    }
  }

  return {
    provider: 'openai',
    model: options.model,
    baseURL: options.baseURL,
    errorClasses: OpenAI,
    async attempt(request, signal) {
      const chunks = await stream(request, signal);
      return readStream(chunks, request, options.model);
    },
  };
}

// Folds the streamed chunks into one reply: text deltas joined, tool calls assembled by index.
async function readStream(chunks: AsyncIterable<ChatCompletionChunk>, request: ModelRequest, model: string): Promise<ModelReply> {
  let text = '';
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let usage: ModelReply['usage'] | null = null;
  let servedModel = model;
  let truncated = false;
  for await (const chunk of chunks) {
    if (chunk.model) servedModel = chunk.model;
    if (chunk.usage) {
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      usage = { input: chunk.usage.prompt_tokens - cached, cached, output: chunk.usage.completion_tokens, estimated: false };
    }
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    if (choice.finish_reason === 'length') truncated = true;
    const delta = choice.delta;
    if (typeof delta.content === 'string') text += delta.content;
    for (const part of delta.tool_calls ?? []) {
      const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
    }
  }
  const toolCalls: ModelToolCall[] = calls
    .filter((call) => call !== undefined)
    .map((call, index) => ({ id: call.id === '' ? `call_${index}` : call.id, name: call.name, arguments: call.arguments }));
  // A server that ignores stream_options reports nothing: count by characters, marked as estimated.
  usage ??= {
    input: estimateTextTokens(request.system) + request.messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0),
    cached: 0,
    output: estimateTextTokens(text) + toolCalls.reduce((sum, call) => sum + estimateTextTokens(call.name + call.arguments), 0),
    estimated: true,
  };
  return { text, toolCalls, usage, model: servedModel, truncated };
}

/** The neutral conversation as Chat Completions messages. */
function toOpenAIMessages(system: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'user') out.push({ role: 'user', content: message.text });
    else if (message.role === 'tool') out.push({ role: 'tool', tool_call_id: message.callId, content: message.content });
    else if (message.toolCalls.length === 0) out.push({ role: 'assistant', content: message.text });
    else {
      out.push({
        role: 'assistant',
        content: message.text === '' ? null : message.text,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      });
    }
  }
  return out;
}

function toOpenAITool(tool: ModelRequest['tools'][number]): ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

// A 400/422 that names temperature: the model does not take one (o-series, gpt-5).
function rejectsTemperature(error: unknown): boolean {
  if (!(error instanceof OpenAI.APIError) || (error.status !== 400 && error.status !== 422)) return false;
  return /temperature/i.test(`${error.message} ${apiErrorDetail(error)}`);
}
