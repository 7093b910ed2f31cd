// The `builtin` adapter: goald's own ReAct agent (src/agents/builtin/), run as a child process like every
// other agent — `node <goald bin.js> agent --prompt-file <file> --options-file <file>` in the workspace,
// through spawnAgentProcess — so the supervisor's timeout, token limit, stop, breakers and drift treat it
// like the others and its crash is a failed turn, not a dead supervisor. Its `GOALD_AGENT {json}` lines
// (agent-protocol.ts) carry each model call's usage, exactly as the server reported it (the per-turn token
// limit kills it live), each tool call (drift), and how the loop ended.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { goaldEntryPath } from '../../cli/goald-entry.js';
import { DEFAULT_BUILTIN_AGENT } from '../../config/defaults.js';
import type { AgentSpec } from '../../config/types.js';
import { spawnAgentProcess, type AgentProcess } from '../../process/spawn.js';
import {
  buildCliAgentEnv,
  createRunningProcess,
  estimatedUsage,
  preparePromptFile,
  toCliTurnResult,
  turnSpawnOptions,
  type CliTurnFacts,
} from '../cli-turn.js';
import { computeCost, type PriceTable } from '../price-table.js';
import type { AgentAdapter, ToolCall, Usage } from '../types.js';
import { estimateTokens } from '../usage-meter.js';
import type { AgentOptions } from './agent-options.js';
import { parseAgentEvent, type AgentEndEvent } from './agent-protocol.js';
import { parseModelSpec, readEndpoint } from './model-spec.js';

const OPTIONS_FILE = 'builtin-agent.json';
// A tool event carries one command line; an end event one message: far below this.
const MAX_EVENT_LINE_CHARS = 1024 * 1024;
const MAX_NOTE_CHARS = 300;
// Tool calls kept for drift detection per turn (the loop's cap keeps it far lower in practice).
const MAX_TOOL_CALLS = 1_000;
const DEFAULT_RECITE_EVERY = 10;

export interface BuiltinAgentOptions {
  spec: AgentSpec;
  /** The agent's environment (its provider's key and base URL among it). */
  env: NodeJS.ProcessEnv;
  /** The argv that runs goald (default: this node and the bin.js beside this module). */
  goaldCommand?: readonly string[];
  /** Time between SIGTERM and SIGKILL (tests shorten it). */
  killGraceMs?: number;
}

/**
 * Creates the builtin adapter. Throws GoaldError (exit 2 before turn 1) for a model without a known
 * provider prefix or a missing API key.
 */
