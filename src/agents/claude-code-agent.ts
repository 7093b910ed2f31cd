// The `claude-code` adapter: runs Claude Code headless (`claude -p --output-format stream-json --verbose
// --permission-mode acceptEdits --allowedTools "Bash Write Edit Read" -- <prompt>`, no stdin) and reads its
// event stream live — tokens (killing the turn at the per-turn limit), tool calls, permission denials,
// usage limits — and the final `result`: usage, reported cost, session id, the answer.
//
// Permissions: without them Claude Code "succeeds" while every tool call is denied, so goald grants edits
// and the four basic tools by default and reports denials as a failed turn. It never defaults to
// `--dangerously-skip-permissions` (refused as root anyway, unless IS_SANDBOX=1).

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { goaldEntryPath } from '../cli/goald-entry.js';
import { buildClaudeHookSettings } from '../hook/claude-hook-settings.js';
import { HOOK_ENV } from '../hook/post-tool-use.js';
import { createClaudeStreamParser, totalOf, type ClaudeStreamSummary } from './claude-stream.js';
import {
  buildCliAgentEnv,
  createRunningProcess,
  estimatedUsage,
  fitsInArgv,
  hasFlag,
  preparePromptFile,
  readTimeZone,
  refuseArgs,
  toCliTurnResult,
  turnSpawnOptions,
  type CliAgentOptions,
  type CliTurnFacts,
} from './cli-turn.js';
import { quoteShellWord } from './shell-quote.js';
import { spawnAgentProcess, type AgentProcess } from '../process/spawn.js';
import type { AgentAdapter, Usage } from './types.js';
import { estimateTokens } from './usage-meter.js';

/** goald's `--permission-mode` unless agent.args choose one: file edits are accepted without asking. */
const DEFAULT_PERMISSION_MODE = 'acceptEdits';
/** goald's `--allowedTools` unless agent.args choose them: the tools a coding turn needs. */
const DEFAULT_ALLOWED_TOOLS = 'Bash Write Edit Read';
// stream-json puts a whole tool call on one line; a Write of a big file is one long line.
const MAX_EVENT_LINE_CHARS = 8 * 1024 * 1024;
// How much of the last non-event line (stderr, or stdout noise) explains a failure without a result.
const MAX_NOTE_CHARS = 300;

// Flags goald sets itself, or that would break the session policy or the stream it reads.
const REFUSED_ARGS: ReadonlyMap<string, string> = new Map([
  ['--continue', 'goald never continues "the most recent" session; set agent.session to "resume" instead'],
  ['-c', 'goald never continues "the most recent" session; set agent.session to "resume" instead'],
  ['--resume', 'goald manages session ids itself; set agent.session to "resume"'],
  ['-r', 'goald manages session ids itself; set agent.session to "resume"'],
  ['--session-id', 'goald manages session ids itself; set agent.session to "resume"'],
  ['--fork-session', 'goald manages session ids itself'],
  ['-p', 'goald passes -p (print mode) itself'],
  ['--print', 'goald passes -p (print mode) itself'],
  ['--output-format', 'goald reads --output-format stream-json and sets it itself'],
  ['--input-format', 'goald passes the prompt as an argument'],
]);

/** The executable defaults to `claude`; session `resume` keeps one session id for the whole goal. */
export interface ClaudeCodeAgentOptions extends CliAgentOptions {
  /**
   * Extra arguments (config agent.args), placed before the prompt. goald's permission defaults apply for
   * whatever these leave out: `--permission-mode` (or `--dangerously-skip-permissions`) replaces
   * `--permission-mode acceptEdits`, `--allowedTools` replaces the default tool list.
   */
  args?: readonly string[];
  /**
   * The argv that runs goald (e.g. `[process.execPath, '/…/dist/src/cli/bin.js']`). When set and the turn
   * has a state directory, Claude Code gets goald's PostToolUse hook through `--settings` (in-turn
   * recitation and drift). Null or absent: no hook.
   */
  hookCommand?: readonly string[] | null;
  /** The clock for usage-limit reset times (default Date.now). */
  now?: () => number;
  /** Makes the session id of a `resume` goal (default: a random UUID). */
  newSessionId?: () => string;
}

