// Runs one real turn of the builtin agent: the built goald's `agent` process, started by the adapter in a
// real temp git repository, talking to the fake LLM server through the real SDKs' base URL.

import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBuiltinAgent } from '../../../src/agents/builtin/builtin-agent.js';
import type { TurnResult } from '../../../src/agents/types.js';
import type { AgentSpec, CheckSpec } from '../../../src/config/types.js';
import type { FakeLlm } from '../../helpers/fake-llm.js';
import type { Gitdir } from '../../helpers/gitdir.js';
import { goaldBin } from '../../helpers/run-goald.js';

export interface TurnRun {
  result: TurnResult;
  /** The turn's transcript (stdout and stderr of the agent process). */
  transcript: string;
  stateDir: string;
}

export interface TurnOptions {
  checks?: CheckSpec[];
  spec?: Partial<AgentSpec>;
  prompt?: string;
  condition?: string;
  turnTokenLimit?: number;
  reciteEvery?: number;
  provider?: 'openai' | 'anthropic';
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** The builtin agent's spec for the fake server's provider. */
function builtinSpec(provider: 'openai' | 'anthropic' = 'openai', extra: Partial<AgentSpec> = {}): AgentSpec {
  return { adapter: 'builtin', command: '', args: [], session: 'fresh', model: `${provider}:fake-coder`, prices: {}, ...extra };
}

/** The environment that points the agent at the fake server. */
function fakeEnv(llm: FakeLlm): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('GOALD_') || name.startsWith('OPENAI_') || name.startsWith('ANTHROPIC_')) delete env[name];
  return { ...env, OPENAI_API_KEY: 'sk-fake-openai-key', OPENAI_BASE_URL: llm.openaiBaseURL, ANTHROPIC_API_KEY: 'sk-ant-fake-key', ANTHROPIC_BASE_URL: llm.anthropicBaseURL };
}

/** Runs one turn of the builtin agent in `repo`; the goal's files live in a directory beside it. */
export async function runBuiltinTurn(repo: Gitdir, llm: FakeLlm, options: TurnOptions = {}): Promise<TurnRun> {
  if (!existsSync(goaldBin)) throw new Error(`${goaldBin} is missing: run \`npm run build\` first (npm test does)`);
  const goalDir = `${repo.dir}-goal`;
  const stateDir = path.join(goalDir, 'turn-1.state');
  await mkdir(stateDir, { recursive: true });
  const agent = createBuiltinAgent({
    spec: builtinSpec(options.provider ?? 'openai', options.spec),
    env: { ...fakeEnv(llm), ...options.env },
    goaldCommand: [process.execPath, goaldBin],
    killGraceMs: 500,
  });
  const condition = options.condition ?? 'the tests pass';
  const transcriptPath = path.join(goalDir, 'turn-1.log');
  const result = await agent.runTurn(
    {
      goalId: 'g1',
      turn: 1,
      condition,
      prompt: options.prompt ?? `# Goal\n${condition}\n\n# Recitation\nObjective: ${condition}\n`,
      workspace: repo.dir,
      promptPath: path.join(goalDir, 'turn-1.prompt.txt'),
      transcriptPath,
      timeoutMs: options.timeoutMs ?? 60_000,
      turnTokenLimit: options.turnTokenLimit ?? 0,
      stateDir,
      reciteEveryToolCalls: options.reciteEvery ?? 10,
      checks: options.checks ?? [],
    },
    new AbortController().signal,
  );
  const transcript = existsSync(transcriptPath) ? await readFile(transcriptPath, 'utf8') : '';
  return { result, transcript, stateDir };
}

/** A check that passes when `file` holds `text`. */
export function fileCheck(file: string, text: string): CheckSpec {
  return { name: `${file} fixed`, run: `grep -q '${text}' ${file}`, timeoutMs: 30_000 };
}

/** The tool results the model was sent in its latest request (OpenAI wire format). */
export function toolResultsOf(body: unknown): string[] {
  if (typeof body !== 'object' || body === null || !('messages' in body) || !Array.isArray(body.messages)) return [];
  return body.messages
    .filter((message: unknown): message is { role: 'tool'; content: string } => typeof message === 'object' && message !== null && 'role' in message && message.role === 'tool')
    .map((message) => message.content);
}
