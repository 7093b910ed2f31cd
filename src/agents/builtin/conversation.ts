// The builtin agent's conversation in one provider-neutral shape; each provider translates it into its own
// wire format (Chat Completions messages, Anthropic content blocks) on every call.

/** One tool call as the model asked for it; `arguments` is the raw JSON text (it may be malformed). */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type Message =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: ModelToolCall[] }
  | { role: 'tool'; callId: string; name: string; content: string; elided?: boolean };

/** The usual rule of thumb for text and code with BPE tokenizers (as usage-meter.ts). */
const CHARS_PER_TOKEN = 4;

/** Estimated tokens of a text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Estimated tokens of one message, as sent. */
export function estimateMessageTokens(message: Message): number {
  switch (message.role) {
    case 'user':
      return estimateTextTokens(message.text) + 4;
    case 'assistant':
      return (
        estimateTextTokens(message.text) +
        message.toolCalls.reduce((sum, call) => sum + estimateTextTokens(call.name + call.arguments) + 8, 4)
      );
    case 'tool':
      return estimateTextTokens(message.content) + 8;
  }
}