/** Creates the Claude Code adapter. Runs one turn at a time. */
export function createClaudeCodeAgent(options: ClaudeCodeAgentOptions = {}): AgentAdapter {
  const executable = options.executable ?? 'claude';
  const userArgs = [...(options.args ?? [])];
  refuseArgs(userArgs, REFUSED_ARGS, 'claude-code');
  const configuredModel = options.model ?? null;
  const hookCommand = options.hookCommand ?? null;
  const now = options.now ?? Date.now;
  const baseEnv = options.env ?? process.env;
  // Session policy `resume`: one id for the goal; `started` once Claude Code has created that session.
  const session =
    options.session === 'resume' ? { id: (options.newSessionId ?? randomUUID)(), started: false } : null;
  // total_cost_usd counts the whole session, earlier invocations included; per session, what it last said.
  const lastSessionCost = new Map<string, number>();
  const running = createRunningProcess();

  // The hook needs the turn's state directory; a user's own --settings would replace goald's.
  const hooked = hookCommand !== null && !hasFlag(userArgs, '--settings');

  return {
    name: 'claude-code',
    model: configuredModel,
    keepsTurnState: hooked,
    suspend: running.suspend,
    resume: running.resume,
    async runTurn(input, signal) {
      const promptTokens = estimateTokens(input.prompt.length);
      const notStarted = await preparePromptFile(input, estimatedUsage(promptTokens));
      if (notStarted !== null) return notStarted;

      const env = buildCliAgentEnv(baseEnv, input);
      const parser = createClaudeStreamParser({ cwd: input.workspace, now, timeZone: readTimeZone(env) });
      const hookStateDir = hooked ? (input.stateDir ?? null) : null;
      if (hookStateDir !== null) {
        env[HOOK_ENV.stateDir] = hookStateDir;
        env[HOOK_ENV.condition] = input.condition;
        if (input.reciteEveryToolCalls !== undefined) env[HOOK_ENV.reciteEvery] = String(input.reciteEveryToolCalls);
      }
      const inArgv = fitsInArgv(input.prompt);
      const flags = buildClaudeFlags({
        args: userArgs,
        model: configuredModel,
        session,
        hookSettings: hookStateDir !== null && hookCommand !== null ? buildClaudeHookSettings({ goaldCommand: hookCommand }) : null,
      });
      const resumed = session?.started === true;
      let lastNote = '';
      const liveTokens = (): number => Math.max(promptTokens, parser.liveTokens());
      // Checked on every line, the result's too: a turn whose final usage passes the limit has passed it.
      const checkTokenLimit = (): void => {
        if (input.turnTokenLimit > 0 && liveTokens() > input.turnTokenLimit) agentProcess.kill('token-limit');
      };

      const agentProcess: AgentProcess = spawnAgentProcess({
        command: executable,
        // A prompt too big for one argument goes on stdin: `claude -p` reads it there when none is given.
        args: inArgv ? [...flags, '--', input.prompt] : flags,
        env,
        stdin: inArgv ? null : input.prompt,
        label: `${executable} ${flags.map(labelWord).join(' ')} -- <prompt>`,
        ...turnSpawnOptions(input, signal, options.killGraceMs),
        maxLineChars: MAX_EVENT_LINE_CHARS,
        onLine(line, stream) {
          if (stream === 'stdout') {
            parser.push(line);
            checkTokenLimit();
          }
          if (!line.trimStart().startsWith('{') && line.trim() !== '') lastNote = line.trim().slice(0, MAX_NOTE_CHARS);
        },
      });
      const done = running.track(agentProcess);
      // The prompt alone may already be over the limit.
      checkTokenLimit();
      const result = await done;

      const summary = parser.summary();
      if (session !== null && summary.sessionId !== null) {
        session.id = summary.sessionId;
        session.started = true;
      }
      const facts: CliTurnFacts = {
        agent: executable,
        input,
        usage: usageOf(summary, resumed, lastSessionCost) ?? estimatedUsage(liveTokens()),
        finalMessage: summary.finalMessage,
        toolCalls: summary.toolCalls,
      };
      if (summary.sessionId !== null) facts.sessionId = summary.sessionId;
      const model = summary.model ?? configuredModel;
      if (model !== null) facts.model = model;
      if (summary.usageLimit !== null) facts.usageLimit = summary.usageLimit;
      const failure = describeFailure(summary, lastNote, userArgs);
      if (failure !== null) facts.failure = failure;

      const turn = toCliTurnResult(result, facts);
      if (summary.permissionDenials > 0) turn.permissionDenials = summary.permissionDenials;
      return turn;
    },
  };
}

