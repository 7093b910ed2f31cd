import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { MAX_LINE_CHARS } from '../../src/process/line-splitter.js';
import { OUTPUT_TAIL_BYTES, spawnAgentProcess, type AgentProcess, type SpawnAgentOptions } from '../../src/process/spawn.js';
import { SIGKILL_GRACE_MS } from '../../src/process/terminate-group.js';
import {
  createLineLog,
  fixture,
  isProcessGone,
  killQuietly,
  makeTempDir,
  processStateOf,
} from '../agents/support.js';
import { waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

// Starts a fixture with test defaults; whatever it leaves behind is killed when the test finishes.
async function start(
  name: string,
  args: string[] = [],
  overrides: Partial<SpawnAgentOptions> = {},
): Promise<{ agent: AgentProcess; log: ReturnType<typeof createLineLog>; dir: string; transcriptPath: string }> {
  const dir = await makeTempDir();
  const log = createLineLog();
  const transcriptPath = join(dir, 'logs', 'turn-1.log');
  const agent = spawnAgentProcess({
    command: fixture(name),
    args,
    cwd: dir,
    env: process.env,
    stdin: null,
    transcriptPath,
    timeoutMs: 0,
    killGraceMs: 300,
    onLine: log.onLine,
    ...overrides,
  });
  const pid = agent.pid;
  if (pid !== null) onTestFinished(() => killQuietly(-pid));
  return { agent, log, dir, transcriptPath };
}

// Waits for the fixture's `ready` line; fails at once if it ended first (e.g. killed while starting up).
async function waitForReady(agent: AgentProcess, log: ReturnType<typeof createLineLog>): Promise<void> {
  await Promise.race([
    log.waitFor('ready'),
    agent.done.then((result) => {
      throw new Error(`the agent ended before printing ready: ${JSON.stringify(result)}`);
    }),
  ]);
}

async function readPidFile(path: string): Promise<number> {
  await waitUntil(`${path} to be written`, async () => (await readFile(path, 'utf8').catch(() => '')) !== '');
  const pid = Number(await readFile(path, 'utf8'));
  onTestFinished(() => killQuietly(pid));
  return pid;
}

describe('spawnAgentProcess output', () => {
  test('writes the prompt to stdin, streams output to the transcript after a header, and delivers lines', async () => {
    const { agent, log, transcriptPath } = await start('ok', ['an arg'], { stdin: 'hello\nworld' });
    const result = await agent.done;

    expect(result).toMatchObject({ exitCode: 0, signal: null, terminationReason: null, spawnError: null });
    expect(log.lines).toEqual(['argv ["an arg"]', 'stdin "hello\\nworld"', 'ok: read 11 chars']);
    expect(result.outputTail).toBe(`${log.lines.join('\n')}\n`);
    const transcript = await readFile(transcriptPath, 'utf8');
    expect(transcript).toMatch(/^# goald agent transcript · started \S+ · .*ok\.mjs an arg\n/);
    expect(transcript).toContain('stdin "hello\\nworld"\nok: read 11 chars\n');
    expect(transcript).toMatch(/# goald: exited with code 0 after \d+ ms\n$/);
  });

  test('appends to an existing transcript', async () => {
    const first = await start('ok', [], { stdin: 'one' });
    await first.agent.done;
    const second = spawnAgentProcess({
      command: fixture('ok'),
      args: [],
      cwd: first.dir,
      env: process.env,
      stdin: 'two',
      transcriptPath: first.transcriptPath,
      timeoutMs: 0,
    });
    await second.done;
    const transcript = await readFile(first.transcriptPath, 'utf8');
    expect(transcript.match(/# goald agent transcript/g)).toHaveLength(2);
    expect(transcript.indexOf('stdin "one"')).toBeLessThan(transcript.indexOf('stdin "two"'));
  });

  test('gives the child an empty stdin when there is no prompt', async () => {
    const { agent, log } = await start('ok');
    await agent.done;
    expect(log.lines).toContain('stdin ""');
  });

  test('ignores EPIPE when the agent exits without reading a large stdin', async () => {
    const { agent } = await start('fail', [], { stdin: 'x'.repeat(4 * 1024 * 1024) });
    const result = await agent.done;
    expect(result).toMatchObject({ exitCode: 3, spawnError: null, terminationReason: null });
    expect(result.outputTail).toBe('something went wrong\n');
  });

  test('keeps a bounded tail in memory while the transcript gets all 2 MB', async () => {
    const { agent, log, transcriptPath } = await start('chatty');
    const result = await agent.done;

    expect(result.exitCode).toBe(0);
    expect(result.outputBytes).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    expect(Buffer.byteLength(result.outputTail)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
    expect(result.outputTail.endsWith('chatty: done\n')).toBe(true);
    expect((await stat(transcriptPath)).size).toBeGreaterThan(result.outputBytes);
    expect(log.lines).toHaveLength(2 + 2048 + 1);
  });

  test('delivers a 2 MB line without a newline cut to MAX_LINE_CHARS', async () => {
    const { agent, log } = await start('chatty', ['2097152', '--one-line']);
    await agent.done;
    expect(log.lines[0]).toBe('ready');
    expect(log.lines[1]).toHaveLength(MAX_LINE_CHARS);
    expect(log.lines.slice(2)).toEqual(['chatty: done']);
  });
});

describe('spawnAgentProcess start failures', () => {
  test('a command missing from PATH is a spawn failure, not a throw', async () => {
    const dir = await makeTempDir();
    const result = await spawnAgentProcess({
      command: 'goald-no-such-agent',
      args: [],
      cwd: dir,
      env: process.env,
      stdin: 'prompt',
      transcriptPath: join(dir, 'turn.log'),
      timeoutMs: 0,
    }).done;
    expect(result).toMatchObject({ pid: null, exitCode: null, terminationReason: null });
    expect(result.spawnError).toBe('cannot start goald-no-such-agent: not found on PATH');
    expect(await readFile(join(dir, 'turn.log'), 'utf8')).toContain('# spawn failed: cannot start goald-no-such-agent');
  });

  test('a missing path, a file that is not executable and a missing cwd each say what is wrong', async () => {
    const dir = await makeTempDir();
    const script = join(dir, 'agent.sh');
    await writeFile(script, '#!/bin/sh\necho hi\n');
    await chmod(script, 0o644);
    const run = (command: string, cwd = dir) =>
      spawnAgentProcess({
        command,
        args: [],
        cwd,
        env: process.env,
        stdin: null,
        transcriptPath: join(dir, 'turn.log'),
        timeoutMs: 0,
      }).done;

    expect((await run(join(dir, 'missing.sh'))).spawnError).toBe(`cannot start ${join(dir, 'missing.sh')}: no such file`);
    expect((await run(script)).spawnError).toBe(`cannot start ${script}: permission denied (is it an executable file?)`);
    expect((await run(fixture('ok'), join(dir, 'gone'))).spawnError).toBe(
      `cannot start ${fixture('ok')}: the working directory ${join(dir, 'gone')} does not exist`,
    );
  });

  test('an argument holding a NUL byte is a spawn failure', async () => {
    const { agent } = await start('ok', ['a\0b']);
    const result = await agent.done;
    expect(result.spawnError).toMatch(/^cannot start .*ok\.mjs: .*null bytes/);
  });
});

describe('spawnAgentProcess termination', () => {
  test('the timeout kills the group with SIGTERM and is recorded as the reason', async () => {
    const { agent } = await start('forever', [], { timeoutMs: 200 });
    const result = await agent.done;
    expect(result).toMatchObject({ terminationReason: 'timeout', signal: 'SIGTERM', exitCode: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(200);
    expect(await isProcessGone(agent.pid ?? 0)).toBe(true);
  });

  test('the first reason wins', async () => {
    const { agent, log } = await start('forever');
    await waitForReady(agent, log);
    agent.kill('token-limit');
    agent.kill('aborted');
    expect((await agent.done).terminationReason).toBe('token-limit');
  });

  test('an abort after the timeout fired keeps timeout as the reason', async () => {
    const controller = new AbortController();
    const { agent, log } = await start('ignore-sigterm', [], { signal: controller.signal });
    await waitForReady(agent, log);
    agent.kill('timeout');
    await log.waitFor('got SIGTERM');
    controller.abort();
    expect(await agent.done).toMatchObject({ terminationReason: 'timeout', signal: 'SIGKILL' });
  });

  test('aborting the signal kills the group with reason aborted', async () => {
    const controller = new AbortController();
    const { agent, log } = await start('forever', [], { signal: controller.signal, timeoutMs: 100_000_000 });
    await waitForReady(agent, log);
    controller.abort();
    expect(await agent.done).toMatchObject({ terminationReason: 'aborted', signal: 'SIGTERM' });
  });

  test('an already aborted signal starts nothing', async () => {
    const { agent } = await start('forever', [], { signal: AbortSignal.abort() });
    expect(agent.pid).toBeNull();
    expect(await agent.done).toMatchObject({ pid: null, terminationReason: 'aborted', spawnError: null });
  });

  test('a process that ignores SIGTERM gets SIGKILL after the grace period', async () => {
    const { agent, log } = await start('ignore-sigterm', [], { killGraceMs: 300 });
    await waitForReady(agent, log);
    const killedAt = performance.now();
    agent.kill('timeout');
    const result = await agent.done;
    expect(result).toMatchObject({ terminationReason: 'timeout', signal: 'SIGKILL' });
    expect(log.lines).toContain('got SIGTERM');
    expect(performance.now() - killedAt).toBeGreaterThanOrEqual(300);
  });

  test(`the default grace is SIGKILL_GRACE_MS (${SIGKILL_GRACE_MS} ms)`, async () => {
    const { agent, log } = await start('ignore-sigterm', [], { killGraceMs: undefined });
    await waitForReady(agent, log);
    const killedAt = performance.now();
    agent.kill('aborted');
    await log.waitFor('got SIGTERM');
    const result = await agent.done;
    const elapsed = performance.now() - killedAt;
    expect(result.signal).toBe('SIGKILL');
    expect(elapsed).toBeGreaterThanOrEqual(SIGKILL_GRACE_MS);
    expect(elapsed).toBeLessThan(SIGKILL_GRACE_MS + 3_000);
  }, 15_000);

  test('the timeout kills a grandchild in the group along with its parent', async () => {
    const dir = await makeTempDir();
    const pidFile = join(dir, 'grandchild.pid');
    // Long enough for node to start and fork before the timeout fires.
    const { agent, log } = await start('fork-grandchild', [pidFile], { timeoutMs: 2_000 });
    await waitForReady(agent, log);
    const grandchild = await readPidFile(pidFile);
    expect(await isProcessGone(grandchild)).toBe(false);

    const result = await agent.done;
    expect(result).toMatchObject({ terminationReason: 'timeout', signal: 'SIGTERM' });
    await waitUntilGone(grandchild, 2_000);
    await waitUntilGone(agent.pid ?? 0, 2_000);
  });

  test('a grandchild left running after the leader exits is killed before the turn ends', async () => {
    const dir = await makeTempDir();
    const pidFile = join(dir, 'grandchild.pid');
    const { agent } = await start('fork-grandchild', [pidFile, '--exit']);
    const result = await agent.done;
    const grandchild = await readPidFile(pidFile);

    expect(result).toMatchObject({ exitCode: 0, terminationReason: null, strayProcessesKilled: true });
    expect(await isProcessGone(grandchild)).toBe(true);
  });

  test('a leftover grandchild that ignores SIGTERM gets SIGKILL', async () => {
    const dir = await makeTempDir();
    const pidFile = join(dir, 'grandchild.pid');
    const { agent } = await start('fork-grandchild', [pidFile, '--exit', '--stubborn'], { killGraceMs: 200 });
    const result = await agent.done;
    const grandchild = await readPidFile(pidFile);

    expect(result).toMatchObject({ exitCode: 0, strayProcessesKilled: true });
    expect(result.durationMs).toBeGreaterThanOrEqual(200);
    expect(await isProcessGone(grandchild)).toBe(true);
  });
});

// Hostile agents: processes that left the agent's process group (setsid, a double fork, one that stops
// itself) are found by the token in their environment and killed before the turn ends.
describe('spawnAgentProcess escaped processes', () => {
  test.each([
    ['its own session (setsid)', []],
    ['a double fork, reparented to init', ['--double-fork']],
    ['a double fork that stopped itself', ['--double-fork', '--stopped']],
  ])('a process in %s is killed when the turn ends', async (_name, flags) => {
    const dir = await makeTempDir();
    const pidFile = join(dir, 'escapee.pid');
    let token = '';
    const { agent, transcriptPath } = await start('escape-group', [pidFile, ...flags], {
      onSpawn: (_pid, spawnToken) => {
        token = spawnToken;
      },
    });
    const result = await agent.done;
    const escapee = await readPidFile(pidFile);

    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(result).toMatchObject({ exitCode: 0, escapedProcessesKilled: 1 });
    await waitUntilGone(escapee, 2_000);
    expect(await readFile(transcriptPath, 'utf8')).toContain("killed 1 processes that had left the agent's process group");
  });

  test('an escapee holding the agent\'s output pipes is killed too', async () => {
    const dir = await makeTempDir();
    const pidFile = join(dir, 'escapee.pid');
    const { agent } = await start('escape-group', [pidFile, '--keep-stdio']);
    const result = await agent.done;
    const escapee = await readPidFile(pidFile);
    expect(result.escapedProcessesKilled).toBe(1);
    await waitUntilGone(escapee, 2_000);
  });

  test('the token reaches the agent as GOALD_TURN_TOKEN and differs per process', async () => {
    const tokens: string[] = [];
    for (let run = 0; run < 2; run += 1) {
      const { agent, log } = await start('echo-env', [], {
        onSpawn: (_pid, token) => tokens.push(token),
      });
      await agent.done;
      expect(log.lines.join('\n')).toContain(`"GOALD_TURN_TOKEN":"${tokens[run] ?? 'missing'}"`);
    }
    expect(tokens[0]).not.toBe(tokens[1]);
  });
});

describe('spawnAgentProcess suspend and resume', () => {
  test('suspend stops the whole group and pauses the timeout; resume continues it', async () => {
    const dir = await makeTempDir();
    const pidFile = join(dir, 'grandchild.pid');
    // Long enough for node to start and fork before the timeout fires, on a loaded machine too.
    const timeoutMs = 3_000;
    const spawnedAt = performance.now();
    const { agent, log } = await start('fork-grandchild', [pidFile], { timeoutMs });
    await waitForReady(agent, log);
    const leader = agent.pid ?? 0;
    const grandchild = await readPidFile(pidFile);
    let finished = false;
    void agent.done.then(() => (finished = true));

    agent.suspend();
    await waitUntil('the leader to stop', async () => (await processStateOf(leader)) === 'T');
    await waitUntil('the grandchild to stop', async () => (await processStateOf(grandchild)) === 'T');
    // Proving that something does not happen takes time: hold the group stopped until well past the moment
    // the timeout would have fired had it kept running.
    const suspendedAt = performance.now();
    const heldMs = spawnedAt + timeoutMs + 500 - suspendedAt;
    await new Promise((resolve) => setTimeout(resolve, heldMs));
    expect(finished).toBe(false);
    expect(await processStateOf(leader)).toBe('T');

    agent.resume();
    await waitUntil('the grandchild to continue', async () => (await processStateOf(grandchild)) !== 'T');
    const result = await agent.done;
    expect(result.terminationReason).toBe('timeout');
    expect(result.pausedMs).toBeGreaterThanOrEqual(heldMs);
    expect(result.durationMs - result.pausedMs).toBeGreaterThanOrEqual(timeoutMs);
    await waitUntilGone(grandchild, 2_000);
  });

  test('killing a suspended group still ends it with SIGTERM', async () => {
    const { agent, log } = await start('forever');
    await waitForReady(agent, log);
    agent.suspend();
    await waitUntil('the agent to stop', async () => (await processStateOf(agent.pid ?? 0)) === 'T');
    agent.kill('aborted');
    expect(await agent.done).toMatchObject({ terminationReason: 'aborted', signal: 'SIGTERM' });
  });
});
