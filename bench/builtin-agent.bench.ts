// The builtin agent's own overhead per loop iteration (issue 10: target ≤ 5 ms at the median): the time an
// iteration takes outside the model call (the OpenAI SDK's request and stream against a local fake server)
// and outside the tool's own work (read_file of a small file) — the loop's bookkeeping: elision, the
// conversation, dispatch and validation, the retry wrapper, events and the transcript lines. Also, for
// context, the agent process's start-up: `goald agent` spawned until its first model request arrives.
// Run alone with `node dist/bench/builtin-agent.bench.js [--runs N]` after `npm run build`.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { runAgentLoop } from '../src/agents/builtin/agent-loop.js';
import { createInTurnDrift } from '../src/agents/builtin/in-turn-drift.js';
import { createOpenAIProvider } from '../src/agents/builtin/providers/openai-provider.js';
import type { ModelProvider } from '../src/agents/builtin/providers/provider.js';
import { buildBaseLayer } from '../src/agents/builtin/system-prompt.js';
import type { Tool } from '../src/agents/builtin/tools/tool.js';
import { BUILTIN_TOOLS } from '../src/agents/builtin/tools/toolset.js';
import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, median, numberFlag, round, runWhenMain } from './bench-runner.js';

export const OVERHEAD_TARGET_MS = 5;
const ITERATIONS = 30; // the default agent.maxIterations: the conversation grows as it would in a turn
const DEFAULT_RUNS = 10;

export interface BuiltinAgentBenchResult {
  runs: number;
  iterations: number;
  /** Median over every iteration of every run: wall time − model call − tool work. */
  overheadMs: number;
  /** 95th percentile of the same samples. */
  overheadP95Ms: number;
  /** Median model call (SDK + loopback HTTP + the fake server), for context. */
  modelCallMs: number;
  /** Median `goald agent` start-up: spawn until the first model request reaches the server. */
  startupMs: number;
}

// A Chat Completions server that streams a read_file call until `iterations` requests, then text.
async function startServer(iterations: () => number, onRequest: () => void): Promise<Server> {
  let served = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      onRequest();
      served += 1;
      const base = { id: `c${served}`, object: 'chat.completion.chunk', created: 0, model: 'bench' };
      const chunk = (delta: unknown, finish: string | null = null): string => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (served % iterations() === 0) {
        res.write(chunk({ role: 'assistant', content: 'done' }, 'stop'));
      } else {
        res.write(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: `call_${served}`, type: 'function', function: { name: 'read_file', arguments: '{"path":"src/small.ts"}' } }] }));
        res.write(chunk({}, 'tool_calls'));
      }
      res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

// Wraps the provider and the tools so the time inside them is measured per iteration.
function instrument(provider: ModelProvider, tools: readonly Tool[], marks: Array<{ start: number; model: number; tool: number }>) {
  const timedProvider: ModelProvider = {
    ...provider,
    async attempt(request, signal) {
      const start = performance.now();
      const mark = { start, model: 0, tool: 0 };
      marks.push(mark);
      try {
        return await provider.attempt(request, signal);
      } finally {
        mark.model = performance.now() - start;
      }
    },
  };
  const timedTools: Tool[] = tools.map((tool) => ({
    ...tool,
    async invoke(args, context) {
      const start = performance.now();
      try {
        return await tool.invoke(args, context);
      } finally {
        const mark = marks.at(-1);
        if (mark !== undefined) mark.tool += performance.now() - start;
      }
    },
  }));
  return { timedProvider, timedTools };
}

/** Runs the loop `runs` times for ITERATIONS iterations each against the fake server. */
export async function benchBuiltinAgent(options: { runs?: number } = {}): Promise<BuiltinAgentBenchResult> {
  const runs = options.runs ?? DEFAULT_RUNS;
  const workspace = await mkdtemp(path.join(tmpdir(), 'goald-bench-agent-'));
  let firstRequest: (() => void) | null = null;
  const server = await startServer(() => ITERATIONS, () => firstRequest?.());
  try {
    // A git work tree, as every goal's workspace is (the agent process lists its files with git).
    await runGit(['init', '--quiet'], { cwd: workspace });
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'small.ts'), 'export function add(a: number, b: number): number {\n  return a + b;\n}\n');
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const overheads: number[] = [];
    const modelCalls: number[] = [];
    for (let run = 0; run < runs + 1; run += 1) {
      const marks: Array<{ start: number; model: number; tool: number }> = [];
      const { timedProvider, timedTools } = instrument(createOpenAIProvider({ model: 'bench', apiKey: 'bench', baseURL }), BUILTIN_TOOLS, marks);
      const end = await runAgentLoop({
        provider: timedProvider,
        tools: timedTools,
        toolContext: { workspace, checks: [], commands: { allow: [], deny: [] }, passEnv: [], signal: new AbortController().signal },
        system: buildBaseLayer(BUILTIN_TOOLS),
        task: '# Goal\nadd returns the sum\n',
        condition: 'add returns the sum',
        limits: { maxIterations: ITERATIONS, verificationRetries: 0, maxContextTokens: 32_000, reciteEvery: 10 },
        verify: null,
        drift: createInTurnDrift('add returns the sum', null),
        emit: () => undefined,
        log: () => undefined,
      });
      const finished = performance.now();
      if (end.iterations !== ITERATIONS) throw new Error(`the loop ran ${end.iterations} iterations, expected ${ITERATIONS}: ${end.message}`);
      if (run === 0) continue; // warm-up: module loading, JIT, the first connection
      marks.forEach((mark, index) => {
        const next = marks[index + 1]?.start ?? finished;
        overheads.push(next - mark.start - mark.model - mark.tool);
        modelCalls.push(mark.model);
      });
    }
    const startups: number[] = [];
    for (let run = 0; run < Math.min(runs, 5); run += 1) startups.push(await measureStartup(workspace, baseURL, (resolve) => (firstRequest = resolve)));
    const sorted = [...overheads].sort((a, b) => a - b);
    return {
      runs,
      iterations: ITERATIONS,
      overheadMs: round(median(overheads)),
      overheadP95Ms: round(sorted[Math.floor(sorted.length * 0.95)] ?? 0),
      modelCallMs: round(median(modelCalls)),
      startupMs: round(median(startups)),
    };
  } finally {
    server.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

// Spawns the built `goald agent` and resolves with the time until the server hears its first request.
async function measureStartup(workspace: string, baseURL: string, listen: (resolve: () => void) => void): Promise<number> {
  const optionsFile = path.join(workspace, '.git', 'bench-options.json');
  const promptFile = path.join(workspace, '.git', 'bench-prompt.txt');
  await writeFile(promptFile, '# Goal\nadd returns the sum\n');
  await writeFile(
    optionsFile,
    JSON.stringify({ model: 'openai:bench', condition: 'add returns the sum', checks: [], maxIterations: 1, verificationRetries: 0, maxContextTokens: 32_000, commands: { allow: [], deny: [] }, reciteEvery: 10, passEnv: [], stateDir: null }),
  );
  const started = performance.now();
  const arrived = new Promise<number>((resolve) => listen(() => resolve(performance.now() - started)));
  const child = spawn(process.execPath, [GOALD_BIN, 'agent', '--prompt-file', promptFile, '--options-file', optionsFile], {
    cwd: workspace,
    env: { ...process.env, OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: baseURL },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ms = await arrived;
  await exited;
  return ms;
}

runWhenMain(import.meta.url, async (argv) => {
  const runs = numberFlag(argv, '--runs');
  const result = await benchBuiltinAgent(runs === undefined ? {} : { runs });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
});
