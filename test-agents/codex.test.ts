// The codex adapter driving the real, pinned Codex offline: a fake Responses API server (a custom model
// provider in a temp CODEX_HOME) scripts the model's replies, Codex runs its real tools (apply_patch,
// exec_command) in a temp git workspace, and the adapter reports what happened. Run with
// `npm run test:agents` after scripts/install-agent-clis.sh.

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { createCodexAgent, type CodexAgentOptions } from '../src/agents/codex-agent.js';
import type { TurnInput, TurnResult } from '../src/agents/types.js';
import { CODEX_BIN, codexEnv, listCodexModels, makeTurnInput, makeWorkspace, missingCli } from './helpers/agent-clis.js';
import { offeredTools, startFakeOpenAi, type FakeOpenAi, type OpenAiScript } from './helpers/fake-openai.js';

const skip = missingCli(CODEX_BIN);
// Per-million prices for the model slug, given as the config map (the slug is not in the default table).
const PRICE = { input: 2, cachedInput: 0.5, output: 8 };

let model = '';

async function startFake(script: OpenAiScript): Promise<FakeOpenAi> {
  const fake = await startFakeOpenAi(script);
  onTestFinished(() => fake.close());
  return fake;
}

async function makeAgent(fake: FakeOpenAi, options: Omit<CodexAgentOptions, 'env' | 'executable'> = {}) {
  const env = await codexEnv(fake.baseUrl, model);
  return createCodexAgent({ executable: CODEX_BIN, model, prices: { [model]: PRICE }, killGraceMs: 2_000, ...options, env });
}

async function runTurn(agent: Awaited<ReturnType<typeof makeAgent>>, input: TurnInput): Promise<{ result: TurnResult; pid: number | null }> {
  let pid: number | null = null;
  const result = await agent.runTurn({ ...input, onSpawn: (spawned) => (pid = spawned) }, new AbortController().signal);
  return { result, pid };
}

function requestText(fake: FakeOpenAi, index: number): string {
  return JSON.stringify(fake.requests[index]?.body.input ?? []);
}

function groupIsGone(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return false;
  } catch {
    return true;
  }
}