interface FlagChoices {
  args: readonly string[];
  model: string | null;
  session: { id: string; started: boolean } | null;
  /** Inline `--settings` JSON with goald's hook, or null. */
  hookSettings: string | null;
}

/** The argv after `claude`, up to (not including) `-- <prompt>`. */
export function buildClaudeFlags(choices: FlagChoices): string[] {
  const flags = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (!hasFlag(choices.args, '--permission-mode') && !hasFlag(choices.args, '--dangerously-skip-permissions')) {
    flags.push('--permission-mode', DEFAULT_PERMISSION_MODE);
  }
  if (!hasFlag(choices.args, '--allowedTools') && !hasFlag(choices.args, '--allowed-tools')) {
    flags.push('--allowedTools', DEFAULT_ALLOWED_TOOLS);
  }
  if (choices.model !== null && !hasFlag(choices.args, '--model')) flags.push('--model', choices.model);
  if (choices.session !== null) {
    // The first turn creates the session under goald's id; later ones resume exactly it (never --continue).
    flags.push(choices.session.started ? '--resume' : '--session-id', choices.session.id);
  }
  if (choices.hookSettings !== null) flags.push('--settings', choices.hookSettings);
  return [...flags, ...choices.args];
}

// Tokens and cost of the invocation from the result; null when no result came (killed, crashed).
function usageOf(summary: ClaudeStreamSummary, resumed: boolean, lastSessionCost: Map<string, number>): Usage | null {
  const result = summary.result;
  if (result === null) return null;
  let costUsd = result.invocationCostUsd;
  if (costUsd === null && result.totalCostUsd !== null) {
    const before = resumed && summary.sessionId !== null ? lastSessionCost.get(summary.sessionId) : undefined;
    costUsd = before === undefined ? result.totalCostUsd : Math.max(0, result.totalCostUsd - before);
  }
  if (summary.sessionId !== null && result.totalCostUsd !== null) lastSessionCost.set(summary.sessionId, result.totalCostUsd);
  const { tokens } = result;
  return {
    inputTokens: tokens.inputTokens + tokens.cacheCreationInputTokens,
    outputTokens: tokens.outputTokens,
    totalTokens: totalOf(tokens),
    cachedInputTokens: tokens.cacheReadInputTokens,
    costUsd,
    estimated: false,
  };
}

// Why the turn failed, in one line, when Claude Code says so (or denied tools); null otherwise.
function describeFailure(summary: ClaudeStreamSummary, lastNote: string, args: readonly string[]): string | null {
  if (summary.permissionDenials > 0) {
    const calls = summary.permissionDenials === 1 ? '1 tool call was' : `${summary.permissionDenials} tool calls were`;
    const hint = hasFlag(args, '--permission-mode') || hasFlag(args, '--allowedTools') || hasFlag(args, '--allowed-tools')
      ? 'widen --permission-mode / --allowedTools in agent.args'
      : `allow them in agent.args, e.g. --allowedTools "${DEFAULT_ALLOWED_TOOLS}" (or a wider --permission-mode)`;
    return `${calls} denied permission (${summary.deniedTools.join(', ')}); ${hint}`;
  }
  if (summary.failure !== null) return summary.failure;
  if (summary.result === null && lastNote !== '') return lastNote;
  return null;
}

// The transcript header shows the flags, with the long inline settings JSON abbreviated.
function labelWord(word: string): string {
  return word.startsWith('{') ? "'{…}'" : quoteShellWord(word);
}

/**
 * The argv that runs this goald's `goald hook …` (node and the built bin.js next to this module), or null
 * when there is no built bin.js (running from sources, as in unit tests): then no hook is registered.
 */
export function findGoaldHookCommand(): readonly string[] | null {
  const bin = goaldEntryPath();
  return existsSync(bin) ? [process.execPath, bin] : null;
}
