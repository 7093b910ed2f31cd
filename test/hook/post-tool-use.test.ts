import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { HOOK_FILES, readReciteEvery, runPostToolUseHook, type HookOutcome } from '../../src/hook/post-tool-use.js';
import {
  additionalContextOf,
  bashPayload,
  makeTempDir,
  postToolUsePayload,
  readFilePayload,
  readJsonLines,
  writeFilePayload,
} from './support.js';

const TASK = 'Add a --json flag to `goald status` and cover it with tests';

async function hookEnv(overrides: NodeJS.ProcessEnv = {}): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = join(await makeTempDir(), 'turn-1.hook');
  return { dir, env: { GOALD_HOOK_STATE_DIR: dir, GOALD_CONDITION: TASK, GOALD_RECITE_EVERY: '3', ...overrides } };
}

// Runs the hook once per payload, in order; returns each outcome.
function runInOrder(env: NodeJS.ProcessEnv, payloads: string[]): HookOutcome[] {
  return payloads.map((stdin) => runPostToolUseHook({ stdin, env }));
}

describe('cadence', () => {
  test('every N calls (N=3: at 3 and 6) it answers with the reflection; otherwise nothing', async () => {
    const { dir, env } = await hookEnv();
    const payloads = [
      readFilePayload('src/cli/commands/status.ts'),
      postToolUsePayload('Edit', { file_path: '/home/dev/project/src/cli/commands/status.ts', old_string: 'a', new_string: 'b' }),
      bashPayload('npm test -- status'),
      readFilePayload('test/cli/status.test.ts'),
      writeFilePayload('test/cli/status-json.test.ts'),
      bashPayload('npx vitest run test/cli'),
      bashPayload('git diff --stat'),
    ];
    const outcomes = runInOrder(env, payloads);

    expect(outcomes.map((outcome) => outcome.exitCode)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(outcomes.map((outcome) => outcome.stdout !== '')).toEqual([false, false, true, false, false, true, false]);
    const third = outcomes[2]?.stdout ?? '';
    expect(third.endsWith('\n')).toBe(true);
    const parsed = JSON.parse(third) as unknown;
    expect(parsed).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: expect.any(String) } });
    const context = additionalContextOf(third) ?? '';
    expect(context.split('\n').slice(0, 4)).toEqual([
      '[System meta · not a user message]',
      '3 tool calls since the last check. Take stock before the next one.',
      '=== ORIGINAL TASK ===',
      TASK,
    ]);
    expect(context).toContain('2. What did those 3 steps prove or rule out?');
    expect(context).not.toContain('ATTENTION');

    expect(await readJsonLines(join(dir, HOOK_FILES.toolCalls))).toEqual([
      { id: expect.any(String), name: 'Read' },
      { id: expect.any(String), name: 'Edit', filePath: 'src/cli/commands/status.ts' },
      { id: expect.any(String), name: 'Bash', command: 'npm test -- status' },
      { id: expect.any(String), name: 'Read' },
      { id: expect.any(String), name: 'Write', filePath: 'test/cli/status-json.test.ts' },
      { id: expect.any(String), name: 'Bash', command: 'npx vitest run test/cli' },
      { id: expect.any(String), name: 'Bash', command: 'git diff --stat' },
    ]);
    const checks = await readJsonLines(join(dir, HOOK_FILES.drift));
    expect(checks).toHaveLength(2);
    expect(checks[1]).toMatchObject({ toolCalls: 6, circular: 0, consecutiveHigh: 0, shouldPause: false });
    expect(existsSync(join(dir, HOOK_FILES.driftPause))).toBe(false);
    expect(existsSync(join(dir, HOOK_FILES.errors))).toBe(false);
  });

  test.each([
    [undefined, 10],
    ['', 10],
    ['0', 10],
    ['-3', 10],
    ['2.5', 10],
    ['abc', 10],
    ['1', 1],
    [' 25 ', 25],
  ])('GOALD_RECITE_EVERY=%j → every %i calls', (value, expected) => {
    expect(readReciteEvery(value)).toBe(expected);
  });

  test('without GOALD_CONDITION the reflection asks to restate the goal', async () => {
    const { env } = await hookEnv({ GOALD_CONDITION: undefined, GOALD_RECITE_EVERY: '1' });
    const [outcome] = runInOrder(env, [bashPayload('ls')]);
    const context = additionalContextOf(outcome?.stdout ?? '') ?? '';
    expect(context).toContain('restate, in one sentence, the goal you are working toward');
    expect(context).toContain('1 tool call since the last check.');
  });
});

