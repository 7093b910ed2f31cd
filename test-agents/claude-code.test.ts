// The claude-code adapter driving the real, pinned Claude Code offline: a fake Anthropic server scripts the
// model's replies, Claude Code runs its real tools (Write, Edit, Bash, Read) in a temp git workspace, and
// the adapter reports what happened. Run with `npm run test:agents` after scripts/install-agent-clis.sh.

import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { createClaudeCodeAgent, type ClaudeCodeAgentOptions } from '../src/agents/claude-code-agent.js';
import type { TurnInput, TurnResult } from '../src/agents/types.js';
import { CLAUDE_BIN, GOALD_BIN, claudeEnv, gatewayToken, makeTempDir, makeTurnInput, makeWorkspace, missingCli } from './helpers/agent-clis.js';
import { messagesText, startFakeAnthropic, type AnthropicScript, type FakeAnthropic } from './helpers/fake-anthropic.js';

const skip = missingCli(CLAUDE_BIN);
const MODEL = 'claude-sonnet-4-5';
const REFLECTION_MARK = '[System meta · not a user message]';

async function startFake(script: AnthropicScript): Promise<FakeAnthropic> {
  const fake = await startFakeAnthropic(script);
  onTestFinished(() => fake.close());
  return fake;
}

function makeAgent(env: NodeJS.ProcessEnv, options: Omit<ClaudeCodeAgentOptions, 'env' | 'executable'> = {}) {
  return createClaudeCodeAgent({ executable: CLAUDE_BIN, model: MODEL, killGraceMs: 2_000, ...options, env });
}

async function runTurn(agent: ReturnType<typeof makeAgent>, input: TurnInput): Promise<TurnResult> {
  return agent.runTurn(input, new AbortController().signal);
}