export function createBuiltinAgent(options: BuiltinAgentOptions): AgentAdapter {
  const { spec, env: baseEnv } = options;
  const model = parseModelSpec(spec.model);
  const endpoint = readEndpoint(model, baseEnv);
  const [command = process.execPath, ...commandArgs] = options.goaldCommand ?? [process.execPath, goaldEntryPath()];
  const prices: PriceTable = spec.prices;
  const running = createRunningProcess();

  return {
    name: 'builtin',
    model: spec.model,
    keepsTurnState: true, // its options file, and the drift pause it may ask for
    suspend: running.suspend,
    resume: running.resume,
    async preflight() {
      const { checkModelServer } = await import('./model-check.js');
      await checkModelServer(model, endpoint);
    },
    async runTurn(input, signal) {
      const promptTokens = estimateTokens(input.prompt.length);
      const notStarted = await preparePromptFile(input, estimatedUsage(promptTokens));
      if (notStarted !== null) return notStarted;
      const optionsPath = path.join(input.stateDir ?? path.dirname(input.promptPath), OPTIONS_FILE);
      const agentOptions: AgentOptions = {
        model: `${model.provider}:${model.model}`,
        condition: input.condition,
        checks: [...(input.checks ?? [])],
        maxIterations: spec.maxIterations ?? DEFAULT_BUILTIN_AGENT.maxIterations,
        verificationRetries: spec.verificationRetries ?? DEFAULT_BUILTIN_AGENT.verificationRetries,
        maxContextTokens: spec.maxContextTokens ?? DEFAULT_BUILTIN_AGENT.maxContextTokens,
        commands: { allow: [...(spec.commands?.allow ?? [])], deny: [...(spec.commands?.deny ?? [])] },
        reciteEvery: input.reciteEveryToolCalls ?? DEFAULT_RECITE_EVERY,
        passEnv: [...(spec.passEnv ?? [])],
        stateDir: input.stateDir ?? null,
      };
      await writeFile(optionsPath, `${JSON.stringify(agentOptions)}\n`, { mode: 0o600 });

      const totals = { calls: 0, input: 0, cached: 0, output: 0, estimated: false };
      let servedModel: string | null = null;
      const toolCalls: ToolCall[] = [];
      // An object: the line callback sets it, which TypeScript's narrowing cannot see.
      const reported: { end: AgentEndEvent | null } = { end: null };
      let lastNote = '';
      const liveTokens = (): number => (totals.calls === 0 ? promptTokens : totals.input + totals.output);
      const checkTokenLimit = (): void => {
        if (input.turnTokenLimit > 0 && liveTokens() > input.turnTokenLimit) agentProcess.kill('token-limit');
      };
      const args = [...commandArgs, 'agent', '--prompt-file', input.promptPath, '--options-file', optionsPath];
      const agentProcess: AgentProcess = spawnAgentProcess({
        command,
        args,
        env: buildCliAgentEnv(baseEnv, input),
        stdin: null,
        label: `goald agent --model ${agentOptions.model}`,
        ...turnSpawnOptions(input, signal, options.killGraceMs),
        maxLineChars: MAX_EVENT_LINE_CHARS,
        onLine(line, stream) {
          const event = stream === 'stdout' ? parseAgentEvent(line) : null;
          if (event === null) {
            if (stream === 'stderr' && line.trim() !== '') lastNote = line.trim().slice(0, MAX_NOTE_CHARS);
            return;
          }
          if (event.type === 'usage') {
            totals.calls += 1;
            totals.input += event.input;
            totals.cached += event.cached;
            totals.output += event.output;
            if (event.estimated === true) totals.estimated = true;
            servedModel = event.model;
            checkTokenLimit();
          } else if (event.type === 'tool') {
            if (toolCalls.length < MAX_TOOL_CALLS) toolCalls.push(toToolCall(event));
          } else {
            reported.end = event;
          }
        },
      });
      const done = running.track(agentProcess);
      checkTokenLimit();
      const result = await done;

      const ended = reported.end;
      const usage: Usage =
        totals.calls === 0
          ? estimatedUsage(promptTokens)
          : {
              inputTokens: totals.input,
              outputTokens: totals.output,
              totalTokens: totals.input + totals.output,
              cachedInputTokens: totals.cached,
              costUsd: computeCost(model.model, { inputTokens: totals.input, cachedInputTokens: totals.cached, outputTokens: totals.output }, prices),
              estimated: totals.estimated,
            };
      const facts: CliTurnFacts = { agent: 'goald agent', input, usage, finalMessage: ended?.message ?? '', toolCalls };
      facts.model = servedModel ?? model.model;
      if (ended !== null && ended.reason === 'usage-limit') facts.usageLimit = { resetAt: ended.resetAt ?? null, message: ended.message };
      else if (ended !== null && (ended.reason === 'malformed-replies' || ended.reason === 'model-error')) facts.failure = ended.message;
      else if (ended === null && lastNote !== '') facts.failure = lastNote;
      const turn = toCliTurnResult(result, facts);
      if (usage.costUsd !== null) turn.costComputed = true;
      return turn;
    },
  };
}

function toToolCall(event: { name: string; filePath?: string | undefined; command?: string | undefined }): ToolCall {
  const call: ToolCall = { name: event.name };
  if (event.filePath !== undefined) call.filePath = event.filePath;
  if (event.command !== undefined) call.command = event.command;
  return call;
}
