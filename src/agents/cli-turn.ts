// What the structured CLI adapters (gemini, aider) share around spawnAgentProcess: the child's environment,
// the prompt file, and the mapping from how the process ended plus what its output said to a TurnResult.

import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { formatDuration } from './command-agent.js';
import type { ProcessResult } from './spawn.js';
import type { ToolCall, TurnInput, TurnOutcome, TurnResult, Usage } from './types.js';

/** A final message is cut to this many characters (the same bound as the command adapter's). */
export const CLI_FINAL_MESSAGE_MAX_CHARS = 2 * 1024;
// Linux refuses one argument over MAX_ARG_STRLEN (128 KiB) with E2BIG; prompts above this size go through
// a file or stdin instead of argv (the same threshold as the command adapter's).
export const MAX_ARGV_PROMPT_BYTES = 100 * 1024;

/** What the adapter read from the CLI's output, beyond how the process ended. */
export interface CliTurnFacts {
  /** The CLI's name, for messages: `gemini`, `aider`. */
  agent: string;
  input: TurnInput;
  usage: Usage;
  finalMessage: string;
  toolCalls: ToolCall[];
  sessionId?: string;
  model?: string;
  /** The CLI's own error report (its JSON error object, its error line), when it gave one. */
  failure?: string;
  /** Set when the CLI said a usage or rate limit stopped it. */
  usageLimit?: { resetAt: number | null; message: string };
}

/**
 * The agent's environment: the base one minus CLAUDECODE (a nested Claude Code refuses to start, or acts as
 * a sub-agent, when it sees it) and GOALD_PROMPT, plus the GOALD_* variables of the turn.
 */
export function buildCliAgentEnv(
  base: NodeJS.ProcessEnv,
  input: TurnInput,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...extra };
  delete env.CLAUDECODE;
  delete env.GOALD_PROMPT;
  env.GOALD_GOAL_ID = input.goalId;
  env.GOALD_TURN = String(input.turn);
  env.GOALD_CONDITION = input.condition;
  env.GOALD_PROMPT_FILE = input.promptPath;
  return env;
}

/** Writes the prompt file unless the caller already saved it; null, or what went wrong. */
export async function ensurePromptFile(path: string, prompt: string): Promise<string | null> {
  try {
    await access(path);
    return null;
  } catch {
    // Not there yet: write it below.
  }
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, prompt, { flag: 'wx' });
    return null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    return `cannot write the prompt file ${path}: ${(error as Error).message}`;
  }
}

/** Whether the prompt is small enough to pass as one argv word. */
export function fitsInArgv(prompt: string): boolean {
  return Buffer.byteLength(prompt) <= MAX_ARGV_PROMPT_BYTES;
}

/** Maps how the process ended, and what its output reported, to the turn's result. */
export function toCliTurnResult(result: ProcessResult, facts: CliTurnFacts): TurnResult {
  const { outcome, error } = classifyCliEnd(result, facts);
  const turn: TurnResult = {
    outcome,
    exitCode: result.exitCode,
    signal: result.signal,
    // Time the agent ran: time suspended by `pause --now` is not counted, as for the timeout.
    durationMs: Math.round(result.durationMs - result.pausedMs),
    usage: facts.usage,
    finalMessage: cutText(facts.finalMessage.trim(), CLI_FINAL_MESSAGE_MAX_CHARS),
    outputTail: result.outputTail,
    toolCalls: facts.toolCalls,
  };
  if (error !== undefined) turn.error = error;
  if (facts.sessionId !== undefined) turn.sessionId = facts.sessionId;
  if (facts.model !== undefined) turn.model = facts.model;
  if (outcome === 'usage-limited' && facts.usageLimit !== undefined) turn.usageLimit = facts.usageLimit;
  return turn;
}

function classifyCliEnd(result: ProcessResult, facts: CliTurnFacts): { outcome: TurnOutcome; error?: string } {
  if (result.spawnError !== null) return { outcome: 'spawn-failed', error: result.spawnError };
  switch (result.terminationReason) {
    case 'timeout':
      return { outcome: 'timed-out', error: `turn timed out after ${formatDuration(facts.input.timeoutMs)}` };
    case 'token-limit':
      return {
        outcome: 'token-limit',
        error: `turn passed the per-turn token limit (${facts.input.turnTokenLimit} tokens)`,
      };
    case 'aborted':
      return { outcome: 'aborted', error: 'turn aborted' };
    case null:
      break;
  }
  // A usage limit is not a failure, whatever the exit status: the goal pauses until the reset.
  if (facts.usageLimit !== undefined) return { outcome: 'usage-limited', error: facts.usageLimit.message };
  if (result.exitCode === 0 && facts.failure === undefined) return { outcome: 'completed' };
  if (result.exitCode === null) {
    return { outcome: 'failed', error: `${facts.agent} was killed by ${result.signal ?? 'a signal'}` };
  }
  const status = result.exitCode === 0 ? 'reported an error' : `exited with code ${result.exitCode}`;
  const why = facts.failure ?? lastLine(result.outputTail);
  const error = why === '' ? `${facts.agent} ${status}` : `${facts.agent} ${status}: ${cutText(why, 300)}`;
  return { outcome: 'failed', error };
}

function lastLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return lines.at(-1) ?? '';
}

function cutText(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}
