// Reads `codex exec --json` output, one JSON event per line, as it arrives: the thread id
// (`thread.started`), items (`agent_message`, `command_execution`, `file_change`, `error`, ...), and the end
// of the turn (`turn.completed` with usage, or `turn.failed`). Pure: lines in, a summary out.
//
// Codex reports usage only at `turn.completed`, and after `exec resume` it is the thread's running total,
// not the turn's: the adapter subtracts the previous turn's totals. While the turn runs, the only measure
// is the text of the items so far (characters / 4): commands, their output, messages, reasoning.

import { isAbsolute, relative } from 'node:path';
import { z } from '../zod.js';
import { clip } from '../cut-text.js';
import type { ToolCall } from './types.js';
import { readUsageLimitMessage, resetAtFromEpoch, type UsageLimitInfo } from './usage-limit.js';

// The usual rule of thumb for English text and code with BPE tokenizers (the command adapter's too).
const CHARS_PER_TOKEN = 4;
/** Tool calls kept per turn (drift detection reads the last few; a runaway turn must not fill memory). */
const MAX_TOOL_CALLS = 1_000;
const MAX_TEXT_CHARS = 4 * 1024;

const count = z.number().nonnegative().nullish();

const usageSchema = z.looseObject({
  input_tokens: count,
  cached_input_tokens: count,
  cache_write_input_tokens: count,
  output_tokens: count,
  reasoning_output_tokens: count,
});

const errorSchema = z.looseObject({
  message: z.string().nullish(),
  // The fields of the API's `usage_limit_reached` error body, should Codex pass them on.
  resets_at: z.number().nullish(),
  resets_in_seconds: z.number().nullish(),
});

const itemSchema = z.looseObject({
  id: z.string().nullish(),
  type: z.string(),
  text: z.string().nullish(),
  message: z.string().nullish(),
  command: z.string().nullish(),
  aggregated_output: z.string().nullish(),
  exit_code: z.number().nullish(),
  status: z.string().nullish(),
  changes: z.array(z.looseObject({ path: z.string(), kind: z.string().nullish() })).nullish(),
  server: z.string().nullish(),
  tool: z.string().nullish(),
  query: z.string().nullish(),
});

const eventSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('thread.started'), thread_id: z.string() }),
  z.looseObject({ type: z.literal('turn.started') }),
  z.looseObject({ type: z.literal('turn.completed'), usage: usageSchema.nullish() }),
  z.looseObject({ type: z.literal('turn.failed'), error: errorSchema.nullish() }),
  z.looseObject({ type: z.literal('error'), message: z.string().nullish() }),
  z.looseObject({ type: z.literal('item.started'), item: itemSchema }),
  z.looseObject({ type: z.literal('item.updated'), item: itemSchema }),
  z.looseObject({ type: z.literal('item.completed'), item: itemSchema }),
]);

type CodexItem = z.infer<typeof itemSchema>;

/** Usage as `turn.completed` reports it: since the thread began (cumulative after resume). */
export interface CodexUsage {
  /** All input tokens, cached ones included (OpenAI's convention). */
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Part of outputTokens. */
  reasoningOutputTokens: number;
}

export interface CodexStreamSummary {
  threadId: string | null;
  /** The `turn.completed` usage; null when the turn did not complete (failed, killed). */
  usage: CodexUsage | null;
  turnCompleted: boolean;
  /** The `turn.failed` message, when the turn failed. */
  turnFailed: string | null;
  /** The CLI's own error messages (`error` events and items), in order. */
  errors: string[];
  toolCalls: ToolCall[];
  /** The last agent message. */
  finalMessage: string;
  /** Set when a usage or rate limit ended the turn. */
  usageLimit: UsageLimitInfo | null;
  /** Lines on stdout that were not events. */
  otherLines: number;
}

export interface CodexStreamOptions {
  /** The workspace: file paths are made relative to it. */
  cwd?: string;
  /** The current time (ms since epoch), for reset times written as a wall-clock time. */
  now: () => number;
  /** The CLI's time zone (its TZ): Codex writes "try again at 5:08 AM" in local time. */
  timeZone?: string;
}

export interface CodexStreamParser {
  push(line: string): void;
  /** Estimated tokens of the items so far (characters / 4); grows only. */
  itemTokens(): number;
  summary(): CodexStreamSummary;
}

