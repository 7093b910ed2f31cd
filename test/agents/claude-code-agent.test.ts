// The claude-code adapter against a fake `claude` on PATH that replays streams recorded from the real
// Claude Code (test/fixtures/streams/claude-*.jsonl) and records how it was run. The real CLI is driven in
// test-agents/ (npm run test:agents).

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { MAX_ARGV_PROMPT_BYTES } from '../../src/agents/cli-turn.js';
import { buildClaudeFlags, createClaudeCodeAgent, type ClaudeCodeAgentOptions } from '../../src/agents/claude-code-agent.js';
import type { TurnInput } from '../../src/agents/types.js';
import { GoaldError } from '../../src/errors.js';
import { fakeCliEnv, makeTurnInput, readRecord, runAdapterTurn, streamPath } from './cli-fakes.js';
import { makeTempDir } from './support.js';

const SESSION = '0b6f3c1e-5a8d-4c2b-9e47-3f1a2b4c5d6e'; // the id claude-max-turns/claude-resume were recorded with

async function setUp(knobs: NodeJS.ProcessEnv, options: Omit<ClaudeCodeAgentOptions, 'env'> = {}) {
  const record = join(await makeTempDir(), 'record.json');
  const env = fakeCliEnv({ FAKE_CLI_RECORD: record, ...knobs });
  const agent = createClaudeCodeAgent({ killGraceMs: 300, now: () => Date.UTC(2026, 10, 30, 4, 10), ...options, env });
  const run = async (overrides: Partial<TurnInput> = {}) => {
    const input = await makeTurnInput(overrides);
    const result = await runAdapterTurn(agent, input);
    return { result, input, record: await readRecord(record) };
  };
  return { agent, env, run };
}

