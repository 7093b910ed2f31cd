// The builtin agent's ReAct loop for one turn: call the model with the conversation and the tools, run the
// tool calls it asks for, append their results, repeat. A reply without tool calls ends the loop; then the
// goal's checks verify the work, and while they fail the loop is re-entered with their output, up to
// agent.verificationRetries times. agent.maxIterations model calls end the turn whatever happens. Every
// model call's usage and every tool call are reported as they happen (agent-protocol.ts).

import { cutTail } from '../../cut-text.js';
import { renderReflection } from '../../prompt/reflection.js';
import type { CheckResult } from '../../workspace/types.js';
import type { AgentEndEvent, AgentEvent, EndReason } from './agent-protocol.js';
import { elideOldToolResults } from './context-elision.js';
import { estimateMessageTokens, estimateTextTokens, type Message, type ModelToolCall } from './conversation.js';
import type { InTurnDrift } from './in-turn-drift.js';
import { callModel, ModelCallError } from './providers/call-model.js';
import type { ModelProvider, ToolDefinition } from './providers/provider.js';
import { describeCheckResults } from './tools/run-checks.js';
import type { Tool, ToolContext, ToolResult } from './tools/tool.js';

/** Replies in a row whose every tool call was malformed before the turn ends as an agent failure. */
const MAX_MALFORMED_REPLIES = 3;
// A tokenizer can count up to ~3× the chars/4 estimate (CJK text, minified code); beyond that it is noise.
const MAX_TOKEN_SCALE = 3;
const TRUNCATED_REPLY =
  'Your reply was cut off at the output limit. Continue from where it stopped; for a long file, write it in parts (write_file, then edit_file).';
// The failing checks' output handed back to the model on re-entry (their tails are 4 KiB each already).
const MAX_VERIFICATION_FEEDBACK_CHARS = 12_000;

export interface LoopLimits {
  maxIterations: number;
  verificationRetries: number;
  maxContextTokens: number;
  /** A reflection block every N tool calls. */
  reciteEvery: number;
}

export interface LoopInput {
  provider: ModelProvider;
  tools: readonly Tool[];
  toolContext: ToolContext;
  /** The system prompt (base and project layers). */
  system: string;
  /** The task layer: the first user message, never elided. */
  task: string;
  /** The goal's condition verbatim, for the reflection block. */
  condition: string;
  limits: LoopLimits;
  /** Runs the goal's checks; null when the goal has none (nothing to verify). */
  verify: (() => Promise<CheckResult[]>) | null;
  drift: InTurnDrift;
  /** Reports one event to the supervisor. */
  emit: (event: AgentEvent) => void;
  /** A line for the human transcript. */
  log: (line: string) => void;
}

