// Keeps the conversation within agent.maxContextTokens: the oldest tool results are replaced by a marker
// saying what was there, until the estimate fits. The task (the first user message) and the system prompt
// are never touched, nor the results of the latest tool calls, which the model has not read yet.

import { estimateMessageTokens, type Message } from './conversation.js';

/** The text a tool result is replaced with. */
function elisionMarker(name: string, chars: number): string {
  return `[elided: this ${name} result (${chars} characters) was removed to keep the conversation within agent.maxContextTokens; call the tool again if you still need it]`;
}

/**
 * Elides old tool results in place until the messages' estimated tokens are at most `budget`; returns how
 * many it elided. When even that is not enough, everything elidable has been elided.
 */
export function elideOldToolResults(messages: Message[], budget: number): number {
  let total = messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
  if (total <= budget) return 0;
  // The results after the last assistant message are the ones the model is about to read.
  let lastAssistant = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]?.role === 'assistant') {
      lastAssistant = index;
      break;
    }
  }
  let elided = 0;
  for (let index = 0; index < lastAssistant && total > budget; index += 1) {
    const message = messages[index];
    if (message?.role !== 'tool' || message.elided === true) continue;
    const before = estimateMessageTokens(message);
    const replaced: Message = { ...message, content: elisionMarker(message.name, message.content.length), elided: true };
    messages[index] = replaced;
    total -= before - estimateMessageTokens(replaced);
    elided += 1;
  }
  return elided;
}
