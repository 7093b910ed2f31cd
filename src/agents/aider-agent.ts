// The `aider` adapter: runs `aider --message <prompt> --yes-always --no-stream --no-pretty` plus the
// configured agent.args, and reads its console output live: the usage report after each model call (summed
// per turn; the per-turn token limit is checked on each one), the session cost, `Applied edit to <file>` as
// tool calls, the model banner. --no-pretty keeps the reply plain text rather than rendered markdown, so
// lines can be read; a wide COLUMNS stops aider's console from wrapping long lines.

import { createAiderOutputReader } from './aider-output.js';
import {
  buildCliAgentEnv,
  createRunningProcess,
  fitsInArgv,
  hasFlag,
  preparePromptFile,
  refuseResumeSession,
  toCliTurnResult,
  turnSpawnOptions,
  type CliAgentOptions,
  type CliTurnFacts,
} from './cli-turn.js';
import { spawnAgentProcess, type AgentProcess } from '../process/spawn.js';
import type { AgentAdapter, Usage } from './types.js';
import { createUsageMeter } from './usage-meter.js';

// aider prints through rich, which wraps at COLUMNS (80 when stdout is not a terminal): a long path in
// "Applied edit to ..." would break across lines.
const CONSOLE_COLUMNS = '4096';

/** The executable defaults to `aider`; session is `fresh` only (aider has no session id). */
export type AiderAgentOptions = CliAgentOptions;

/** Creates the aider adapter. Runs one turn at a time. */
export function createAiderAgent(options: AiderAgentOptions = {}): AgentAdapter {
  refuseResumeSession(options.session, 'aider', 'aider has no session id, only one chat history file per directory');
  const executable = options.executable ?? 'aider';
  const extraArgs = [...(options.args ?? [])];
  const configuredModel = options.model ?? null;
  const running = createRunningProcess();

  return {
    name: 'aider',
    model: configuredModel,
    suspend: running.suspend,
    resume: running.resume,
    async runTurn(input, signal) {
      const estimate = createUsageMeter(input.prompt);
      const notStarted = await preparePromptFile(input, estimate.usage());
      if (notStarted !== null) return notStarted;

      const reader = createAiderOutputReader();
      const args = buildAiderArgs(input.prompt, input.promptPath, extraArgs, configuredModel);
      // The transcript header names the flags, not the whole prompt.
      const shownMessage = args[0] === '--message' ? '--message <prompt>' : `--message-file ${input.promptPath}`;
      const agentProcess: AgentProcess = spawnAgentProcess({
        command: executable,
        args,
        env: buildCliAgentEnv(options.env ?? process.env, input, { COLUMNS: CONSOLE_COLUMNS }),
        stdin: null,
        label: [executable, shownMessage, ...args.slice(2)].join(' '),
        ...turnSpawnOptions(input, signal, options.killGraceMs),
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
      const result = await running.track(agentProcess);

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
  if (model !== null && !hasFlag(extraArgs, '--model')) args.push('--model', model);
  return [...args, ...extraArgs];
}

function toUsage(sent: number, received: number, costUsd: number | null): Usage {
  return { inputTokens: sent, outputTokens: received, totalTokens: sent + received, costUsd, estimated: false };
}
