import { chmod, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { FINAL_MESSAGE_MAX_CHARS } from '../../src/agents/cli-turn.js';
import { MAX_INLINE_PROMPT_BYTES, createCommandAgent } from '../../src/agents/command-agent.js';
import { quoteForShell } from '../../src/agents/shell-quote.js';
import { OUTPUT_TAIL_BYTES } from '../../src/process/spawn.js';
import type { TurnInput, TurnResult } from '../../src/agents/types.js';
import { GoaldError } from '../../src/errors.js';
import { waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { fixture, isProcessGone, killQuietly, makeTempDir, processStateOf } from './support.js';

// A prompt that runs code if it is ever unquoted: quotes of both kinds, $(...), backticks, newlines.
const HOSTILE_PROMPT = `Fix it's "tests"; $(touch pwned-dollar) \`touch pwned-tick\`\nline two && touch pwned-and\n'`;

async function makeInput(overrides: Partial<TurnInput> = {}): Promise<TurnInput> {
  const dir = await makeTempDir();
  return {
    goalId: 'g-123',
    turn: 4,
    condition: 'all tests pass',
    prompt: 'do the thing',
    workspace: dir,
    promptPath: join(dir, 'goal', 'turn-4.prompt.txt'),
    transcriptPath: join(dir, 'goal', 'turn-4.log'),
    timeoutMs: 0,
    turnTokenLimit: 0,
    ...overrides,
  };
}

// Runs one turn of `command`; any group it leaves behind is killed when the test finishes.
async function runCommand(
  command: string,
  overrides: Partial<TurnInput> = {},
  options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<{ result: TurnResult; input: TurnInput }> {
  const input = await makeInput(overrides);
  const agent = createCommandAgent({ command, env: options.env, killGraceMs: 300 });
  const result = await agent.runTurn(
    {
      ...input,
      onSpawn: (pid, token) => {
        onTestFinished(() => killQuietly(-pid));
        input.onSpawn?.(pid, token);
      },
    },
    options.signal ?? new AbortController().signal,
  );
  return { result, input };
}

function linesOf(result: TurnResult): string[] {
  return result.outputTail.split('\n').filter((line) => line !== '');
}

function jsonAfter(prefix: string, result: TurnResult): unknown {
  const line = linesOf(result).find((candidate) => candidate.startsWith(`${prefix} `));
  if (line === undefined) throw new Error(`no "${prefix}" line in ${result.outputTail}`);
  return JSON.parse(line.slice(prefix.length + 1));
}

describe('prompt delivery', () => {
  test('the prompt arrives on stdin and as {prompt}, quoted so that nothing in it runs', async () => {
    const { result, input } = await runCommand(`${quoteForShell(fixture('ok'))} {prompt} --then {prompt}`, {
      prompt: HOSTILE_PROMPT,
    });

    expect(result.outcome).toBe('completed');
    expect(jsonAfter('argv', result)).toEqual([HOSTILE_PROMPT, '--then', HOSTILE_PROMPT]);
    expect(jsonAfter('stdin', result)).toBe(HOSTILE_PROMPT);
    expect((await readdir(input.workspace)).filter((name) => name.startsWith('pwned'))).toEqual([]);
  });

  test('{prompt} inside single quotes is still one literal word', async () => {
    const { result } = await runCommand(`${quoteForShell(fixture('ok'))} '{prompt}'`, { prompt: HOSTILE_PROMPT });
    expect(jsonAfter('argv', result)).toEqual([HOSTILE_PROMPT]);
  });

  test('{prompt} inside double quotes is refused as a config error', () => {
    const create = () => createCommandAgent({ command: 'my-agent -p "{prompt}"' });
    expect(create).toThrow(GoaldError);
    expect(create).toThrow(/is double-quoted in/);
    try {
      create();
    } catch (error) {
      expect(error).toMatchObject({ code: 'config', hint: 'write {prompt} without quotes; goald quotes the prompt itself' });
    }
  });

  test('the prompt arrives in GOALD_PROMPT and GOALD_PROMPT_FILE, with the turn variables, in the workspace', async () => {
    // A stale GOALD_PROMPT inherited from the parent must not leak through either.
    const env = { ...process.env, GOALD_PROMPT: 'stale' };
    const { result, input } = await runCommand(quoteForShell(fixture('echo-env')), { prompt: HOSTILE_PROMPT }, { env });

    expect(result.outcome).toBe('completed');
    const report = JSON.parse(result.finalMessage) as { env: Record<string, string>; claudeCode: boolean; cwd: string };
    expect(report.env).toEqual({
      GOALD_GOAL_ID: 'g-123',
      GOALD_TURN: '4',
      GOALD_CONDITION: 'all tests pass',
      GOALD_PROMPT: HOSTILE_PROMPT,
      GOALD_PROMPT_FILE: input.promptPath,
      // The per-turn marker that finds the turn's processes after they left its group (process/escaped-processes.ts).
      GOALD_TURN_TOKEN: expect.stringMatching(/^[0-9a-f]{32}$/) as unknown,
    });
    expect(report.cwd).toBe(input.workspace);
    expect(await readFile(input.promptPath, 'utf8')).toBe(HOSTILE_PROMPT);
  });

  test('an existing prompt file is left as the caller wrote it', async () => {
    const input = await makeInput();
    await writeFile(join(input.workspace, 'saved.txt'), 'saved by the supervisor');
    const { result } = await runCommand('cat "$GOALD_PROMPT_FILE"', { promptPath: join(input.workspace, 'saved.txt') });
    expect(result.finalMessage).toBe('saved by the supervisor');
  });

  test('CLAUDECODE is scrubbed from the environment; other variables pass through', async () => {
    const { result } = await runCommand(`echo "$OTHER"; ${quoteForShell(fixture('echo-env'))}`, {}, {
      env: { ...process.env, CLAUDECODE: '1', OTHER: 'kept' },
    });
    expect(linesOf(result)[0]).toBe('kept');
    expect((JSON.parse(result.finalMessage) as { claudeCode: boolean }).claudeCode).toBe(false);
  });

  test(`a prompt over ${MAX_INLINE_PROMPT_BYTES} bytes stays out of the environment and reaches {prompt} through the file`, async () => {
    const prompt = `${'p'.repeat(200 * 1024)}'$(touch pwned)'`;
    const { result, input } = await runCommand(
      'printf %s {prompt} | wc -c; echo "env:${GOALD_PROMPT:-unset}"; wc -c < "$GOALD_PROMPT_FILE"',
      { prompt },
    );
    expect(result.outcome).toBe('completed');
    expect(linesOf(result).map((line) => line.trim())).toEqual([
      String(prompt.length),
      'env:unset',
      String(prompt.length),
    ]);
    expect((await readdir(input.workspace)).filter((name) => name.startsWith('pwned'))).toEqual([]);
  });
});

describe('usage', () => {
  test('GOALD_USAGE lines are summed exactly and are never the final message', async () => {
    const { result } = await runCommand(quoteForShell(fixture('usage')));
    expect(result.outcome).toBe('completed');
    expect(result.usage).toMatchObject({ inputTokens: 1500, outputTokens: 300, totalTokens: 1800, estimated: false });
    expect(result.usage.costUsd).toBeCloseTo(0.015, 10);
    expect(result.finalMessage).toBe('usage: reported');
  });

  test('without GOALD_USAGE, tokens are estimated as chars / 4', async () => {
    const prompt = 'x'.repeat(400);
    const { result } = await runCommand(quoteForShell(fixture('ok')), { prompt });
    const outputChars = result.outputTail.length;
    expect(result.usage).toEqual({
      inputTokens: 100,
      outputTokens: Math.ceil(outputChars / 4),
      totalTokens: 100 + Math.ceil(outputChars / 4),
      costUsd: null,
      estimated: true,
    });
    expect(result.finalMessage).toBe('ok: read 400 chars');
  });

  test('usage without cost reports a null cost', async () => {
    const { result } = await runCommand(quoteForShell(fixture('ok')), {}, {
      env: { ...process.env, OK_USAGE: '{"input_tokens":7,"output_tokens":3}' },
    });
    expect(result.usage).toEqual({ inputTokens: 7, outputTokens: 3, totalTokens: 10, costUsd: null, estimated: false });
  });
});

describe('per-turn token limit', () => {
  test('a chatty agent is killed live once its estimated output passes the limit', async () => {
    const { result, input } = await runCommand(`exec ${quoteForShell(fixture('chatty'))} forever`, {
      turnTokenLimit: 1_000,
    });

    expect(result.outcome).toBe('token-limit');
    expect(result.error).toBe('turn passed the per-turn token limit (1 000 tokens)');
    expect(Buffer.byteLength(result.outputTail)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
    const transcript = await readFile(input.transcriptPath, 'utf8');
    expect(transcript).toContain('ready\n');
    expect(transcript).toContain('y'.repeat(1023));
    expect((await stat(input.transcriptPath)).size).toBeGreaterThan(4_000);
    expect(transcript).toMatch(/killed \(token-limit\)/);
  });

  test('reported usage counts toward the limit as soon as it is printed', async () => {
    const report = 'GOALD_USAGE {"input_tokens":900,"output_tokens":200}';
    const { result } = await runCommand(`echo '${report}'; exec ${quoteForShell(fixture('forever'))}`, {
      turnTokenLimit: 1_000,
    });
    expect(result.outcome).toBe('token-limit');
    expect(result.usage).toMatchObject({ totalTokens: 1_100, estimated: false });
  });

  test('a prompt that alone passes the limit ends the turn at once', async () => {
    const { result } = await runCommand(`exec ${quoteForShell(fixture('forever'))}`, {
      prompt: 'x'.repeat(4_004),
      turnTokenLimit: 1_000,
    });
    expect(result.outcome).toBe('token-limit');
  });

  test('0 means no limit', async () => {
    const { result } = await runCommand(`${quoteForShell(fixture('chatty'))} 200000`, { turnTokenLimit: 0 });
    expect(result.outcome).toBe('completed');
    expect(result.finalMessage).toBe('chatty: done');
  });
});

describe('outcomes', () => {
  test('exit 0 is completed, without an error', async () => {
    const { result } = await runCommand('echo first; echo; echo "  the answer  "; echo');
    expect(result).toMatchObject({ outcome: 'completed', exitCode: 0, signal: null, finalMessage: 'the answer' });
    expect(result.error).toBeUndefined();
  });

  test('a non-zero exit is failed, and stderr is the final message when stdout is silent', async () => {
    const { result } = await runCommand(quoteForShell(fixture('fail')));
    expect(result).toMatchObject({
      outcome: 'failed',
      exitCode: 3,
      error: 'agent exited with code 3',
      finalMessage: 'something went wrong',
    });
  });

  test('a signal the agent did not get from us is failed', async () => {
    const { result } = await runCommand('kill -KILL $$');
    expect(result).toMatchObject({ outcome: 'failed', exitCode: null, signal: 'SIGKILL', error: 'agent was killed by SIGKILL' });
  });

  test('the final message is bounded', async () => {
    const { result } = await runCommand(`node -e "console.log('z'.repeat(10000))"`);
    expect(result.finalMessage).toHaveLength(FINAL_MESSAGE_MAX_CHARS);
  });

  test('the timeout kills the agent and its grandchild: timed-out, nothing left running', async () => {
    const input = await makeInput();
    const pidFile = join(input.workspace, 'grandchild.pid');
    const { result } = await runCommand(`${quoteForShell(fixture('fork-grandchild'))} ${quoteForShell(pidFile)}`, {
      ...input,
      // Long enough for sh and node to start and fork before it fires.
      timeoutMs: 2_000,
    });
    expect(result).toMatchObject({ outcome: 'timed-out', error: 'turn timed out after 2s' });
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    onTestFinished(() => killQuietly(grandchild));
    await waitUntilGone(grandchild, 2_000);
  });

  test('background jobs still running when the agent exits are killed, and the turn does not wait for them', async () => {
    const { result } = await runCommand('sleep 1000 & echo "job $!"; echo done');
    const job = Number(/^job (\d+)$/m.exec(result.outputTail)?.[1]);
    onTestFinished(() => killQuietly(job));
    expect(result).toMatchObject({ outcome: 'completed', finalMessage: 'done' });
    expect(await isProcessGone(job)).toBe(true);
  });

  test('a process that left the group and holds the output pipe does not keep the turn open', async () => {
    const { result } = await runCommand('setsid sleep 1000 & echo "job $!"; echo done');
    const job = Number(/^job (\d+)$/m.exec(result.outputTail)?.[1]);
    onTestFinished(() => killQuietly(job));
    expect(result).toMatchObject({ outcome: 'completed', finalMessage: 'done' });
    expect(result.durationMs).toBeLessThan(5_000);
  });

  test('aborting the signal is aborted', async () => {
    const controller = new AbortController();
    const input = await makeInput();
    // Abort once the agent runs (it printed `ready`), not at a guessed moment after the spawn.
    const abortWhenReady = (): void => {
      void waitUntil('the agent to be ready', async () => (await readFile(input.transcriptPath, 'utf8').catch(() => '')).includes('ready')).then(() =>
        controller.abort(),
      );
    };
    const { result } = await runCommand(
      `exec ${quoteForShell(fixture('forever'))}`,
      { ...input, onSpawn: abortWhenReady },
      { signal: controller.signal },
    );
    expect(result).toMatchObject({ outcome: 'aborted', error: 'turn aborted' });
  });

  test('a missing agent command is spawn-failed with a clear message', async () => {
    const { result } = await runCommand('goald-no-such-agent --model x {prompt}');
    expect(result).toMatchObject({
      outcome: 'spawn-failed',
      exitCode: 127,
      error: 'agent command not found: goald-no-such-agent (sh exited 127)',
    });
  });

  test('an agent script that is not executable is spawn-failed', async () => {
    const input = await makeInput();
    await writeFile(join(input.workspace, 'agent.sh'), '#!/bin/sh\necho hi\n');
    await chmod(join(input.workspace, 'agent.sh'), 0o644);
    const { result } = await runCommand('./agent.sh', input);
    expect(result).toMatchObject({ outcome: 'spawn-failed', exitCode: 126 });
    expect(result.error).toBe('agent command not executable: ./agent.sh (sh exited 126)');
  });

  test('a command missing later in the script is a failed turn that names it', async () => {
    const { result } = await runCommand('echo working; goald-no-such-tool');
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 127 });
    expect(result.error).toBe('agent exited with code 127: goald-no-such-tool: not found');
  });

  test('a workspace that does not exist is spawn-failed', async () => {
    const input = await makeInput();
    const { result } = await runCommand('true', { workspace: join(input.workspace, 'gone') });
    expect(result.outcome).toBe('spawn-failed');
    expect(result.error).toMatch(/the working directory .*gone does not exist/);
  });

  test('an empty command is a config error', () => {
    expect(() => createCommandAgent({ command: '  ' })).toThrow(/the agent command is empty/);
  });
});

describe('suspend and resume', () => {
  test('suspend stops the running turn (state T) and resume continues it', async () => {
    const input = await makeInput();
    const agent = createCommandAgent({ command: `exec ${quoteForShell(fixture('forever'))}`, killGraceMs: 300 });
    const controller = new AbortController();
    let pid = 0;
    const turn = agent.runTurn(
      {
        ...input,
        onSpawn: (spawned) => {
          pid = spawned;
          onTestFinished(() => killQuietly(-spawned));
        },
      },
      controller.signal,
    );
    await waitUntil('the agent to be ready', async () => (await readFile(input.transcriptPath, 'utf8').catch(() => '')).includes('ready'));

    agent.suspend?.();
    await waitUntil('the agent to stop', async () => (await processStateOf(pid)) === 'T');
    agent.resume?.();
    await waitUntil('the agent to run again', async () => !['T', null].includes(await processStateOf(pid)));

    controller.abort();
    expect((await turn).outcome).toBe('aborted');
    expect(await isProcessGone(pid)).toBe(true);
  });
});
