// The builtin agent's process: `goald agent --prompt-file <file> --options-file <file>`, started by the
// `builtin` adapter (builtin-agent.ts) in the workspace like any other agent, so a crash here cannot take
// the supervisor down and the supervisor's limits, breakers and drift treat it like the others. It runs
// one turn of the loop and reports on stdout (agent-protocol.ts); it is an entry point like bin.js, so it
// writes its own output. Exit: 0 the loop ended (done, max iterations, checks still failing), 1 an agent
// failure (model errors after retries, malformed replies, a usage limit), 2 bad input.

import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { GoaldError } from '../../errors.js';
import { redactSecrets } from '../../secrets/redact.js';
import { readAgentOptions } from './agent-options.js';
import { runAgentLoop } from './agent-loop.js';
import { formatAgentEvent, type AgentEndEvent } from './agent-protocol.js';
import { createInTurnDrift } from './in-turn-drift.js';
import { parseModelSpec, readEndpoint } from './model-spec.js';
import { buildProjectLayer } from './project-layer.js';
import { buildBaseLayer, buildSystemPrompt } from './system-prompt.js';
import { buildTaskLayer } from './task-layer.js';
import { createCommandGroups } from './tools/command-groups.js';
import { runGoalChecks } from './tools/run-checks.js';
import { BUILTIN_TOOLS } from './tools/toolset.js';
import type { ToolContext } from './tools/tool.js';
import { realWorkspace } from './tools/workspace-path.js';

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
// 128 + SIGTERM, as a shell reports a process the signal ended.
const EXIT_TERMINATED = 143;

/** Runs `goald agent <args>` (the words after `agent`); resolves with the exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let promptFile: string | undefined;
  let optionsFile: string | undefined;
  try {
    const { values } = parseArgs({ args: [...args], options: { 'prompt-file': { type: 'string' }, 'options-file': { type: 'string' } }, strict: true });
    promptFile = values['prompt-file'];
    optionsFile = values['options-file'];
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  if (promptFile === undefined || optionsFile === undefined) return usageError('--prompt-file and --options-file are required');

  const controller = new AbortController();
  const groups = createCommandGroups();
  // The adapter ends a turn with SIGTERM to this process group; the commands and checks the tools started
  // lead groups of their own, so they are killed here, then the loop is aborted.
  process.once('SIGTERM', () => {
    // killAll signals synchronously, before the abort lets the tools forget their groups; its sweep for
    // processes that left them keeps this process alive until it is done.
    void groups.killAll();
    controller.abort(new Error('terminated by goald'));
  });

  let end: AgentEndEvent;
  try {
    const [prompt, options] = await Promise.all([readFile(promptFile, 'utf8'), readAgentOptions(optionsFile)]);
    const spec = parseModelSpec(options.model);
    const endpoint = readEndpoint(spec, process.env);
    // Only the SDK the model needs is loaded (each is several MB of JavaScript to parse).
    const provider =
      spec.provider === 'openai'
        ? (await import('./providers/openai-provider.js')).createOpenAIProvider({ model: spec.model, ...endpoint })
        : (await import('./providers/anthropic-provider.js')).createAnthropicProvider({ model: spec.model, ...endpoint });
    const workspace = await realWorkspace(process.cwd());
    const context: ToolContext = {
      workspace,
      checks: options.checks,
      commands: options.commands,
      passEnv: options.passEnv,
      signal: controller.signal,
      groups,
    };
    const system = buildSystemPrompt(buildBaseLayer(BUILTIN_TOOLS), await buildProjectLayer(workspace, controller.signal));
    end = await runAgentLoop({
      provider,
      tools: BUILTIN_TOOLS,
      toolContext: context,
      system,
      task: buildTaskLayer(prompt),
      condition: options.condition,
      limits: {
        maxIterations: options.maxIterations,
        verificationRetries: options.verificationRetries,
        maxContextTokens: options.maxContextTokens,
        reciteEvery: options.reciteEvery,
      },
      verify: options.checks.length === 0 ? null : () => runGoalChecks(context),
      drift: createInTurnDrift(options.condition, options.stateDir),
      emit: (event) => process.stdout.write(formatAgentEvent(event)),
      log: (line) => process.stdout.write(`${redactSecrets(line, process.env)}\n`),
    });
  } catch (error) {
    if (controller.signal.aborted) return EXIT_TERMINATED;
    if (error instanceof GoaldError) return usageError(error.hint === undefined ? error.message : `${error.message}; ${error.hint}`);
    process.stderr.write(`goald agent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT_FAILED;
  }
  process.stdout.write(formatAgentEvent(end));
  process.stdout.write(`[goald agent] ${end.reason}: ${end.message}\n`);
  return end.reason === 'malformed-replies' || end.reason === 'model-error' || end.reason === 'usage-limit' ? EXIT_FAILED : 0;
}

function usageError(message: string): number {
  process.stderr.write(`goald agent: ${message}\n`);
  return EXIT_USAGE;
}