// The stream-json events of a turn, from its transcript (the adapter's own record of the CLI's output).
async function transcriptEvents(input: TurnInput): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(input.transcriptPath, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function transcriptHeader(input: TurnInput): Promise<string> {
  return (await readFile(input.transcriptPath, 'utf8')).split('\n')[0] ?? '';
}

describe.skipIf(skip !== null)(`claude-code adapter, real Claude Code ${skip ?? ''}`, () => {
  test('achieves a goal through its real tools; tokens as the server reported, cost as the CLI reported', async () => {
    const workspace = await makeWorkspace();
    const file = join(workspace, 'hello.txt');
    const fake = await startFake((_request, index) => {
      switch (index) {
        case 0:
          return {
            kind: 'message',
            blocks: [{ type: 'text', text: 'I will create the file.' }, { type: 'tool_use', name: 'Write', input: { file_path: file, content: 'hello\n' } }],
            usage: { input: 1_200, output: 40, cacheCreation: 300 },
          };
        case 1:
          return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Edit', input: { file_path: file, old_string: 'hello', new_string: 'hello world' } }], usage: { input: 200, output: 30, cacheRead: 1_300 } };
        case 2:
          return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'cat hello.txt > copy.txt', description: 'Copy the file' } }], usage: { input: 150, output: 25, cacheRead: 1_500 } };
        default:
          return { kind: 'message', blocks: [{ type: 'text', text: 'Done: hello.txt says hello world.' }], usage: { input: 100, output: 12, cacheRead: 1_700 } };
      }
    });
    const input = await makeTurnInput(workspace, { turnTokenLimit: 50_000 });
    const result = await runTurn(makeAgent(await claudeEnv(fake.url)), input);

    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe('completed');
    expect(await readFile(file, 'utf8')).toBe('hello world\n');
    expect(await readFile(join(workspace, 'copy.txt'), 'utf8')).toBe('hello world\n');
    expect(fake.requests).toHaveLength(4);
    expect(fake.sideRequests).toHaveLength(0);
    expect(messagesText(fake.requests[0]!)).toContain(input.prompt);
    expect(fake.requests[0]?.body.model).toBe(MODEL);

    const { input: inputTokens, output, cacheRead, cacheCreation } = fake.reported;
    const result_ = (await transcriptEvents(input)).find((event) => event.type === 'result');
    expect(result.usage).toEqual({
      inputTokens: inputTokens + cacheCreation,
      outputTokens: output,
      totalTokens: inputTokens + cacheCreation + output,
      cachedInputTokens: cacheRead,
      costUsd: result_?.total_cost_usd,
      estimated: false,
    });
    expect(result.usage.costUsd).toBeGreaterThan(0);
    expect(result.costComputed).toBeUndefined();
    expect(result.model).toBe(MODEL);
    expect(result.sessionId).toBe(result_?.session_id);
    expect(result.finalMessage).toBe('Done: hello.txt says hello world.');
    expect(result.toolCalls).toEqual([
      { name: 'Write', filePath: 'hello.txt' },
      { name: 'Edit', filePath: 'hello.txt' },
      { name: 'Bash', command: 'cat hello.txt > copy.txt' },
    ]);
  });

  test('the per-turn token limit kills the turn live, mid-turn', async () => {
    const workspace = await makeWorkspace();
    // The first call reports 60 000 input tokens; the second never answers: only the live kill ends the turn.
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo working', description: 'Say working' } }], usage: { input: 60_000, output: 20 } }
        : { kind: 'hang' },
    );
    const input = await makeTurnInput(workspace, { turnTokenLimit: 50_000 });
    const result = await runTurn(makeAgent(await claudeEnv(fake.url)), input);

    expect(result.outcome).toBe('token-limit');
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.totalTokens).toBeGreaterThanOrEqual(60_000);
    expect(fake.requests.length).toBeLessThanOrEqual(2);
  });

  test('denied tool calls: a failed turn with the denials counted, nothing written', async () => {
    const workspace = await makeWorkspace();
    const file = join(workspace, 'hello.txt');
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: file, content: 'hello\n' } }], usage: { input: 500, output: 20 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'I was not allowed to write.' }], usage: { input: 600, output: 10 } },
    );
    // Permissions as a user might leave them: default mode, Read only.
    const agent = makeAgent(await claudeEnv(fake.url), { args: ['--permission-mode', 'default', '--allowedTools', 'Read'] });
    const result = await runTurn(agent, await makeTurnInput(workspace));

    expect(result.outcome).toBe('failed');
    expect(result.permissionDenials).toBe(1);
    expect(result.error).toContain('1 tool call was denied permission (Write)');
    expect(existsSync(file)).toBe(false);
    expect(result.usage).toMatchObject({ inputTokens: 1_100, outputTokens: 30, estimated: false });
  });

  test('a plan usage limit (429 with unified rate-limit headers): usage-limited with the reset time', async () => {
    const workspace = await makeWorkspace();
    const reset = Math.floor(Date.now() / 1000) + 3 * 3600;
    const fake = await startFake(() => ({
      kind: 'error',
      status: 429,
      headers: {
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': String(reset),
        'anthropic-ratelimit-unified-representative-claim': 'five_hour',
        'anthropic-ratelimit-unified-5h-reset': String(reset),
      },
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited.' } },
    }));
    const env = await claudeEnv(fake.url, { authToken: gatewayToken() });
    const result = await runTurn(makeAgent(env), await makeTurnInput(workspace));

    expect(result.outcome).toBe('usage-limited');
    expect(result.usageLimit?.resetAt).toBe(reset * 1000);
    expect(result.usageLimit?.message).toMatch(/limit · resets /);
  });

  test('an API-key 429: usage-limited, reset unknown', async () => {
    const workspace = await makeWorkspace();
    const fake = await startFake(() => ({
      kind: 'error',
      status: 429,
      headers: { 'retry-after': '30' },
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' } },
    }));
    const result = await runTurn(makeAgent(await claudeEnv(fake.url)), await makeTurnInput(workspace));
    expect(result.outcome).toBe('usage-limited');
    expect(result.usageLimit?.resetAt).toBeNull();
  });

  test('a file that mentions a usage limit, read and quoted, pauses nothing', async () => {
    const workspace = await makeWorkspace();
    const notes = join(workspace, 'NOTES.md');
    await writeFile(notes, "Last week: You've hit your usage limit · resets 9pm (America/New_York)\nClaude AI usage limit reached|1750000000\n");
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: notes } }], usage: { input: 400, output: 15 } }
        : { kind: 'message', blocks: [{ type: 'text', text: "The notes say: You've hit your usage limit · resets 9pm (America/New_York)." }], usage: { input: 500, output: 20 } },
    );
    const result = await runTurn(makeAgent(await claudeEnv(fake.url)), await makeTurnInput(workspace));
    expect(messagesText(fake.requests[1]!)).toContain('resets 9pm');
    expect(result.outcome).toBe('completed');
    expect(result.usageLimit).toBeUndefined();
  });

  test('session resume: --session-id, then --resume with that id; the second turn continues the conversation', async () => {
    const workspace = await makeWorkspace();
    const fake = await startFake((_request, index) =>
      index === 0
        ? { kind: 'message', blocks: [{ type: 'text', text: 'First turn done.' }], usage: { input: 700, output: 10 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Second turn done.' }], usage: { input: 900, output: 15, cacheRead: 600 } },
    );
    const agent = makeAgent(await claudeEnv(fake.url), { session: 'resume' });
    const first = await makeTurnInput(workspace, { prompt: 'First prompt: look around.' });
    const firstResult = await runTurn(agent, first);
    const second = await makeTurnInput(workspace, { turn: 2, prompt: 'Second prompt: finish.' });
    const secondResult = await runTurn(agent, second);

    const id = firstResult.sessionId ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await transcriptHeader(first)).toContain(`--session-id ${id}`);
    expect(await transcriptHeader(second)).toContain(`--resume ${id}`);
    expect(await transcriptHeader(second)).not.toContain('--continue');
    expect(secondResult.sessionId).toBe(id);
    expect(fake.requests[1]?.headers['x-claude-code-session-id']).toBe(id);
    // The resumed conversation holds the first turn.
    expect(messagesText(fake.requests[1]!)).toContain('First prompt: look around.');
    expect(messagesText(fake.requests[1]!)).toContain('First turn done.');
    // Tokens and cost of the second invocation only.
    expect(secondResult.usage).toMatchObject({ inputTokens: 900, outputTokens: 15, cachedInputTokens: 600, estimated: false });
    const firstCost = firstResult.usage.costUsd ?? 0;
    const secondTotal = (await transcriptEvents(second)).find((event) => event.type === 'result')?.total_cost_usd;
    expect(secondResult.usage.costUsd).toBeCloseTo(Number(secondTotal) - firstCost, 10);
  });

  test.skipIf(!existsSync(GOALD_BIN))('goald’s PostToolUse hook: the reflection reaches the model every N tool calls', async () => {
    const workspace = await makeWorkspace();
    const bash = (command: string) => ({ type: 'tool_use' as const, name: 'Bash', input: { command, description: 'Run a step' } });
    const fake = await startFake((_request, index) =>
      index < 3
        ? { kind: 'message', blocks: [bash(`echo step-${index + 1}`)], usage: { input: 300, output: 10 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Steps done.' }], usage: { input: 300, output: 5 } },
    );
    const stateDir = await makeTempDir('goald-real-state-');
    const agent = makeAgent(await claudeEnv(fake.url), { hookCommand: [process.execPath, GOALD_BIN] });
    const result = await runTurn(agent, await makeTurnInput(workspace, { stateDir, reciteEveryToolCalls: 2, condition: 'print the three steps' }));

    expect(result.outcome).toBe('completed');
    expect(fake.requests).toHaveLength(4);
    // After tool call 1: no reflection yet; after call 2 (the cadence): the reflection, quoting the task.
    expect(messagesText(fake.requests[1]!)).not.toContain(REFLECTION_MARK);
    expect(messagesText(fake.requests[2]!)).toContain(REFLECTION_MARK);
    expect(messagesText(fake.requests[2]!)).toContain('print the three steps');
    const recorded = (await readFile(join(stateDir, 'tool-calls.jsonl'), 'utf8')).trim().split('\n');
    expect(recorded).toHaveLength(3);
    expect(await readdir(stateDir)).toContain('drift.jsonl');
  });
});
