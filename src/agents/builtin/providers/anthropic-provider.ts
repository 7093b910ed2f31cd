// The Anthropic Messages provider: streaming (the SDK's MessageStream accumulates the events into the
// final message), tool use with tool_result blocks, temperature 0.

import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, Tool as AnthropicTool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Message, ModelToolCall } from '../conversation.js';
import type { ProviderOptions } from './openai-provider.js';
import type { ModelProvider, ModelRequest } from './provider.js';

// Room for a whole file written in one tool call; every current Claude model allows at least this.
const MAX_OUTPUT_TOKENS = 8_192;

/** Creates the Anthropic Messages provider. */
export function createAnthropicProvider(options: ProviderOptions): ModelProvider {
  const client = new Anthropic({ apiKey: options.apiKey, baseURL: options.baseURL, maxRetries: 0 });
  return {
    provider: 'anthropic',
    model: options.model,
    baseURL: options.baseURL,
    errorClasses: Anthropic,
    async attempt(request, signal) {
      const stream = client.messages.stream(
        {
          model: options.model,
          max_tokens: MAX_OUTPUT_TOKENS,
          temperature: 0,
          system: request.system,
          messages: toAnthropicMessages(request.messages),
          ...(request.tools.length > 0 ? { tools: request.tools.map(toAnthropicTool) } : {}),
        },
        { signal },
      );
      const message = await stream.finalMessage();
      let text = '';
      const toolCalls: ModelToolCall[] = [];
      for (const block of message.content) {
        if (block.type === 'text') text += block.text;
        else if (block.type === 'tool_use') toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
      }
      const usage = message.usage;
      return {
        text,
        toolCalls,
        usage: {
          input: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0),
          cached: usage.cache_read_input_tokens ?? 0,
          output: usage.output_tokens,
          estimated: false,
        },
        model: message.model || options.model,
        truncated: message.stop_reason === 'max_tokens',
      };
    },
  };
}

/**
 * The neutral conversation as Messages: tool results become tool_result blocks of a user message, and
 * consecutive user-side entries share one message (the API wants user and assistant to alternate).
 */
function toAnthropicMessages(messages: readonly Message[]): MessageParam[] {
  const out: MessageParam[] = [];
  const pushUser = (block: ContentBlockParam): void => {
    const last = out.at(-1);
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(block);
    else out.push({ role: 'user', content: [block] });
  };
  for (const message of messages) {
    if (message.role === 'user') pushUser({ type: 'text', text: message.text });
    else if (message.role === 'tool') {
      const result: ToolResultBlockParam = { type: 'tool_result', tool_use_id: message.callId, content: message.content };
      pushUser(result);
    } else {
      const content: ContentBlockParam[] = [];
      if (message.text !== '') content.push({ type: 'text', text: message.text });
      for (const call of message.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) });
      // An empty assistant message is refused by the API; a reply with nothing in it is kept as a space.
      out.push({ role: 'assistant', content: content.length === 0 ? [{ type: 'text', text: ' ' }] : content });
    }
  }
  return out;
}

function toAnthropicTool(tool: ModelRequest['tools'][number]): AnthropicTool {
  return { name: tool.name, description: tool.description, input_schema: { type: 'object', ...tool.parameters } };
}

// The arguments as the model sent them, as an object (Anthropic's tool_use input must be one).
function parseInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : {};
  } catch {
    return {};
  }
}