/** Runs the loop to its end; rejects only when the tool context's signal aborts. */
export async function runAgentLoop(input: LoopInput): Promise<AgentEndEvent> {
  const { provider, limits, emit, log } = input;
  const signal = input.toolContext.signal;
  const tools = new Map(input.tools.map((tool) => [tool.name, tool]));
  const definitions: ToolDefinition[] = input.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  const fixedTokens = estimateTextTokens(input.system) + estimateTextTokens(JSON.stringify(definitions));
  const messages: Message[] = [{ role: 'user', text: input.task }];
  let iterations = 0;
  let malformedReplies = 0;
  let sinceReflection = 0;
  let retriesLeft = limits.verificationRetries;
  let lastText = '';
  let failingChecks: string[] = [];
  // Server tokens per estimated token, from the last reply's usage; never below 1 (the estimate is the floor).
  let tokenScale = 1;

  const end = (reason: EndReason, message: string, extra: Partial<AgentEndEvent> = {}): AgentEndEvent => ({
    type: 'end',
    reason,
    message,
    iterations,
    failingChecks,
    ...extra,
  });

  for (;;) {
    if (iterations >= limits.maxIterations) {
      return end('max-iterations', `max iterations: stopped after ${limits.maxIterations} model calls (agent.maxIterations)${lastText === '' ? '' : `; last said: ${lastText}`}`);
    }
    // The budget in estimated tokens: the server's own count of the last request corrects the estimate.
    const elided = elideOldToolResults(messages, Math.max(0, limits.maxContextTokens / tokenScale - fixedTokens));
    if (elided > 0) log(`[goald agent] elided ${elided} old tool result${elided === 1 ? '' : 's'} (agent.maxContextTokens ${limits.maxContextTokens})`);
    iterations += 1;
    const sentTokens = fixedTokens + messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
    let reply;
    try {
      reply = await callModel(provider, { system: input.system, messages, tools: definitions }, signal);
    } catch (error) {
      if (!(error instanceof ModelCallError)) throw error;
      if (error.kind === 'usage-limit') return end('usage-limit', error.message, { resetAt: error.resetAt });
      return end('model-error', error.message);
    }
    emit({ type: 'usage', model: reply.model, input: reply.usage.input, cached: reply.usage.cached, output: reply.usage.output, estimated: reply.usage.estimated });
    if (!reply.usage.estimated && sentTokens > 0) {
      tokenScale = Math.min(MAX_TOKEN_SCALE, Math.max(1, (reply.usage.input + reply.usage.cached) / sentTokens));
    }
    if (reply.text.trim() !== '') {
      lastText = reply.text.trim();
      log(reply.text.trim());
    }

    if (reply.toolCalls.length === 0 && reply.truncated) {
      // Cut at the output limit mid-answer: not a final answer, and nothing to verify yet.
      messages.push({ role: 'assistant', text: reply.text, toolCalls: [] });
      messages.push({ role: 'user', text: TRUNCATED_REPLY });
      continue;
    }
    if (reply.toolCalls.length === 0) {
      messages.push({ role: 'assistant', text: reply.text, toolCalls: [] });
      if (input.verify === null) return end('done', lastText);
      log('[goald agent] the model has finished: running the goal\'s checks');
      const results = await input.verify();
      failingChecks = results.filter((result) => !result.passed).map((result) => result.name);
      if (failingChecks.length === 0) return end('done', lastText);
      if (retriesLeft === 0) {
        return end('checks-failing', `the goal's checks still fail after ${limits.verificationRetries} verification retries: ${failingChecks.join(', ')}`);
      }
      retriesLeft -= 1;
      log(`[goald agent] checks failing (${failingChecks.join(', ')}): back to work (${retriesLeft} verification retries left)`);
      messages.push({ role: 'user', text: verificationFeedback(results) });
      continue;
    }

    messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls });
    let malformed = 0;
    for (const call of reply.toolCalls) {
      const result = await invokeTool(tools, call, input.toolContext);
      if (result.malformed === true) malformed += 1;
      log(`> ${call.name} ${cutTail(call.arguments, 300)}\n< ${result.ok ? 'ok' : 'error'}: ${firstLine(result.content)}`);
      emit({ type: 'tool', ...result.report, ok: result.ok });
      input.drift.record(result.report);
      messages.push({ role: 'tool', callId: call.id, name: call.name, content: result.content });
      sinceReflection += 1;
    }
    malformedReplies = malformed === reply.toolCalls.length ? malformedReplies + 1 : 0;
    if (malformedReplies >= MAX_MALFORMED_REPLIES) {
      return end('malformed-replies', `${MAX_MALFORMED_REPLIES} malformed replies in a row (unknown tools or invalid arguments)`);
    }
    if (sinceReflection >= limits.reciteEvery) {
      const { drift } = await input.drift.check();
      messages.push({ role: 'user', text: renderReflection({ task: input.condition, toolCallsSinceLastCheck: sinceReflection, drift }) });
      sinceReflection = 0;
    }
  }
}

async function invokeTool(tools: ReadonlyMap<string, Tool>, call: ModelToolCall, context: ToolContext): Promise<ToolResult> {
  const tool = tools.get(call.name);
  if (tool === undefined) {
    return {
      ok: false,
      malformed: true,
      content: `Error: there is no tool named ${JSON.stringify(call.name)}; the tools are ${[...tools.keys()].join(', ')}`,
      report: { name: call.name },
    };
  }
  return tool.invoke(call.arguments, context);
}

// What the model reads when the checks failed after it said it was done.
function verificationFeedback(results: readonly CheckResult[]): string {
  return [
    "goald ran the goal's checks after your last reply, and some fail. The goal is not met yet: fix the cause (never the tests), then run_checks, and answer with text alone when they pass.",
    '',
    cutTail(describeCheckResults(results), MAX_VERIFICATION_FEEDBACK_CHARS),
  ].join('\n');
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
