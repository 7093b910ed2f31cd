// The `codex` adapter: runs Codex headless (`codex exec --json --sandbox workspace-write -- <prompt>`, or
// `codex exec --json … resume -- <thread_id> <prompt>` to go on with a thread) and reads its JSONL events
// live: commands and file changes as tool calls, the thread id, the last agent message, usage limits, and
// the usage at `turn.completed`, priced from the price table (Codex reports no cost).
//
// stdin is /dev/null: with an open stdin pipe `codex exec` waits for more input forever. Codex is a Node
// shim over a native binary; spawnAgentProcess signals the whole process group, so a kill reaches both.

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
import { createCodexStreamParser, subtractUsage, type CodexStreamSummary, type CodexUsage } from './codex-stream.js';
import { computeCost, type PriceTable } from './price-table.js';
import { spawnAgentProcess, type AgentProcess } from '../process/spawn.js';
import type { AgentAdapter, Usage } from './types.js';
import { estimateTokens } from './usage-meter.js';

/** goald's `--sandbox` unless agent.args choose one: `codex exec` is read-only by default, so it could not edit. */
const DEFAULT_SANDBOX = 'workspace-write';
// Inside goald's own sandbox (src/sandbox/), Codex's cannot start (its bwrap cannot mount /proc under ours),
// and goald's already keeps the turn to the workspace: Codex runs its commands without one of its own.
const INSIDE_GOALD_SANDBOX = 'danger-full-access';
// A file_change or command item with its output is one line.
const MAX_EVENT_LINE_CHARS = 8 * 1024 * 1024;
const MAX_NOTE_CHARS = 300;

// Flags that pick a session by recency, or that goald sets itself.
const REFUSED_ARGS: ReadonlyMap<string, string> = new Map([
  ['--last', 'goald never resumes "the most recent" session; set agent.session to "resume" instead'],
  ['resume', 'goald resumes threads by id itself; set agent.session to "resume"'],
  ['fork', 'goald resumes threads by id itself; set agent.session to "resume"'],
  ['exec', 'goald runs `codex exec` itself; put only options in agent.args'],
]);

/** The executable defaults to `codex`; session `resume` keeps the first turn's thread for the whole goal. */
export interface CodexAgentOptions extends CliAgentOptions {
  /**
   * Extra `codex exec` options (config agent.args), before the prompt. `--sandbox workspace-write` is added
   * unless these choose a sandbox (`--sandbox`/`-s`, `--full-auto`, `--dangerously-bypass-approvals-and-sandbox`).
   */
  args?: readonly string[];
  /** The model, when configured: passed as --model unless args choose one; also prices the tokens. */
  model?: string | null;
  /** Prices (USD per million tokens) that override or extend the default table. */
  prices?: PriceTable;
  /** The clock for usage-limit reset times (default Date.now). */
  now?: () => number;
}