/** Creates a parser for one `codex exec --json` invocation's output. */
export function createCodexStreamParser(options: CodexStreamOptions): CodexStreamParser {
  let threadId: string | null = null;
  let usage: CodexUsage | null = null;
  let turnCompleted = false;
  let turnFailed: string | null = null;
  let structuredResetAt: number | null = null;
  const errors: string[] = [];
  const toolCalls: ToolCall[] = [];
  const recordedItems = new Set<string>();
  const itemChars = new Map<string, number>();
  let finalMessage = '';
  let otherLines = 0;

  const handleItem = (item: CodexItem, phase: 'started' | 'updated' | 'completed'): void => {
    const id = item.id ?? `item-${itemChars.size}`;
    itemChars.set(id, Math.max(itemChars.get(id) ?? 0, charsOf(item)));
    switch (item.type) {
      case 'agent_message':
        if (phase === 'completed' && item.text != null && item.text.trim() !== '') finalMessage = item.text;
        return;
      case 'error':
        if (phase === 'completed' && item.message != null) errors.push(cut(item.message));
        return;
      default:
        break;
    }
    // Recorded when first seen, so a turn killed mid-command still lists the command.
    if (recordedItems.has(id)) return;
    const calls = toolCallsOf(item, options.cwd);
    if (calls.length === 0) return;
    recordedItems.add(id);
    for (const call of calls) if (toolCalls.length < MAX_TOOL_CALLS) toolCalls.push(call);
  };

  return {
    push(line) {
      const raw = parseJsonLine(line);
      if (raw === undefined) {
        if (line.trim() !== '') otherLines += 1;
        return;
      }
      const parsed = eventSchema.safeParse(raw);
      if (!parsed.success) return;
      const event = parsed.data;
      switch (event.type) {
        case 'thread.started':
          threadId = event.thread_id;
          return;
        case 'turn.started':
          return;
        case 'turn.completed':
          turnCompleted = true;
          if (event.usage != null) {
            usage = {
              inputTokens: event.usage.input_tokens ?? 0,
              cachedInputTokens: event.usage.cached_input_tokens ?? 0,
              outputTokens: event.usage.output_tokens ?? 0,
              reasoningOutputTokens: event.usage.reasoning_output_tokens ?? 0,
            };
          }
          return;
        case 'turn.failed': {
          turnFailed = cut(event.error?.message ?? 'turn failed');
          const resetAt =
            resetAtFromEpoch(event.error?.resets_at) ??
            (event.error?.resets_in_seconds != null ? options.now() + event.error.resets_in_seconds * 1000 : null);
          if (resetAt !== null) structuredResetAt = resetAt;
          return;
        }
        case 'error':
          if (event.message != null) errors.push(cut(event.message));
          return;
        case 'item.started':
          handleItem(event.item, 'started');
          return;
        case 'item.updated':
          handleItem(event.item, 'updated');
          return;
        case 'item.completed':
          handleItem(event.item, 'completed');
          return;
      }
    },
    itemTokens() {
      let chars = 0;
      for (const value of itemChars.values()) chars += value;
      return Math.ceil(chars / CHARS_PER_TOKEN);
    },
    summary() {
      return {
        threadId,
        usage,
        turnCompleted,
        turnFailed,
        errors: [...errors],
        toolCalls: [...toolCalls],
        finalMessage,
        usageLimit: findUsageLimit(),
        otherLines,
      };
    },
  };

  // Only the CLI's own error lines are read, and only when the turn did not complete: command output
  // (`aggregated_output`) and agent messages never count, whatever they say.
  function findUsageLimit(): UsageLimitInfo | null {
    if (turnCompleted) return null;
    const clock = { now: options.now(), timeZone: options.timeZone };
    for (const message of [turnFailed, ...[...errors].reverse()]) {
      if (message === null) continue;
      const limit = readUsageLimitMessage(message, clock);
      if (limit !== null) return { ...limit, resetAt: structuredResetAt ?? limit.resetAt };
    }
    return null;
  }
}

/** The previous turn's totals subtracted from this turn's, for a resumed thread (never below zero). */
export function subtractUsage(current: CodexUsage, previous: CodexUsage | null): CodexUsage {
  if (previous === null) return current;
  // A total below the previous one means the thread is not the one we counted before: take it whole.
  if (current.inputTokens < previous.inputTokens || current.outputTokens < previous.outputTokens) return current;
  return {
    inputTokens: current.inputTokens - previous.inputTokens,
    cachedInputTokens: Math.max(0, current.cachedInputTokens - previous.cachedInputTokens),
    outputTokens: current.outputTokens - previous.outputTokens,
    reasoningOutputTokens: Math.max(0, current.reasoningOutputTokens - previous.reasoningOutputTokens),
  };
}

/**
 * The shell command inside Codex's wrapper: it reports `/bin/bash -lc 'cat a && b'` for a model's `cat a
 * && b`; the same command must read the same whichever shell ran it.
 */
export function unwrapShellCommand(command: string): string {
  const match = /^(?:\S*\/)?(?:bash|sh|zsh|dash)\s+-(?:l?c|cl)\s+([\s\S]+)$/.exec(command.trim());
  const word = match?.[1];
  if (word === undefined) return command.trim();
  if (word.length >= 2 && word.startsWith("'") && word.endsWith("'")) {
    return word.slice(1, -1).replaceAll(`'\\''`, "'").replaceAll(`'"'"'`, "'");
  }
  if (word.length >= 2 && word.startsWith('"') && word.endsWith('"')) {
    return word.slice(1, -1).replace(/\\([\\"$`])/g, '$1');
  }
  return word;
}

function toolCallsOf(item: CodexItem, cwd: string | undefined): ToolCall[] {
  switch (item.type) {
    case 'command_execution':
      return item.command == null ? [] : [{ name: 'exec_command', command: unwrapShellCommand(item.command) }];
    case 'file_change':
      return (item.changes ?? []).map((change) => ({ name: 'apply_patch', filePath: relativeToCwd(change.path, cwd) }));
    case 'mcp_tool_call':
      return [{ name: [item.server, item.tool].filter((part) => part != null && part !== '').join('.') || 'mcp_tool_call' }];
    case 'web_search':
      return [{ name: 'web_search' }];
    default:
      return [];
  }
}

function charsOf(item: CodexItem): number {
  let chars = 0;
  for (const text of [item.text, item.message, item.command, item.aggregated_output, item.query]) {
    if (text != null) chars += text.length;
  }
  for (const change of item.changes ?? []) chars += change.path.length;
  return chars;
}

function relativeToCwd(filePath: string, cwd: string | undefined): string {
  if (cwd === undefined || cwd === '' || !isAbsolute(filePath)) return filePath;
  const inside = relative(cwd, filePath);
  return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? filePath : inside;
}

function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

// Error and limit texts travel on one line, bounded.
function cut(text: string): string {
  return clip(text, MAX_TEXT_CHARS);
}
