import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildAiderArgs, createAiderAgent } from '../../src/agents/aider-agent.js';
import { MAX_ARGV_PROMPT_BYTES } from '../../src/agents/cli-turn.js';
import { fakeCliEnv, makeTurnInput, readRecord, runAdapterTurn, streamPath } from './cli-fakes.js';
import { makeTempDir } from './support.js';

async function runAider(
  knobs: NodeJS.ProcessEnv,
  options: { args?: string[]; model?: string | null; input?: Parameters<typeof makeTurnInput>[0] } = {},
) {
  const record = join(await makeTempDir(), 'record.json');
  const input = await makeTurnInput(options.input);
  const agent = createAiderAgent({ args: options.args, model: options.model, env: fakeCliEnv({ FAKE_CLI_RECORD: record, ...knobs }), killGraceMs: 300 });
  const started = Date.now();
  const result = await runAdapterTurn(agent, input);
  return { result, input, agent, record: await readRecord(record), elapsedMs: Date.now() - started };
}

describe('aider adapter', () => {
  test('a recorded session: tokens summed, the session cost, edits as tool calls, model, final message', async () => {
    const { result, input, record } = await runAider({ FAKE_CLI_STDOUT: streamPath('aider-session.txt') });
    expect(result).toMatchObject({
      outcome: 'completed',
      exitCode: 0,
      usage: { inputTokens: 26_000, outputTokens: 1_556, totalTokens: 27_556, costUsd: 0.06, estimated: false },
      model: 'anthropic/claude-sonnet-4-20250514',
      finalMessage: 'The status command now prints one JSON object per goal with `--json`.',
      toolCalls: [
        { name: 'edit', filePath: 'src/cli/commands/status.ts' },
        { name: 'edit', filePath: 'test/cli/status.test.ts' },
      ],
    });
    expect(record.argv).toEqual(['--message', input.prompt, '--yes-always', '--no-stream', '--no-pretty']);
    expect(record.env).toMatchObject({ COLUMNS: '4096', GOALD_TURN: '2', GOALD_PROMPT_FILE: input.promptPath });
    expect(record.env.CLAUDECODE).toBeUndefined();
  });

  test('without prices: tokens and no cost', async () => {
    const { result } = await runAider({ FAKE_CLI_STDOUT: streamPath('aider-no-cost.txt') });
    expect(result.usage).toEqual({ inputTokens: 4_800, outputTokens: 946, totalTokens: 5_746, costUsd: null, estimated: false });
  });

  test('agent.args and the model are passed on', async () => {
    const { record, agent } = await runAider(
      { FAKE_CLI_STDOUT: streamPath('aider-no-cost.txt') },
      { args: ['--no-auto-commits'], model: 'sonnet' },
    );
    expect(record.argv.slice(2)).toEqual(['--yes-always', '--no-stream', '--no-pretty', '--model', 'sonnet', '--no-auto-commits']);
    expect(agent.model).toBe('sonnet');
    expect(buildAiderArgs('p', '/f', ['--model=gpt-4o'], 'sonnet')).not.toContain('sonnet');
  });

  test('the per-turn token limit kills the turn live, on a usage report', async () => {
    // The fake prints the recorded session, whose first report (12k + 1.2k) passes the limit, then hangs.
    const { result, elapsedMs } = await runAider(
      { FAKE_CLI_STDOUT: streamPath('aider-session.txt'), FAKE_CLI_HANG: '1' },
      { input: { turnTokenLimit: 10_000 } },
    );
    expect(result.outcome).toBe('token-limit');
    expect(result.error).toBe('turn passed the per-turn token limit (10000 tokens)');
    expect(result.usage.totalTokens).toBeGreaterThan(10_000);
    expect(elapsedMs).toBeLessThan(10_000);
  });

  test('a rate limit as the last model call is a usage limit', async () => {
    const dir = await makeTempDir();
    const output = join(dir, 'out.txt');
    await writeFile(
      output,
      'Aider v0.86.1\nlitellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}\nRetrying in 0.2 seconds...\nlitellm.RateLimitError: AnthropicException - rate_limit_error\n',
    );
    const { result } = await runAider({ FAKE_CLI_STDOUT: output, FAKE_CLI_EXIT: '1' });
    expect(result).toMatchObject({
      outcome: 'usage-limited',
      usageLimit: { resetAt: null, message: 'litellm.RateLimitError: AnthropicException - rate_limit_error' },
    });
  });

  test('a failing aider: failed, with its last line, tokens estimated', async () => {
    const { result } = await runAider({ FAKE_CLI_STDERR: 'aider: error: unrecognized arguments: --bogus\n', FAKE_CLI_EXIT: '2' });
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 2, error: 'aider exited with code 2: aider: error: unrecognized arguments: --bogus' });
    expect(result.usage.estimated).toBe(true);
  });

  test('a prompt too big for argv is read from the prompt file', async () => {
    const prompt = 'y'.repeat(MAX_ARGV_PROMPT_BYTES + 1);
    const { record, input } = await runAider({ FAKE_CLI_STDOUT: streamPath('aider-no-cost.txt') }, { input: { prompt } });
    expect(record.argv.slice(0, 2)).toEqual(['--message-file', input.promptPath]);
  });
});

test('session "resume" is a config error: aider has no session id', () => {
  expect(() => createAiderAgent({ session: 'resume' })).toThrow(/agent\.session: "resume" is not supported by the aider adapter/);
  expect(createAiderAgent({ session: 'fresh' }).name).toBe('aider');
});