/** Creates the Codex adapter. Runs one turn at a time. */
export function createCodexAgent(options: CodexAgentOptions = {}): AgentAdapter {
  const executable = options.executable ?? 'codex';
  const userArgs = [...(options.args ?? [])];
  refuseArgs(userArgs, REFUSED_ARGS, 'codex');
  const configuredModel = options.model ?? null;
  const now = options.now ?? Date.now;
  const baseEnv = options.env ?? process.env;
  const resumeThreads = options.session === 'resume';
  // The thread to resume, and its usage totals after the last turn that completed (Codex reports usage
  // cumulatively over a resumed thread).
  let thread: { id: string; totals: CodexUsage | null } | null = null;
  const running = createRunningProcess();

  return {
    name: 'codex',
    model: configuredModel,
    suspend: running.suspend,
    resume: running.resume,
    async runTurn(input, signal) {
      const promptTokens = estimateTokens(input.prompt.length);
      const notStarted = await preparePromptFile(input, estimatedUsage(promptTokens));
      if (notStarted !== null) return notStarted;

      const env = buildCliAgentEnv(baseEnv, input);
      const parser = createCodexStreamParser({ cwd: input.workspace, now, timeZone: readTimeZone(env) });
      const inArgv = fitsInArgv(input.prompt);
      const resumeId = resumeThreads ? (thread?.id ?? null) : null;
      const args = buildCodexArgs({ args: userArgs, model: configuredModel, resumeThreadId: resumeId, insideSandbox: input.sandbox != null });
      let lastNote = '';
      // Codex reports usage only at the end of the turn: live, the prompt and the items' text are all there is.
      const liveTokens = (): number => promptTokens + parser.itemTokens();
      const checkTokenLimit = (): void => {
        if (input.turnTokenLimit > 0 && liveTokens() > input.turnTokenLimit) agentProcess.kill('token-limit');
      };

      const agentProcess: AgentProcess = spawnAgentProcess({
        command: executable,
        // `-` reads the prompt from stdin, for a prompt too big for one argument; otherwise stdin is /dev/null.
        args: [...args, inArgv ? input.prompt : '-'],
        env,
        stdin: inArgv ? null : input.prompt,
        label: `${executable} ${args.join(' ')} <prompt>`,
        ...turnSpawnOptions(input, signal, options.killGraceMs),
        maxLineChars: MAX_EVENT_LINE_CHARS,
        onLine(line, stream) {
          if (stream === 'stdout') {
            parser.push(line);
            checkTokenLimit();
          } else if (line.trim() !== '' && !isStderrChatter(line)) {
            lastNote = line.trim().slice(0, MAX_NOTE_CHARS);
          }
        },
      });
      const done = running.track(agentProcess);
      checkTokenLimit();
      const result = await done;

      const summary = parser.summary();
      const previousTotals = summary.threadId !== null && thread?.id === summary.threadId ? thread.totals : null;
      const turnUsage = summary.usage === null ? null : subtractUsage(summary.usage, previousTotals);
      if (resumeThreads && summary.threadId !== null) {
        thread = { id: summary.threadId, totals: summary.usage ?? thread?.totals ?? null };
      }

      const facts: CliTurnFacts = {
        agent: executable,
        input,
        usage: turnUsage === null ? estimatedUsage(liveTokens()) : toUsage(turnUsage, configuredModel, options.prices),
        finalMessage: summary.finalMessage,
        toolCalls: summary.toolCalls,
      };
      if (summary.threadId !== null) facts.sessionId = summary.threadId;
      if (configuredModel !== null) facts.model = configuredModel;
      if (summary.usageLimit !== null) facts.usageLimit = summary.usageLimit;
      const failure = describeFailure(summary, lastNote);
      if (failure !== null) facts.failure = failure;

      const turn = toCliTurnResult(result, facts);
      if (turnUsage !== null && facts.usage.costUsd !== null) turn.costComputed = true;
      return turn;
    },
  };
}

interface ArgChoices {
  args: readonly string[];
  model: string | null;
  /** Resume this thread; null starts a new one. */
  resumeThreadId: string | null;
  /** The turn runs inside goald's sandbox: Codex's own is left off unless agent.args choose one. */
  insideSandbox?: boolean;
}

/** The argv after `codex`, up to (not including) the prompt. */
export function buildCodexArgs(choices: ArgChoices): string[] {
  const args = ['exec', '--json'];
  const choosesSandbox = ['--sandbox', '-s', '--full-auto', '--dangerously-bypass-approvals-and-sandbox'].some((flag) =>
    hasFlag(choices.args, flag),
  );
  if (!choosesSandbox) args.push('--sandbox', choices.insideSandbox === true ? INSIDE_GOALD_SANDBOX : DEFAULT_SANDBOX);
  if (choices.model !== null && !hasFlag(choices.args, '--model') && !hasFlag(choices.args, '-m')) {
    args.push('--model', choices.model);
  }
  args.push(...choices.args);
  // `resume` takes no sandbox options of its own: the ones above, given to `exec`, apply to it.
  if (choices.resumeThreadId !== null) args.push('resume', '--', choices.resumeThreadId);
  else args.push('--');
  return args;
}

// Codex's usage in goald's terms: cached input apart from input, priced from the table.
function toUsage(usage: CodexUsage, model: string | null, prices: PriceTable | undefined): Usage {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  return {
    inputTokens: uncached,
    outputTokens: usage.outputTokens,
    totalTokens: uncached + usage.outputTokens,
    cachedInputTokens: cached,
    costUsd: computeCost(model, { inputTokens: uncached, cachedInputTokens: cached, outputTokens: usage.outputTokens }, prices),
    estimated: false,
  };
}

// Why the turn failed, in one line: Codex's own words first.
function describeFailure(summary: CodexStreamSummary, lastNote: string): string | null {
  if (summary.turnFailed !== null) return summary.turnFailed;
  if (summary.turnCompleted) return null;
  return summary.errors.at(-1) ?? (lastNote === '' ? null : lastNote);
}

// What `codex exec` prints on stderr on every run, which explains nothing about a failure.
function isStderrChatter(line: string): boolean {
  return line.startsWith('Reading additional input from stdin') || line.startsWith('WARNING: proceeding, even though');
}
