// What the structured CLI adapters (claude-code, codex, gemini, aider) share around spawnAgentProcess: their
// common options and argument checks, the child's environment, the prompt file, the process of the running
// turn (for suspend/resume), and the mapping from how the process ended plus what its output said to a
// TurnResult.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { toDurationText } from '../config/duration.js';
import { ellipsize } from '../cut-text.js';
import { GoaldError } from '../errors.js';
import { isErrnoCode } from '../errno.js';
import type { AgentProcess, ProcessResult, SpawnAgentOptions } from '../process/spawn.js';
import type { ToolCall, TurnInput, TurnOutcome, TurnResult, Usage } from './types.js';

/** Every adapter's final message is cut to this many characters. */
export const FINAL_MESSAGE_MAX_CHARS = 2 * 1024;
// Linux refuses one argument over MAX_ARG_STRLEN (128 KiB) with E2BIG; prompts above this size go through
// a file or stdin instead of argv (the command adapter's MAX_INLINE_PROMPT_BYTES is this threshold).
export const MAX_ARGV_PROMPT_BYTES = 100 * 1024;

/** The options every structured CLI adapter takes; an adapter's own options extend these. */
export interface CliAgentOptions {
  /** The executable (default: the CLI's usual name). */
  executable?: string;
  /** Extra arguments after goald's own (config agent.args). */
  args?: readonly string[];
  /** The model, when configured: passed as --model unless args choose one. */
  model?: string | null;
  /** `fresh` (default): a new session each turn. `resume`: one session for the whole goal, where supported. */
  session?: 'fresh' | 'resume';
  /** The environment the agent inherits (default: process.env); CLAUDECODE is always removed. */
  env?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL (default SIGKILL_GRACE_MS); tests shorten it. */
  killGraceMs?: number;
}

/** The process of the turn that runs now, so that suspend and resume reach it. */
export interface RunningProcess {
  /** Remembers the process until it is done; resolves with its result. */
  track(agentProcess: AgentProcess): Promise<ProcessResult>;
  suspend(): void;
  resume(): void;
}

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

/** Refuses agent.session "resume" for an adapter that cannot resume a session (`why` says why not). */
export function refuseResumeSession(session: CliAgentOptions['session'], agent: string, why: string): void {
  if (session !== 'resume') return;
  throw new GoaldError(
    'config',
    `agent.session: "resume" is not supported by the ${agent} adapter (${why})`,
    'set agent.session to "fresh" (the default): the recitation carries the state from turn to turn',
  );
}

/** Refuses agent.args that name a flag in `refused` (flag → why), as `--flag` or `--flag=value`. */
export function refuseArgs(args: readonly string[], refused: ReadonlyMap<string, string>, agent: string): void {
  for (const arg of args) {
    const flag = arg.split('=')[0] ?? arg;
    const why = refused.get(flag);
    if (why !== undefined) {
      throw new GoaldError('config', `agent.args: ${flag} is not allowed for the ${agent} adapter`, why);
    }
  }
}

/** Whether the args give `flag`, as `--flag` or `--flag=value`. */
export function hasFlag(args: readonly string[], flag: string): boolean {
  return args.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
}

/** The time zone a CLI writes reset times in when it names none: its TZ (":America/New_York" allowed). */
export function readTimeZone(env: NodeJS.ProcessEnv): string | undefined {
  const zone = env.TZ?.replace(/^:/, '').trim();
  return zone === undefined || zone === '' ? undefined : zone;
}

/** The spawn options that come from the turn itself: workspace, transcript, timeout, abort, onSpawn, sandbox, the process started ahead. */
export function turnSpawnOptions(
  input: TurnInput,
  signal: AbortSignal,
  killGraceMs: number | undefined,
): Pick<SpawnAgentOptions, 'cwd' | 'transcriptPath' | 'timeoutMs' | 'killGraceMs' | 'signal' | 'onSpawn' | 'sandbox' | 'ready'> {
  return {
    sandbox: input.sandbox ?? null,
    ready: input.ready,
    cwd: input.workspace,
    transcriptPath: input.transcriptPath,
    timeoutMs: input.timeoutMs,
    killGraceMs,
    signal,
    onSpawn: input.onSpawn,
  };
}

/** Creates the slot for an adapter's one running process (adapters run one turn at a time). */
export function createRunningProcess(): RunningProcess {
  let current: AgentProcess | null = null;
  return {
    async track(agentProcess) {
      current = agentProcess;
      const result = await agentProcess.done;
      if (current === agentProcess) current = null;
      return result;
    },
    suspend() {
      current?.suspend();
    },
    resume() {
      current?.resume();
    },
  };
}

/**
 * Writes the prompt file unless the caller already saved it: null when it is there, else the result of a
 * turn that could not start (with `usage`, the estimate for the prompt).
 */
export async function preparePromptFile(input: TurnInput, usage: Usage): Promise<TurnResult | null> {
  const startedAt = Date.now();
  const problem = ensurePromptFile(input.promptPath, input.prompt);
  return problem === null ? null : toNotStartedResult(usage, Date.now() - startedAt, problem);
}

function ensurePromptFile(path: string, prompt: string): string | null {
  // Synchronous: one small local file, on the way to the agent's spawn.
  if (existsSync(path)) return null;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, prompt, { flag: 'wx', mode: 0o600 });
    return null;
  } catch (error) {
    if (isErrnoCode(error, 'EEXIST')) return null;
    return `cannot write the prompt file ${path}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Whether the prompt is small enough to pass as one argv word. */
export function fitsInArgv(prompt: string): boolean {
  return Buffer.byteLength(prompt) <= MAX_ARGV_PROMPT_BYTES;
}

/** Usage estimated from the input alone (no output counted), for a turn the CLI reported nothing about. */
export function estimatedUsage(tokens: number): Usage {
  return { inputTokens: tokens, outputTokens: 0, totalTokens: tokens, costUsd: null, estimated: true };
}

function toNotStartedResult(usage: Usage, durationMs: number, error: string): TurnResult {
  return {
    outcome: 'spawn-failed',
    exitCode: null,
    signal: null,
    durationMs,
    usage,
    finalMessage: '',
    outputTail: '',
    error,
  };
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
    finalMessage: ellipsize(facts.finalMessage.trim(), FINAL_MESSAGE_MAX_CHARS),
    outputTail: result.outputTail,
    toolCalls: facts.toolCalls,
  };
  if (error !== undefined) turn.error = error;
  if (result.transcriptError !== null) turn.transcriptError = result.transcriptError;
  if (facts.sessionId !== undefined) turn.sessionId = facts.sessionId;
  if (facts.model !== undefined) turn.model = facts.model;
  if (outcome === 'usage-limited' && facts.usageLimit !== undefined) turn.usageLimit = facts.usageLimit;
  return turn;
}

function classifyCliEnd(result: ProcessResult, facts: CliTurnFacts): { outcome: TurnOutcome; error?: string } {
  if (result.spawnError !== null) return { outcome: 'spawn-failed', error: result.spawnError };
  switch (result.terminationReason) {
    case 'timeout':
      return { outcome: 'timed-out', error: `turn timed out after ${toDurationText(facts.input.timeoutMs)}` };
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
  const error = why === '' ? `${facts.agent} ${status}` : `${facts.agent} ${status}: ${ellipsize(why, 300)}`;
  return { outcome: 'failed', error };
}

function lastLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return lines.at(-1) ?? '';
}
