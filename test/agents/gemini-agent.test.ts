import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { MAX_ARGV_PROMPT_BYTES } from '../../src/agents/cli-turn.js';
import { buildGeminiArgs, createGeminiAgent } from '../../src/agents/gemini-agent.js';
import { fakeCliEnv, makeTurnInput, readRecord, runAdapterTurn, streamPath } from './cli-fakes.js';
import { makeTempDir } from './support.js';

async function runGemini(
  knobs: NodeJS.ProcessEnv,
  options: { args?: string[]; model?: string | null; input?: Parameters<typeof makeTurnInput>[0] } = {},
) {
  const record = join(await makeTempDir(), 'record.json');
  const input = await makeTurnInput(options.input);
  const agent = createGeminiAgent({ args: options.args, model: options.model, env: fakeCliEnv({ FAKE_CLI_RECORD: record, ...knobs }), killGraceMs: 300 });
  const result = await runAdapterTurn(agent, input);
  return { result, input, agent, record: await readRecord(record) };
}

describe('gemini adapter', () => {
  test('a successful turn: tokens, model, session, tool calls and the response as reported', async () => {
    const { result, input, record } = await runGemini({ FAKE_CLI_STDOUT: streamPath('gemini-success.json'), FAKE_CLI_STDERR: 'Loaded cached credentials.\n' });

    expect(result).toMatchObject({
      outcome: 'completed',
      exitCode: 0,
      usage: { inputTokens: 191_965, outputTokens: 5_825, totalTokens: 197_790, costUsd: null, estimated: false },
      model: 'gemini-2.5-pro',
      sessionId: '5c1f8a0e-2b7d-4f3a-9e61-0d4c2b8a7f19',
      finalMessage: expect.stringMatching(/^I added the `--json` flag to `goald status`/),
    });
    expect(result.error).toBeUndefined();
    expect(result.toolCalls?.map((call) => call.name)).toEqual(['read_file', 'read_file', 'replace', 'replace', 'run_shell_command', 'run_shell_command']);
    expect(record.argv).toEqual(['-p', input.prompt, '--output-format', 'json']);
    expect(record.stdin).toBe('');
    expect(record.cwd).toBe(await realpath(input.workspace));
    expect(record.env).toMatchObject({ GOALD_GOAL_ID: 'g-7', GOALD_TURN: '2', GOALD_CONDITION: input.condition, GOALD_PROMPT_FILE: input.promptPath });
    expect(record.env.CLAUDECODE).toBeUndefined();
  });

  test('agent.args follow goald’s own; yolo only when configured; the model when known', async () => {
    const { record, agent } = await runGemini(
      { FAKE_CLI_STDOUT: streamPath('gemini-success.json') },
      { args: ['--approval-mode', 'yolo'], model: 'gemini-2.5-pro' },
    );
    expect(record.argv.slice(2)).toEqual(['--output-format', 'json', '--model', 'gemini-2.5-pro', '--approval-mode', 'yolo']);
    expect(agent.model).toBe('gemini-2.5-pro');
    expect(buildGeminiArgs('p', ['-m', 'x'], 'gemini-2.5-pro')).toEqual(['-p', 'p', '--output-format', 'json', '-m', 'x']);
    expect(buildGeminiArgs('p', [], null)).not.toContain('--approval-mode');
  });

  test('the CLI’s error object fails the turn with its message', async () => {
    const { result } = await runGemini({ FAKE_CLI_STDOUT: streamPath('gemini-auth-error.json'), FAKE_CLI_EXIT: '41' });
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 41, sessionId: 'b2b90938-611f-4bd0-adf6-829e14549653' });
    expect(result.error).toMatch(/^gemini exited with code 41: Error: Please set an Auth method/);
    // No stats: tokens fall back to the estimate.
    expect(result.usage.estimated).toBe(true);
  });

  test('a quota error is a usage limit, not a failure', async () => {
    const { result } = await runGemini({ FAKE_CLI_STDOUT: streamPath('gemini-quota.json'), FAKE_CLI_EXIT: '1' });
    expect(result).toMatchObject({
      outcome: 'usage-limited',
      usageLimit: { resetAt: null, message: 'TerminalQuotaError: You have exhausted your daily quota on this model.' },
    });
  });

  test('a crash without JSON: failed, with the last line of output, tokens estimated', async () => {
    const { result } = await runGemini({ FAKE_CLI_STDERR: 'Error: Cannot find module \'@google/gemini-cli-core\'\n', FAKE_CLI_EXIT: '1' });
    expect(result.outcome).toBe('failed');
    expect(result.error).toBe("gemini exited with code 1: Error: Cannot find module '@google/gemini-cli-core'");
    expect(result.usage).toMatchObject({ estimated: true, costUsd: null });
    expect(result.toolCalls).toEqual([]);
  });

  test('a prompt too big for argv goes on stdin', async () => {
    const prompt = `${'x'.repeat(MAX_ARGV_PROMPT_BYTES)}\nDo it.`;
    const { record } = await runGemini({ FAKE_CLI_STDOUT: streamPath('gemini-success.json') }, { input: { prompt } });
    expect(record.stdin).toBe(prompt);
    expect(record.argv.slice(0, 2)).toEqual(['-p', 'Carry out the instructions above.']);
  });

  test('a missing executable is spawn-failed', async () => {
    const agent = createGeminiAgent({ executable: 'gemini-does-not-exist', env: fakeCliEnv() });
    const result = await runAdapterTurn(agent, await makeTurnInput());
    expect(result).toMatchObject({ outcome: 'spawn-failed', error: 'cannot start gemini-does-not-exist: not found on PATH' });
  });
});

test('session "resume" is a config error: Gemini CLI cannot resume by id', () => {
  expect(() => createGeminiAgent({ session: 'resume' })).toThrow(/agent\.session: "resume" is not supported by the gemini adapter/);
  expect(createGeminiAgent({ session: 'fresh' }).name).toBe('gemini');
});
