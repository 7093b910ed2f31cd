// The `gemini` adapter: runs Gemini CLI headless (`gemini -p <prompt> --output-format json`, then the
// configured agent.args — `--approval-mode yolo` only when the user puts it there) and reads its JSON result:
// tokens per model, tool calls by name, session id, errors. The JSON arrives only when the run ends and
// nothing else is printed meanwhile, so the per-turn token limit cannot stop a Gemini turn midway: it is
// checked once against the prompt's estimate (as for the command adapter), and the reported usage counts
// in full afterwards.

import { createUsageMeter } from './usage-meter.js';
import { GoaldError } from '../errors.js';
import { buildCliAgentEnv, ensurePromptFile, fitsInArgv, toCliTurnResult, type CliTurnFacts } from './cli-turn.js';
import { isGeminiUsageLimit, parseGeminiOutput } from './gemini-output.js';
import { spawnAgentProcess, type AgentProcess } from './spawn.js';
import type { AgentAdapter, TurnResult, Usage } from './types.js';

// The whole of stdout is one JSON object; a runaway CLI must not fill memory (the transcript keeps all).
const MAX_STDOUT_CHARS = 8 * 1024 * 1024;
// With a prompt too big for argv, it goes on stdin and this goes in -p: Gemini CLI appends the -p text to
// what it reads from stdin.
const STDIN_PROMPT_POINTER = 'Carry out the instructions above.';

export interface GeminiAgentOptions {
  /** The executable (default `gemini`). */
  executable?: string;
  /** Extra arguments after goald's own (config agent.args), e.g. ['--approval-mode', 'yolo']. */
  args?: readonly string[];
  /** The model, when configured: passed as --model unless args choose one. */
  model?: string | null;
  /** Only `fresh` (a new session each turn): Gemini CLI resumes by list position, not by session id. */
  session?: 'fresh' | 'resume';
  /** The environment the agent inherits (default: process.env); CLAUDECODE is always removed. */
  env?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL (default SIGKILL_GRACE_MS); tests shorten it. */
  killGraceMs?: number;
}

/** Creates the Gemini CLI adapter. Runs one turn at a time. */
export function createGeminiAgent(options: GeminiAgentOptions = {}): AgentAdapter {
  if (options.session === 'resume') {
    throw new GoaldError(
      'config',
      `agent.session: "resume" is not supported by the gemini adapter ` +
        '(Gemini CLI resumes by list position, not by session id)',
      'set agent.session to "fresh" (the default): the recitation carries the state from turn to turn',
    );
  }
  const executable = options.executable ?? 'gemini';
  const extraArgs = [...(options.args ?? [])];
  const configuredModel = options.model ?? null;
  let current: AgentProcess | null = null;

  return {
    name: 'gemini',
    model: configuredModel,
    async runTurn(input, signal) {
      const startedAt = Date.now();
      const meter = createUsageMeter(input.prompt);
      const promptProblem = await ensurePromptFile(input.promptPath, input.prompt);
      if (promptProblem !== null) return notStarted(meter.usage(), Date.now() - startedAt, promptProblem);

      const inArgv = fitsInArgv(input.prompt);
      const args = buildGeminiArgs(inArgv ? input.prompt : STDIN_PROMPT_POINTER, extraArgs, configuredModel);
      let stdout = '';
      const agentProcess: AgentProcess = spawnAgentProcess({
        command: executable,
        args,
        cwd: input.workspace,
        env: buildCliAgentEnv(options.env ?? process.env, input),
        stdin: inArgv ? null : input.prompt,
        transcriptPath: input.transcriptPath,
        label: `${executable} -p <prompt> ${args.slice(2).join(' ')}`,
        timeoutMs: input.timeoutMs,
        killGraceMs: options.killGraceMs,
        signal,
        onSpawn: input.onSpawn,
        onOutput(text, stream) {
          // Only for the estimate used when no JSON result comes (a crash): the JSON is not model output.
          meter.addOutput(text);
          if (stream === 'stdout' && stdout.length < MAX_STDOUT_CHARS) stdout += text;
        },
      });
      current = agentProcess;
      if (input.turnTokenLimit > 0 && meter.liveTokens() > input.turnTokenLimit) agentProcess.kill('token-limit');
      const result = await agentProcess.done;
      if (current === agentProcess) current = null;

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
    suspend() {
      current?.suspend();
    },
    resume() {
      current?.resume();
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
  return args.some((arg) => arg === '-m' || arg === '--model' || arg.startsWith('--model='));
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