describe('drift', () => {
  test('the same file written 3 times: the reflection leads with a warning naming it', async () => {
    const { dir, env } = await hookEnv();
    const outcomes = runInOrder(env, [
      writeFilePayload('src/cli/render-status.ts'),
      postToolUsePayload('Edit', { file_path: '/home/dev/project/src/cli/render-status.ts', old_string: 'x', new_string: 'y' }),
      postToolUsePayload('MultiEdit', { file_path: '/home/dev/project/src/cli/render-status.ts', edits: [] }),
    ]);
    const lines = (additionalContextOf(outcomes[2]?.stdout ?? '') ?? '').split('\n');
    expect(lines[0]).toBe('[System meta · not a user message]');
    expect(lines[1]).toMatch(/^ATTENTION — drift 0\.\d\d: you wrote src\/cli\/render-status\.ts 3 times in the last 10 tool calls/);
    expect(await readJsonLines(join(dir, HOOK_FILES.drift))).toEqual([
      expect.objectContaining({
        toolCalls: 3,
        circular: 1,
        repeated: { kind: 'file', value: 'src/cli/render-status.ts', count: 3 },
        consecutiveHigh: expect.any(Number),
        shouldPause: false,
      }),
    ]);
  });

  test('three high-drift checks in a row write drift-pause; two do not', async () => {
    const { dir, env } = await hookEnv();
    const ping = bashPayload('curl -s https://example.org/weather');
    const pausePath = join(dir, HOOK_FILES.driftPause);

    const first = runInOrder(env, [ping, ping, ping, ping, ping, ping]);
    expect(first.filter((outcome) => outcome.stdout !== '')).toHaveLength(2);
    expect(existsSync(pausePath)).toBe(false);

    const rest = runInOrder(env, [ping, ping, ping]);
    const context = additionalContextOf(rest[2]?.stdout ?? '') ?? '';
    expect(context).toContain('you ran `curl -s https://example.org/weather` 9 times in the last 10 tool calls');
    expect(JSON.parse(await readFile(pausePath, 'utf8'))).toMatchObject({
      toolCalls: 9,
      score: 1,
      consecutiveHigh: 3,
      shouldPause: true,
      repeated: { kind: 'command', value: 'curl -s https://example.org/weather', count: 9 },
    });
    expect((await readJsonLines(join(dir, HOOK_FILES.drift))).map((check) => (check as { consecutiveHigh: number }).consecutiveHigh)).toEqual([1, 2, 3]);
  });

  test('a low check in between resets the run', async () => {
    // N = 10, the window's size: each check sees only the calls since the previous one.
    const { dir, env } = await hookEnv({ GOALD_RECITE_EVERY: '10' });
    const pings = Array.from({ length: 10 }, () => bashPayload('curl -s https://example.org/weather'));
    // Off-topic but not repeated: at most 0.4 × objective, below the pause threshold.
    const varied = Array.from({ length: 10 }, (_, index) => bashPayload(`echo step-${index}`));
    runInOrder(env, [...pings, ...varied, ...pings, ...pings]);
    const checks = (await readJsonLines(join(dir, HOOK_FILES.drift))) as Array<{ score: number; consecutiveHigh: number }>;
    expect(checks.map((check) => check.consecutiveHigh)).toEqual([1, 0, 1, 2]);
    expect(checks[1]?.score).toBeLessThanOrEqual(0.4);
    expect(existsSync(join(dir, HOOK_FILES.driftPause))).toBe(false);
  });
});

