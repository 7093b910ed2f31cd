// The generic `command` adapter: any shell command is an agent. It runs via `sh -c` in the workspace and
// gets the prompt four ways — on stdin, in the file named by GOALD_PROMPT_FILE, in GOALD_PROMPT, and
// shell-quoted in place of every `{prompt}` in the command. Tokens are estimated (chars / 4) unless the
// agent prints GOALD_USAGE lines.

import { toDurationText } from '../config/duration.js';
import { ellipsize } from '../cut-text.js';
import { GoaldError } from '../errors.js';
import {
  FINAL_MESSAGE_MAX_CHARS,
  MAX_ARGV_PROMPT_BYTES,
  buildCliAgentEnv,
  createRunningProcess,
  preparePromptFile,
} from './cli-turn.js';
import { PROMPT_PLACEHOLDER, findPlaceholders, quoteForShell, substitutePlaceholders } from './shell-quote.js';
import { spawnAgentProcess, type AgentProcess, type OutputStream, type ProcessResult } from '../process/spawn.js';
import type { AgentAdapter, TurnInput, TurnOutcome, TurnResult, Usage } from './types.js';
import { createUsageMeter, isUsageLine, parseUsageLine } from './usage-meter.js';
import { readCommandName } from './which.js';

// Linux refuses any single argument or environment string over MAX_ARG_STRLEN (128 KiB) with E2BIG, and
// all of them together over ARG_MAX (often 2 MiB). Above this size the prompt is left out of GOALD_PROMPT
// (agents read GOALD_PROMPT_FILE or stdin instead), and `{prompt}` expands to the file's contents at run
// time rather than being inlined into the `sh -c` argument.
export const MAX_INLINE_PROMPT_BYTES = MAX_ARGV_PROMPT_BYTES;
// The shell's exit statuses for "command not found" and "found but cannot execute" (POSIX 2.8.2).
const EXIT_NOT_FOUND = 127;
const EXIT_CANNOT_EXECUTE = 126;

export interface CommandAgentOptions {
  /** The shell command; may contain `{prompt}`, bare or in single quotes (not in double quotes or backquotes). */
  command: string;
  /** The environment the agent inherits (default: process.env); CLAUDECODE is always removed. */
  env?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL (default SIGKILL_GRACE_MS); tests shorten it. */
  killGraceMs?: number;
}

/** Creates the adapter that runs a shell command as the agent. Runs one turn at a time. */
export function createCommandAgent(options: CommandAgentOptions): AgentAdapter {
  if (options.command.trim() === '') {
    throw new GoaldError('config', 'agent.command: the agent command is empty', 'pass --agent "<shell command>"');
  }
  const unsafe = findPlaceholders(options.command).find(
    ({ context }) => context === 'double-quoted' || context === 'backquoted',
  );
  if (unsafe !== undefined) {
    throw new GoaldError(
      'config',
      `agent.command: ${PROMPT_PLACEHOLDER} is ${unsafe.context} in ${JSON.stringify(options.command)}, where ` +
        'quotes, $(...) or backquotes in the prompt would run as shell code',
      `write ${PROMPT_PLACEHOLDER} without quotes; goald quotes the prompt itself`,
    );
  }
  const running = createRunningProcess();

  return {
    name: 'command',
    model: null,
    suspend: running.suspend,
    resume: running.resume,
    async runTurn(input, signal) {
      const meter = createUsageMeter(input.prompt);
      const lastLines: Record<OutputStream, string> = { stdout: '', stderr: '' };

      const notStarted = await preparePromptFile(input, meter.usage());
      if (notStarted !== null) return notStarted;

      const checkTokenLimit = (): void => {
        if (input.turnTokenLimit > 0 && meter.liveTokens() > input.turnTokenLimit) agentProcess?.kill('token-limit');
      };
      const agentProcess: AgentProcess = spawnAgentProcess({
        command: '/bin/sh',
        args: ['-c', buildCommandLine(options.command, input.prompt)],
        cwd: input.workspace,
        env: buildAgentEnv(options.env ?? process.env, input),
        stdin: input.prompt,
        transcriptPath: input.transcriptPath,
        label: `sh -c ${options.command}`,
        timeoutMs: input.timeoutMs,
        killGraceMs: options.killGraceMs,
        signal,
        onSpawn: input.onSpawn,
        sandbox: input.sandbox ?? null,
        ready: input.ready,
        onOutput(text) {
          meter.addOutput(text);
          checkTokenLimit();
        },
        onLine(line, stream) {
          const report = parseUsageLine(line);
          if (report !== null) {
            meter.addReport(report);
            checkTokenLimit();
          } else if (!isUsageLine(line) && line.trim() !== '') {
            lastLines[stream] = line;
          }
        },
      });
      const done = running.track(agentProcess);
      // The prompt alone may already be over the limit.
      checkTokenLimit();
      const result = await done;

      // The final message is the agent's last line: agents usually print their answer on stdout, logs on stderr.
      const finalMessage = ellipsize((lastLines.stdout || lastLines.stderr).trim(), FINAL_MESSAGE_MAX_CHARS);
      return toTurnResult(result, { command: options.command, input, usage: meter.usage(), finalMessage });
    },
  };
}

