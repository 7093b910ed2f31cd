// What the loop needs from a model provider: one call with the conversation and the tools, answered with
// the reply's text, its tool calls and the usage exactly as the server reported it. Retries, backoff and
// usage-limit detection are call-model.ts's, around a provider's single try.

import type { SdkErrorClasses } from '../../../evaluator/describe-sdk-error.js';
import type { Message, ModelToolCall } from '../conversation.js';

/** A tool as the model sees it. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  system: string;
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
}

/** Tokens of one call as the server reported them; `estimated` when it reported none. */
export interface CallUsage {
  /** Input not served from a cache (Anthropic cache writes included). */
  input: number;
  cached: number;
  output: number;
  estimated: boolean;
}

export interface ModelReply {
  text: string;
  toolCalls: ModelToolCall[];
  usage: CallUsage;
  /** The model as the server named it. */
  model: string;
  /** The reply was cut at the output limit. */
  truncated: boolean;
}

/** One provider (OpenAI Chat Completions or Anthropic Messages) over its real SDK, streaming. */
export interface ModelProvider {
  readonly provider: 'openai' | 'anthropic';
  readonly model: string;
  readonly baseURL: string;
  /** The SDK's error classes, for describeSdkError. */
  readonly errorClasses: SdkErrorClasses;
  /** One try; rejects with the SDK's error. */
  attempt(request: ModelRequest, signal: AbortSignal): Promise<ModelReply>;
}
