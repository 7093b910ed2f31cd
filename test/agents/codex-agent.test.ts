// The codex adapter against a fake `codex` on PATH that replays streams recorded from the real Codex
// (test/fixtures/streams/codex-*.jsonl) and records how it was run. The real CLI is driven in
// test-agents/ (npm run test:agents).

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { MAX_ARGV_PROMPT_BYTES } from '../../src/agents/cli-turn.js';
import { buildCodexArgs, createCodexAgent, type CodexAgentOptions } from '../../src/agents/codex-agent.js';
import type { TurnInput } from '../../src/agents/types.js';
import { GoaldError } from '../../src/errors.js';
import { fakeCliEnv, makeTurnInput, readRecord, runAdapterTurn, streamPath } from './cli-fakes.js';
import { makeTempDir } from './support.js';

const THREAD = '01a22aa6-3a17-7ac1-ba5b-04e5b5374975'; // the thread of codex-resume-1/2

async function setUp(knobs: NodeJS.ProcessEnv, options: Omit<CodexAgentOptions, 'env'> = {}) {
  const record = join(await makeTempDir(), 'record.json');
  const env = fakeCliEnv({ FAKE_CLI_RECORD: record, ...knobs });
  const agent = createCodexAgent({ killGraceMs: 300, now: () => Date.UTC(2026, 10, 30, 4, 10), ...options, env });
  const run = async (overrides: Partial<TurnInput> = {}) => {
    const input = await makeTurnInput(overrides);
    const result = await runAdapterTurn(agent, input);
    return { result, input, record: await readRecord(record) };
  };
  return { agent, env, run };
}

