// The `gemini` adapter: runs Gemini CLI headless (`gemini -p <prompt> --output-format json`, then the
// configured agent.args — `--approval-mode yolo` only when the user puts it there) and reads its JSON result:
// tokens per model, tool calls by name, session id, errors. The JSON arrives only when the run ends and
// nothing else is printed meanwhile, so the per-turn token limit cannot stop a Gemini turn midway: it is
// checked once against the prompt's estimate (as for the command adapter), and the reported usage counts
// in full afterwards.

import { createUsageMeter } from './usage-meter.js';
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
import { isGeminiUsageLimit, parseGeminiOutput } from './gemini-output.js';
import { spawnAgentProcess, type AgentProcess } from '../process/spawn.js';
import type { AgentAdapter, Usage } from './types.js';

// The whole of stdout is one JSON object; a runaway CLI must not fill memory (the transcript keeps all).
const MAX_STDOUT_CHARS = 8 * 1024 * 1024;
// With a prompt too big for argv, it goes on stdin and this goes in -p: Gemini CLI appends the -p text to
// what it reads from stdin.
const STDIN_PROMPT_POINTER = 'Carry out the instructions above.';

/**
 * The executable defaults to `gemini`; args are e.g. ['--approval-mode', 'yolo']; session is `fresh` only
 * (Gemini CLI resumes by list position, not by session id).
 */
export type GeminiAgentOptions = CliAgentOptions;

/** Creates the Gemini CLI adapter. Runs one turn at a time. */
export function createGeminiAgent(options: GeminiAgentOptions = {}): AgentAdapter {
  refuseResumeSession(options.session, 'gemini', 'Gemini CLI resumes by list position, not by session id');
  const executable = options.executable ?? 'gemini';
  const extraArgs = [...(options.args ?? [])];
  const configuredModel = options.model ?? null;
  const running = createRunningProcess();

  return {
    name: 'gemini',
    model: configuredModel,
    suspend: running.suspend,
    resume: running.resume,
    async runTurn(input, signal) {
      const meter = createUsageMeter(input.prompt);
      const notStarted = await preparePromptFile(input, meter.usage());
      if (notStarted !== null) return notStarted;

      const inArgv = fitsInArgv(input.prompt);
      const args = buildGeminiArgs(inArgv ? input.prompt : STDIN_PROMPT_POINTER, extraArgs, configuredModel);
      let stdout = '';
      const agentProcess: AgentProcess = spawnAgentProcess({
        command: executable,
        args,
        env: buildCliAgentEnv(options.env ?? process.env, input),
        stdin: inArgv ? null : input.prompt,
        label: `${executable} -p <prompt> ${args.slice(2).join(' ')}`,
        ...turnSpawnOptions(input, signal, options.killGraceMs),
        onOutput(text, stream) {
          // Only for the estimate used when no JSON result comes (a crash): the JSON is not model output.
          meter.addOutput(text);
          if (stream === 'stdout' && stdout.length < MAX_STDOUT_CHARS) stdout += text;
        },
      });
      const done = running.track(agentProcess);
      if (input.turnTokenLimit > 0 && meter.liveTokens() > input.turnTokenLimit) agentProcess.kill('token-limit');
      const result = await done;

      const output = parseGeminiOutput(stdout);
      const facts: CliTurnFacts = {
        agent: executable,
        input,
        usage: meter.usage(),
        finalMessage: output?.response ?? '',
        toolCalls: output?.toolCalls ?? [],
      };
      if (output !== null) {
        if (output.tokens !== null) facts.usage = toUsage(output.tokens);
        if (output.sessionId !== null) facts.sessionId = output.sessionId;
        const model = output.model ?? configuredModel;
        if (model !== null) facts.model = model;
        if (output.error !== null) {
          const message = `${output.error.type}: ${output.error.message}`.trim();
          if (isGeminiUsageLimit(output.error)) facts.usageLimit = { resetAt: null, message };
          else facts.failure = message;
        }
      }
      return toCliTurnResult(result, facts);
    },
  };
}

/** The argv after `gemini`: the prompt, JSON output, the configured model, then the user's args. */
export function buildGeminiArgs(prompt: string, extraArgs: readonly string[], model: string | null): string[] {
  const args = ['-p', prompt, '--output-format', 'json'];
  if (model !== null && !choosesModel(extraArgs)) args.push('--model', model);
  return [...args, ...extraArgs];
}

function choosesModel(args: readonly string[]): boolean {
  return args.includes('-m') || hasFlag(args, '--model');
}

// Gemini has no cost field and goald has no Gemini price table: cost stays unknown.
function toUsage(tokens: { inputTokens: number; outputTokens: number; totalTokens: number }): Usage {
  return {
    inputTokens: tokens.inputTokens,
    outputTokens: tokens.outputTokens,
    totalTokens: tokens.totalTokens,
    costUsd: null,
    estimated: false,
  };
}
