// The `aider` adapter: runs `aider --message <prompt> --yes-always --no-stream --no-pretty` plus the
// configured agent.args, and reads its console output live: the usage report after each model call (summed
// per turn; the per-turn token limit is checked on each one), the session cost, `Applied edit to <file>` as
// tool calls, the model banner. --no-pretty keeps the reply plain text rather than rendered markdown, so
// lines can be read; a wide COLUMNS stops aider's console from wrapping long lines.

import { createAiderOutputReader } from './aider-output.js';
import { GoaldError } from '../errors.js';
import { buildCliAgentEnv, ensurePromptFile, fitsInArgv, toCliTurnResult, type CliTurnFacts } from './cli-turn.js';
import { spawnAgentProcess, type AgentProcess } from './spawn.js';
import type { AgentAdapter, TurnResult, Usage } from './types.js';
import { createUsageMeter } from './usage-meter.js';

// aider prints through rich, which wraps at COLUMNS (80 when stdout is not a terminal): a long path in
// "Applied edit to ..." would break across lines.
const CONSOLE_COLUMNS = '4096';

export interface AiderAgentOptions {
  /** The executable (default `aider`). */
  executable?: string;
  /** Extra arguments after goald's own (config agent.args). */
  args?: readonly string[];
  /** The model, when configured: passed as --model unless args choose one. */
  model?: string | null;
  /** Only `fresh` (a new session each turn): aider has no session id, only one chat history file per directory. */
  session?: 'fresh' | 'resume';
  /** The environment the agent inherits (default: process.env); CLAUDECODE is always removed. */
  env?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL (default SIGKILL_GRACE_MS); tests shorten it. */
  killGraceMs?: number;
}

/** Creates the aider adapter. Runs one turn at a time. */
export function createAiderAgent(options: AiderAgentOptions = {}): AgentAdapter {
  if (options.session === 'resume') {
    throw new GoaldError(
      'config',
      `agent.session: "resume" is not supported by the aider adapter ` +
        '(aider has no session id, only one chat history file per directory)',
      'set agent.session to "fresh" (the default): the recitation carries the state from turn to turn',
    );
  }
  const executable = options.executable ?? 'aider';
  const extraArgs = [...(options.args ?? [])];
  const configuredModel = options.model ?? null;
  let current: AgentProcess | null = null;

  return {
    name: 'aider',
    model: configuredModel,
    async runTurn(input, signal) {
      const startedAt = Date.now();
      const estimate = createUsageMeter(input.prompt);
      const promptProblem = await ensurePromptFile(input.promptPath, input.prompt);
      if (promptProblem !== null) return notStarted(estimate.usage(), Date.now() - startedAt, promptProblem);

      const reader = createAiderOutputReader();
      const args = buildAiderArgs(input.prompt, input.promptPath, extraArgs, configuredModel);
      // The transcript header names the flags, not the whole prompt.
      const shownMessage = args[0] === '--message' ? '--message <prompt>' : `--message-file ${input.promptPath}`;
      const agentProcess: AgentProcess = spawnAgentProcess({
        command: executable,
        args,
        cwd: input.workspace,
        env: buildCliAgentEnv(options.env ?? process.env, input, { COLUMNS: CONSOLE_COLUMNS }),
        stdin: null,
        transcriptPath: input.transcriptPath,
        label: [executable, shownMessage, ...args.slice(2)].join(' '),
        timeoutMs: input.timeoutMs,
        killGraceMs: options.killGraceMs,
        signal,
        onSpawn: input.onSpawn,
        onOutput(text) {
          estimate.addOutput(text);
        },
        onLine(line) {
          const read = reader.push(line);
          if (read.kind !== 'tokens' || input.turnTokenLimit <= 0) return;
          const { sent, received } = reader.summary();
          if (sent + received > input.turnTokenLimit) agentProcess.kill('token-limit');
        },
      });
      current = agentProcess;
      const result = await agentProcess.done;
      if (current === agentProcess) current = null;

      const summary = reader.summary();
      const facts: CliTurnFacts = {
        agent: executable,
        input,
        // Without a single usage report (aider failed before its first model call), tokens are estimated.
        usage: summary.reports > 0 ? toUsage(summary.sent, summary.received, summary.costUsd) : estimate.usage(),
        finalMessage: summary.finalMessage,
        toolCalls: summary.toolCalls,
      };
      const model = summary.model ?? configuredModel;
      if (model !== null) facts.model = model;
      if (summary.rateLimit !== null) facts.usageLimit = { resetAt: null, message: summary.rateLimit };
      return toCliTurnResult(result, facts);
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
 * The argv after `aider`: the message (from the prompt file when too big for argv), the flags that make it
 * run unattended and readable, the configured model, then the user's args.
 */
export function buildAiderArgs(
  prompt: string,
  promptPath: string,
  extraArgs: readonly string[],
  model: string | null,
): string[] {
  const message = fitsInArgv(prompt) ? ['--message', prompt] : ['--message-file', promptPath];
  const args = [...message, '--yes-always', '--no-stream', '--no-pretty'];
  const choosesModel = extraArgs.some((arg) => arg === '--model' || arg.startsWith('--model='));
  if (model !== null && !choosesModel) args.push('--model', model);
  return [...args, ...extraArgs];
}

function toUsage(sent: number, received: number, costUsd: number | null): Usage {
  return { inputTokens: sent, outputTokens: received, totalTokens: sent + received, costUsd, estimated: false };
}

function notStarted(usage: Usage, durationMs: number, error: string): TurnResult {
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