// The `sh -c` argument: the command with each `{prompt}` replaced by the prompt as one literal word.
function buildCommandLine(command: string, prompt: string): string {
  if (!command.includes(PROMPT_PLACEHOLDER)) return command;
  const quoted = quoteForShell(prompt);
  // Too big to inline (E2BIG): the shell reads the file instead. $(...) drops trailing newlines only.
  const replacement =
    Buffer.byteLength(quoted) <= MAX_INLINE_PROMPT_BYTES ? quoted : '"$(cat "$GOALD_PROMPT_FILE")"';
  return substitutePlaceholders(command, replacement);
}

// The structured adapters' environment plus GOALD_PROMPT, the prompt itself when it is small enough.
function buildAgentEnv(base: NodeJS.ProcessEnv, input: TurnInput): NodeJS.ProcessEnv {
  const env = buildCliAgentEnv(base, input);
  if (Buffer.byteLength(input.prompt) <= MAX_INLINE_PROMPT_BYTES) env.GOALD_PROMPT = input.prompt;
  return env;
}

interface TurnFacts {
  command: string;
  input: TurnInput;
  usage: Usage;
  finalMessage: string;
}

// Maps how the process ended to the turn's outcome and one line explaining it.
function toTurnResult(result: ProcessResult, facts: TurnFacts): TurnResult {
  const { outcome, error } = classifyEnd(result, facts);
  const turnResult: TurnResult = {
    outcome,
    exitCode: result.exitCode,
    signal: result.signal,
    // Time the agent ran: time suspended by `pause --now` is not counted, as for the timeout.
    durationMs: Math.round(result.durationMs - result.pausedMs),
    usage: facts.usage,
    finalMessage: facts.finalMessage,
    outputTail: result.outputTail,
  };
  if (result.transcriptError !== null) turnResult.transcriptError = result.transcriptError;
  return error === undefined ? turnResult : { ...turnResult, error };
}

function classifyEnd(result: ProcessResult, facts: TurnFacts): { outcome: TurnOutcome; error?: string } {
  if (result.spawnError !== null) return { outcome: 'spawn-failed', error: result.spawnError };
  switch (result.terminationReason) {
    case 'timeout':
      return { outcome: 'timed-out', error: `turn timed out after ${toDurationText(facts.input.timeoutMs)}` };
    case 'token-limit':
      return {
        outcome: 'token-limit',
        error: `turn passed the per-turn token limit (${groupDigits(facts.input.turnTokenLimit)} tokens)`,
      };
    case 'aborted':
      return { outcome: 'aborted', error: 'turn aborted' };
    case null:
      break;
  }
  if (result.exitCode === 0) return { outcome: 'completed' };
  if (result.exitCode === null) return { outcome: 'failed', error: `agent was killed by ${result.signal ?? 'a signal'}` };

  const shellComplaint =
    result.exitCode === EXIT_NOT_FOUND || result.exitCode === EXIT_CANNOT_EXECUTE
      ? findShellComplaint(result.outputTail)
      : null;
  if (shellComplaint !== null) {
    const what = shellComplaint.notFound ? 'not found' : 'not executable';
    // The agent itself is missing: the turn never really started.
    if (shellComplaint.name === readCommandName(facts.command)) {
      return { outcome: 'spawn-failed', error: `agent command ${what}: ${shellComplaint.name} (sh exited ${result.exitCode})` };
    }
    return { outcome: 'failed', error: `agent exited with code ${result.exitCode}: ${shellComplaint.name}: ${what}` };
  }
  return { outcome: 'failed', error: `agent exited with code ${result.exitCode}` };
}

// dash: "sh: 1: foo: not found"; bash as sh: "sh: line 1: foo: command not found", "sh: ./foo: Permission
// denied", "sh: ./foo: No such file or directory".
const SHELL_COMPLAINT =
  /^(?:\/bin\/)?sh: (?:line )?(?:\d+: )?(.+?): (not found|command not found|No such file or directory|Permission denied)$/;

// The last line in which the shell says a command could not be run.
function findShellComplaint(tail: string): { name: string; notFound: boolean } | null {
  const lines = tail.split('\n');
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const match = SHELL_COMPLAINT.exec((lines[index] ?? '').trimEnd());
    if (match?.[1] !== undefined) return { name: match[1], notFound: match[2] !== 'Permission denied' };
  }
  return null;
}

// 50000 → "50 000".
function groupDigits(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}