describe('claude-code adapter', () => {
  test('a turn that used its tools: tokens and cost as reported, tool calls, session, model, answer', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-tools.jsonl') });
    // A limit above the turn's total: the live estimate must not kill it early.
    const { result, input, record } = await run({ turnTokenLimit: 4_000 });

    expect(result).toMatchObject({
      outcome: 'completed',
      exitCode: 0,
      usage: { inputTokens: 3_700, outputTokens: 90, totalTokens: 3_790, cachedInputTokens: 900, costUsd: 0.01678, estimated: false },
      model: 'claude-opus-5-5',
      finalMessage: 'All done.',
      toolCalls: [
        { name: 'Write', filePath: '/tmp/explore/ws/hello.txt' },
        { name: 'Bash', command: 'cat hello.txt && echo done > done.txt' },
      ],
    });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.error).toBeUndefined();
    expect(result.permissionDenials).toBeUndefined();
    expect(result.costComputed).toBeUndefined();
    expect(record.argv).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash Write Edit Read',
      '--',
      input.prompt,
    ]);
    // No stdin at all (/dev/null): it reads as empty at once.
    expect(record.stdin).toBe('');
    expect(record.env.CLAUDECODE).toBeUndefined();
    expect(record.env).toMatchObject({ GOALD_GOAL_ID: 'g-7', GOALD_TURN: '2', GOALD_PROMPT_FILE: input.promptPath });
  });

  test('agent.args replace the permission defaults they cover, and follow them otherwise', () => {
    const flags = (args: string[], model: string | null = null) => buildClaudeFlags({ args, model, session: null, hookSettings: null });
    expect(flags(['--permission-mode', 'plan'])).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash Write Edit Read', '--permission-mode', 'plan']);
    expect(flags(['--allowedTools', 'Read'])).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits', '--allowedTools', 'Read']);
    expect(flags(['--dangerously-skip-permissions'])).not.toContain('--permission-mode');
    expect(flags([], 'claude-sonnet-4-5')).toContain('--model');
    expect(flags(['--model', 'x'], 'claude-sonnet-4-5').filter((word) => word === '--model')).toHaveLength(1);
    // Never skips permissions by default.
    expect(flags([])).not.toContain('--dangerously-skip-permissions');
  });

  test.each([['--continue'], ['-c'], ['--resume'], ['--session-id=abc'], ['--output-format']])('agent.args %s is refused', (flag) => {
    expect(() => createClaudeCodeAgent({ args: [flag] })).toThrow(GoaldError);
  });

  test('denied tool calls fail the turn, counted, with a hint about the permission flags', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-permission-denied.jsonl') });
    const { result } = await run();
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 0, permissionDenials: 2 });
    expect(result.error).toContain('2 tool calls were denied permission (Write, Bash)');
    expect(result.error).toContain('agent.args');
    expect(result.error).toContain('--allowedTools');
    // Tokens are still counted.
    expect(result.usage.totalTokens).toBe(3_790);
  });

  test('exit 1 on max turns is a failed turn with Claude Code’s reason', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-max-turns.jsonl'), FAKE_CLI_EXIT: '1' });
    const { result } = await run();
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 1, usage: { totalTokens: 1_050, costUsd: 0.005 } });
    expect(result.error).toBe('claude exited with code 1: Reached maximum number of turns (1)');
  });

  test('a usage limit: usage-limited with the reset time of the rate_limit_event', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-usage-limit.jsonl'), FAKE_CLI_EXIT: '1' });
    const { result } = await run();
    expect(result).toMatchObject({
      outcome: 'usage-limited',
      usageLimit: { resetAt: 1_796_191_850_000, message: "You've hit your 5-hour limit · resets Dec 2, 1:10am (America/New_York)" },
    });
  });

  test('a file that mentions a usage limit does not pause anything', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-tool-output-mentions-limit.jsonl') });
    const { result } = await run();
    expect(result.outcome).toBe('completed');
    expect(result.usageLimit).toBeUndefined();
  });

  test('the per-turn token limit kills the turn live, from the assistant events’ usage', async () => {
    const lines = (await readFile(streamPath('claude-tools.jsonl'), 'utf8')).split('\n');
    const partial = join(await makeTempDir(), 'partial.jsonl');
    // init and the first API call (1000 input tokens); then the fake hangs like a CLI in mid-turn.
    await writeFile(partial, `${lines.slice(0, 3).join('\n')}\n`);
    const { run } = await setUp({ FAKE_CLI_STDOUT: partial, FAKE_CLI_HANG: '1' });
    const { result } = await run({ turnTokenLimit: 500 });
    expect(result.outcome).toBe('token-limit');
    expect(result.error).toContain('per-turn token limit (500 tokens)');
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.totalTokens).toBeGreaterThanOrEqual(1_000);
    expect(result.toolCalls).toEqual([{ name: 'Write', filePath: '/tmp/explore/ws/hello.txt' }]);
  });

  test('session resume: --session-id on the first turn, --resume with that id after; cost of this invocation only', async () => {
    const { run, env } = await setUp(
      { FAKE_CLI_STDOUT: streamPath('claude-max-turns.jsonl'), FAKE_CLI_EXIT: '1' },
      { session: 'resume', newSessionId: () => SESSION },
    );
    const first = await run();
    expect(first.record.argv).toEqual(expect.arrayContaining(['--session-id', SESSION]));
    expect(first.record.argv).not.toContain('--resume');
    expect(first.result.sessionId).toBe(SESSION);

    env.FAKE_CLI_STDOUT = streamPath('claude-resume.jsonl');
    env.FAKE_CLI_EXIT = '0';
    const second = await run();
    expect(second.record.argv).toEqual(expect.arrayContaining(['--resume', SESSION]));
    expect(second.record.argv).not.toContain('--session-id');
    expect(second.record.argv).not.toContain('--continue');
    // total_cost_usd (0.01678) counts the whole session; this invocation cost 0.01178.
    expect(second.result.usage.costUsd).toBeCloseTo(0.01178, 10);
    expect(second.result.usage).toMatchObject({ inputTokens: 2_700, outputTokens: 40, cachedInputTokens: 900 });
  });

  test('after --resume without a per-invocation cost, the previous session total is subtracted', async () => {
    const resumed = (await readFile(streamPath('claude-resume.jsonl'), 'utf8')).replace(/,"model_usage_since_last_result":\{.*\}\}\n?$/, '}\n');
    const stream = join(await makeTempDir(), 'resume-without-since.jsonl');
    await writeFile(stream, resumed);
    const { run, env } = await setUp(
      { FAKE_CLI_STDOUT: streamPath('claude-max-turns.jsonl'), FAKE_CLI_EXIT: '1' },
      { session: 'resume', newSessionId: () => SESSION },
    );
    await run();
    env.FAKE_CLI_STDOUT = stream;
    env.FAKE_CLI_EXIT = '0';
    const { result } = await run();
    expect(result.usage.costUsd).toBeCloseTo(0.01678 - 0.005, 10);
  });

  test('fresh sessions (the default) pass no session flag', async () => {
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-tools.jsonl') });
    await run();
    const { record } = await run();
    for (const flag of ['--session-id', '--resume', '--continue']) expect(record.argv).not.toContain(flag);
  });

  test('goald’s PostToolUse hook goes in through --settings, its state directory through the env', async () => {
    const stateDir = await makeTempDir();
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-tools.jsonl') }, { hookCommand: ['/usr/bin/node', '/opt/goald/bin.js'] });
    const { record, input } = await run({ stateDir, reciteEveryToolCalls: 3 });
    const settings = record.argv[record.argv.indexOf('--settings') + 1] ?? '';
    expect(JSON.parse(settings)).toMatchObject({
      hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: '/usr/bin/node /opt/goald/bin.js hook post-tool-use' }] }] },
    });
    expect(record.env).toMatchObject({ GOALD_HOOK_STATE_DIR: stateDir, GOALD_RECITE_EVERY: '3', GOALD_CONDITION: input.condition });

    const withoutDir = await run();
    expect(withoutDir.record.argv).not.toContain('--settings');
  });

  test('a prompt too big for argv goes on stdin', async () => {
    const prompt = `${'x'.repeat(MAX_ARGV_PROMPT_BYTES)}\nDo it.`;
    const { run } = await setUp({ FAKE_CLI_STDOUT: streamPath('claude-tools.jsonl') });
    const { record } = await run({ prompt });
    expect(record.stdin).toBe(prompt);
    expect(record.argv).not.toContain('--');
    expect(record.argv.at(-1)).toBe('Bash Write Edit Read');
  });

  test('a missing executable is spawn-failed', async () => {
    const agent = createClaudeCodeAgent({ executable: 'goald-no-such-claude', env: { PATH: '/nonexistent' } });
    const result = await runAdapterTurn(agent, await makeTurnInput());
    expect(result.outcome).toBe('spawn-failed');
    expect(result.error).toContain('not found on PATH');
  });
});