describe('its own files', () => {
  test('reads past damaged lines of its own files: a torn or foreign drift line is skipped, a good one counts', async () => {
    const { dir, env } = await hookEnv();
    const ping = bashPayload('curl -s https://example.org/weather');
    runInOrder(env, [ping]);
    const earlier = [
      '[1,2]',
      JSON.stringify({ score: 'high' }),
      JSON.stringify({ score: 0.9, circular: 1, objective: 0.75, repeated: { kind: 'elsewhere', value: 'x', count: 3 } }),
      '{"score":0.9,"circ',
    ];
    await writeFile(join(dir, HOOK_FILES.drift), `${earlier.join('\n')}\n`);
    const outcomes = runInOrder(env, [ping, ping]);
    expect(additionalContextOf(outcomes[1]?.stdout ?? '')).toContain('ATTENTION');
    const lines = (await readFile(join(dir, HOOK_FILES.drift), 'utf8')).split('\n').filter(Boolean);
    expect(lines.slice(0, earlier.length)).toEqual(earlier);
    expect(lines).toHaveLength(earlier.length + 1);
    expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({ toolCalls: 3, consecutiveHigh: 2 });
    expect(existsSync(join(dir, HOOK_FILES.errors))).toBe(false);
  });
});

describe('never fails the tool call', () => {
  test.each([
    ['garbage', 'not json at all {'],
    ['empty', ''],
    ['a JSON array', '[1,2]'],
    ['no tool_name', JSON.stringify({ hook_event_name: 'PostToolUse', tool_input: {} })],
    ['another event', JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } })],
  ])('%s on stdin → exit 0, nothing printed, the problem logged', async (_, stdin) => {
    const { dir, env } = await hookEnv({ GOALD_RECITE_EVERY: '1' });
    expect(runPostToolUseHook({ stdin, env })).toEqual({ stdout: '', exitCode: 0 });
    const log = await readFile(join(dir, HOOK_FILES.errors), 'utf8');
    expect(log.split('\n').filter(Boolean)).toHaveLength(1);
    expect(log).toMatch(/^\d{4}-\d\d-\d\dT\S+ \S/);
    expect(existsSync(join(dir, HOOK_FILES.toolCalls))).toBe(false);
  });

  test('the log never quotes the payload (it can carry file contents)', async () => {
    const { dir, env } = await hookEnv();
    runPostToolUseHook({ stdin: 'SECRET=hunter2hunter2hunter2 {', env });
    const log = await readFile(join(dir, HOOK_FILES.errors), 'utf8');
    expect(log).toContain('stdin is not JSON: (30 bytes)');
    expect(log).not.toContain('hunter2');
  });

  test.each([
    ['unset', undefined],
    ['empty', ''],
  ])('GOALD_HOOK_STATE_DIR %s → exit 0, nothing printed, nothing written', async (_, value) => {
    const cwd = await makeTempDir();
    const before = await readdir(cwd);
    const outcome = runPostToolUseHook({
      stdin: bashPayload('ls'),
      env: { GOALD_HOOK_STATE_DIR: value, GOALD_RECITE_EVERY: '1', GOALD_CONDITION: TASK },
    });
    expect(outcome).toEqual({ stdout: '', exitCode: 0 });
    expect(await readdir(cwd)).toEqual(before);
  });

  test('a state directory that cannot be created → exit 0, nothing printed', async () => {
    const root = await makeTempDir();
    const blocker = join(root, 'a-file');
    await writeFile(blocker, 'not a directory');
    const outcome = runPostToolUseHook({
      stdin: bashPayload('ls'),
      env: { GOALD_HOOK_STATE_DIR: join(blocker, 'turn-1'), GOALD_RECITE_EVERY: '1' },
    });
    expect(outcome).toEqual({ stdout: '', exitCode: 0 });
  });
});

test('API keys from the environment are not written into the state files', async () => {
  const key = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';
  const { dir, env } = await hookEnv({ ANTHROPIC_API_KEY: key, SHORT_API_KEY: 'dummy' });
  runInOrder(env, [bashPayload(`curl -H "x-api-key: ${key}" https://api.anthropic.com/v1/models dummy`)]);
  const text = await readFile(join(dir, HOOK_FILES.toolCalls), 'utf8');
  expect(text).not.toContain(key);
  expect(text).toContain('x-api-key: [redacted:ANTHROPIC_API_KEY]');
  expect(text).toContain('models dummy');
});