describe('codex adapter', () => {
  test('a turn that used its tools: tokens as reported, cost priced with cached input apart', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('codex-tools.jsonl') }, { model: 'gpt-5-codex' });
    const { result, input, record } = await run();

    // 6000 input of which 600 cached: 5400 × $1.25 + 600 × $0.125 + 60 × $10, per million.
    expect(result).toMatchObject({
      outcome: 'completed',
      usage: { inputTokens: 5_400, cachedInputTokens: 600, outputTokens: 60, totalTokens: 5_460, costUsd: 0.007425, estimated: false },
      costComputed: true,
      model: 'gpt-5-codex',
      sessionId: '01a22aa6-310a-7142-925c-fe63dc924cfa',
      finalMessage: 'All done.',
      toolCalls: [
        { name: 'apply_patch', filePath: '/tmp/explore/ws/hello.txt' },
        { name: 'exec_command', command: 'cat hello.txt && echo done > done.txt' },
      ],
    });
    expect(record.argv).toEqual(['exec', '--json', '--sandbox', 'workspace-write', '--model', 'gpt-5-codex', '--', input.prompt]);
    // stdin is /dev/null: `codex exec` would wait forever on an open pipe.
    expect(record.stdin).toBe('');
    expect(record.env.CLAUDECODE).toBeUndefined();
  });

  test('an unknown model: no cost (not computed), unless the price map names it', async () => {
    const unknown = await (await setUp({ FAKE_CLI_STDOUT: streamPath('codex-tools.jsonl') }, { model: 'gpt-5.5' })).run();
    expect(unknown.result.usage.costUsd).toBeNull();
    expect(unknown.result.costComputed).toBeUndefined();

    const prices = { 'gpt-5.5': { input: 2, cachedInput: 0.2, output: 16 } };
    const priced = await (await setUp({ FAKE_CLI_STDOUT: streamPath('codex-tools.jsonl') }, { model: 'gpt-5.5', prices })).run();
    expect(priced.result.usage.costUsd).toBe((5_400 * 2 + 600 * 0.2 + 60 * 16) / 1e6);
    expect(priced.result.costComputed).toBe(true);
  });

  test('agent.args: a sandbox of the user’s replaces the default; --last and resume are refused', () => {
    expect(buildCodexArgs({ args: ['--full-auto'], model: null, resumeThreadId: null })).toEqual(['exec', '--json', '--full-auto', '--']);
    expect(buildCodexArgs({ args: ['-s', 'read-only'], model: null, resumeThreadId: null })).toEqual(['exec', '--json', '-s', 'read-only', '--']);
    expect(buildCodexArgs({ args: ['-m', 'o3'], model: 'gpt-5', resumeThreadId: 'T' })).toEqual([
      'exec', '--json', '--sandbox', 'workspace-write', '-m', 'o3', 'resume', '--', 'T',
    ]);
    for (const flag of ['--last', 'resume', 'exec']) expect(() => createCodexAgent({ args: [flag] })).toThrow(GoaldError);
  });

  test("inside goald's sandbox Codex's own is off (it cannot nest there), unless agent.args choose one", () => {
    expect(buildCodexArgs({ args: [], model: null, resumeThreadId: null, insideSandbox: true })).toEqual(['exec', '--json', '--sandbox', 'danger-full-access', '--']);
    expect(buildCodexArgs({ args: [], model: null, resumeThreadId: null, insideSandbox: false })).toEqual(['exec', '--json', '--sandbox', 'workspace-write', '--']);
    expect(buildCodexArgs({ args: ['-s', 'read-only'], model: null, resumeThreadId: null, insideSandbox: true })).toEqual(['exec', '--json', '-s', 'read-only', '--']);
  });

  test('session resume: exec resume <thread_id>, and the thread’s cumulative usage becomes per-turn', async () => {
    const { run, env } = await setUp({ FAKE_CLI_STDOUT: streamPath('codex-resume-1.jsonl') }, { session: 'resume', model: 'gpt-5-codex' });
    const first = await run();
    expect(first.record.argv).not.toContain('resume');
    expect(first.result.usage).toMatchObject({ inputTokens: 5_400, cachedInputTokens: 600, outputTokens: 60 });

    env.FAKE_CLI_STDOUT = streamPath('codex-resume-2.jsonl');
    const second = await run();
    expect(second.record.argv).toEqual(['exec', '--json', '--sandbox', 'workspace-write', '--model', 'gpt-5-codex', 'resume', '--', THREAD, second.input.prompt]);
    // Thread totals 10000/1000/100 minus the first turn's 6000/600/60.
    expect(second.result.usage).toMatchObject({ inputTokens: 3_600, cachedInputTokens: 400, outputTokens: 40, totalTokens: 3_640 });
    expect(second.result.sessionId).toBe(THREAD);
  });

  test('fresh threads (the default): never resume, never subtract', async () => {
    const { run, env } = await setUp({ FAKE_CLI_STDOUT: streamPath('codex-resume-1.jsonl') });
    await run();
    env.FAKE_CLI_STDOUT = streamPath('codex-tools.jsonl');
    const { record, result } = await run();
    expect(record.argv).not.toContain('resume');
    expect(result.usage.inputTokens).toBe(5_400);
  });

  test('a usage limit: usage-limited, the reset read in the CLI’s zone', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('codex-usage-limit.jsonl'), FAKE_CLI_EXIT: '1', TZ: 'America/New_York' });
    const { result } = await run();
    expect(result.outcome).toBe('usage-limited');
    expect(result.usageLimit?.resetAt).toBe(Date.UTC(2026, 11, 2, 6, 11) + 60_000);
    expect(result.usage.estimated).toBe(true);
  });

  test('command output that mentions a limit does not pause anything', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('codex-tool-output-mentions-limit.jsonl') });
    const { result } = await run();
    expect(result.outcome).toBe('completed');
  });

  test('turn.failed for another reason is a failed turn with Codex’s message', async () => {
    const stream = join(await makeTempDir(), 'failed.jsonl');
    await writeFile(stream, '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 500 Internal Server Error"}}\n');
    const { run } = await setUp({ FAKE_CLI_STDOUT: stream, FAKE_CLI_EXIT: '1', FAKE_CLI_STDERR: 'Reading additional input from stdin...\n' });
    const { result } = await run();
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 1 });
    expect(result.error).toBe('codex exited with code 1: exceeded retry limit, last status: 500 Internal Server Error');
  });

  test('the per-turn token limit kills the turn live, from the items’ text', async () => {
    const lines = (await readFile(streamPath('codex-tools.jsonl'), 'utf8')).split('\n').slice(0, 6);
    const big = JSON.stringify({
      type: 'item.completed',
      item: { id: 'item_9', type: 'command_execution', command: "/bin/bash -lc 'seq 1 4000'", aggregated_output: 'x'.repeat(8_000), exit_code: 0, status: 'completed' },
    });
    const partial = join(await makeTempDir(), 'partial.jsonl');
    await writeFile(partial, `${[...lines, big].join('\n')}\n`);
    const { run } = await setUp({ FAKE_CLI_STDOUT: partial, FAKE_CLI_HANG: '1' });
    const { result } = await run({ turnTokenLimit: 1_000 });
    expect(result.outcome).toBe('token-limit');
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.totalTokens).toBeGreaterThan(1_000);
    expect(result.toolCalls?.map((call) => call.command ?? call.filePath)).toEqual(['/tmp/explore/ws/hello.txt', 'cat hello.txt && echo done > done.txt', 'seq 1 4000']);
  });

  test('a prompt too big for argv goes on stdin, as `-`', async () => {
    const prompt = `${'x'.repeat(MAX_ARGV_PROMPT_BYTES)}\nDo it.`;
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('codex-tools.jsonl') });
    const { record } = await run({ prompt });
    expect(record.stdin).toBe(prompt);
    expect(record.argv.slice(-2)).toEqual(['--', '-']);
  });
});