describe.skipIf(skip !== null)(`codex adapter, real Codex ${skip ?? ''}`, () => {
  beforeAll(async () => {
    // A slug from the pinned Codex's bundled model list: with an unknown one it falls back to generic
    // metadata and warns.
    const models = await listCodexModels();
    model = models.includes('gpt-5.5') ? 'gpt-5.5' : (models[0] ?? 'gpt-5.5');
  });

  test('achieves a goal through apply_patch and exec_command; tokens as reported, cost priced with cached input apart', async () => {
    const workspace = await makeWorkspace();
    const fake = await startFake((_request, index) => {
      switch (index) {
        case 0:
          return { kind: 'response', items: [{ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n' }], usage: { input: 2_000, cached: 500, output: 40, reasoning: 10 } };
        case 1:
          return { kind: 'response', items: [{ type: 'function_call', name: 'exec_command', arguments: { cmd: 'cat hello.txt > copy.txt' } }], usage: { input: 2_500, cached: 1_800, output: 30, reasoning: 5 } };
        default:
          return { kind: 'response', items: [{ type: 'message', text: 'Done: hello.txt says hello.' }], usage: { input: 2_800, cached: 2_400, output: 12 } };
      }
    });
    const input = await makeTurnInput(workspace, { turnTokenLimit: 50_000 });
    const { result } = await runTurn(await makeAgent(fake), input);

    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe('completed');
    expect(await readFile(join(workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(await readFile(join(workspace, 'copy.txt'), 'utf8')).toBe('hello\n');
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[0]?.body.model).toBe(model);
    expect(offeredTools(fake.requests[0]!)).toEqual(expect.arrayContaining(['exec_command', 'apply_patch']));
    expect(requestText(fake, 0)).toContain(input.prompt);

    const { input: inputTokens, cached, output } = fake.reported;
    const uncached = inputTokens - cached;
    expect(result.usage).toEqual({
      inputTokens: uncached,
      cachedInputTokens: cached,
      outputTokens: output,
      totalTokens: uncached + output,
      costUsd: expect.closeTo((uncached * PRICE.input + cached * PRICE.cachedInput + output * PRICE.output) / 1e6, 12),
      estimated: false,
    });
    expect(result.costComputed).toBe(true);
    expect(result.model).toBe(model);
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.finalMessage).toBe('Done: hello.txt says hello.');
    expect(result.toolCalls).toEqual([
      { name: 'apply_patch', filePath: 'hello.txt' },
      { name: 'exec_command', command: 'cat hello.txt > copy.txt' },
    ]);
  });

  test('the per-turn token limit kills the turn live; the native binary dies with the shim', async () => {
    const workspace = await makeWorkspace();
    // A command with long output; the next request never answers: only the live kill ends the turn.
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'response', items: [{ type: 'function_call', name: 'exec_command', arguments: { cmd: 'seq 1 20000' } }], usage: { input: 1_000, output: 10 } }
        : { kind: 'hang' },
    );
    const input = await makeTurnInput(workspace, { turnTokenLimit: 5_000 });
    const { result, pid } = await runTurn(await makeAgent(fake), input);

    expect(result.outcome).toBe('token-limit');
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.totalTokens).toBeGreaterThan(5_000);
    expect(result.toolCalls).toEqual([{ name: 'exec_command', command: 'seq 1 20000' }]);
    expect(pid).not.toBeNull();
    expect(groupIsGone(pid ?? 0)).toBe(true);
  });

  test('a usage limit: usage-limited, resuming at the time Codex names', async () => {
    const workspace = await makeWorkspace();
    const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
    const fake = await startFake(() => ({
      kind: 'error',
      status: 429,
      body: { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: reset, resets_in_seconds: 7_200 } },
    }));
    const { result } = await runTurn(await makeAgent(fake), await makeTurnInput(workspace));

    expect(result.outcome).toBe('usage-limited');
    expect(result.usageLimit?.message).toMatch(/usage limit/);
    // Codex prints the reset to the minute, in its zone (TZ=UTC here); goald resumes at that minute's end.
    expect(result.usageLimit?.resetAt).toBe(Math.floor(reset / 60) * 60_000 + 60_000);
  });

  test('a 429 rate limit after retries: usage-limited, reset unknown', async () => {
    const workspace = await makeWorkspace();
    const fake = await startFake(() => ({
      kind: 'error',
      status: 429,
      body: { error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' } },
    }));
    const { result } = await runTurn(await makeAgent(fake), await makeTurnInput(workspace));
    expect(result.outcome).toBe('usage-limited');
    expect(result.usageLimit).toMatchObject({ resetAt: null });
  });

  test('command output that mentions a usage limit pauses nothing', async () => {
    const workspace = await makeWorkspace();
    await writeFile(join(workspace, 'NOTES.md'), "You've hit your usage limit. Try again at 5:08 AM.\nexceeded retry limit, last status: 429 Too Many Requests\n");
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'response', items: [{ type: 'function_call', name: 'exec_command', arguments: { cmd: 'cat NOTES.md' } }], usage: { input: 800, output: 10 } }
        : { kind: 'response', items: [{ type: 'message', text: "The notes say: You've hit your usage limit. Try again at 5:08 AM." }], usage: { input: 900, output: 20 } },
    );
    const { result } = await runTurn(await makeAgent(fake), await makeTurnInput(workspace));
    expect(requestText(fake, 1)).toContain('Try again at 5:08 AM');
    expect(result.outcome).toBe('completed');
    expect(result.usageLimit).toBeUndefined();
  });

  test('session resume: exec resume <thread_id>; the thread’s cumulative usage becomes per-turn', async () => {
    const workspace = await makeWorkspace();
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'response', items: [{ type: 'message', text: 'First turn done.' }], usage: { input: 1_000, output: 10 } }
        : { kind: 'response', items: [{ type: 'message', text: 'Second turn done.' }], usage: { input: 1_500, cached: 900, output: 20 } },
    );
    const agent = await makeAgent(fake, { session: 'resume' });
    const first = await makeTurnInput(workspace, { prompt: 'First prompt: look around.' });
    const firstRun = await runTurn(agent, first);
    const second = await makeTurnInput(workspace, { turn: 2, prompt: 'Second prompt: finish.' });
    const secondRun = await runTurn(agent, second);

    const thread = firstRun.result.sessionId ?? '';
    expect(thread).toMatch(/^[0-9a-f-]{36}$/);
    const header = (await readFile(second.transcriptPath, 'utf8')).split('\n')[0] ?? '';
    expect(header).toContain(`resume -- ${thread}`);
    expect(header).not.toContain('--last');
    expect(secondRun.result.sessionId).toBe(thread);
    expect(requestText(fake, 1)).toContain('First prompt: look around.');
    expect(requestText(fake, 1)).toContain('First turn done.');
    // Codex said 2500/900/30 for the thread after turn 2; turn 1 had 1000/0/10.
    expect(firstRun.result.usage).toMatchObject({ inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10 });
    expect(secondRun.result.usage).toMatchObject({ inputTokens: 600, cachedInputTokens: 900, outputTokens: 20, estimated: false });
  });
});
