import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, onTestFinished, test } from 'vitest';
import { createLineSplitter } from '../../src/process/line-splitter.js';
import { spawnGroupLeader } from '../../src/process/spawn.js';
import { terminateGroup } from '../../src/process/terminate-group.js';
import { createLineLog, fixture, isProcessGone, killQuietly, makeTempDir, processStateOf } from '../agents/support.js';
import { waitUntil } from '../helpers/wait.js';

// Long enough that a group ending within it cannot have needed SIGKILL, even on a loaded machine.
const LONG_GRACE_MS = 10_000;

// Starts a fixture leading its own group and waits for its `ready`; the group is killed when the test ends.
async function startGroup(name: string, args: string[] = []): Promise<{ pgid: number; log: ReturnType<typeof createLineLog> }> {
  const log = createLineLog();
  const child = spawnGroupLeader(fixture(name), args, { cwd: await makeTempDir(), env: process.env, stdin: 'ignore' });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error(`${name} did not start`);
  onTestFinished(() => killQuietly(-pgid));
  const splitter = createLineSplitter(log.onLine);
  child.stdout.on('data', (chunk: Buffer) => splitter.push(chunk.toString('utf8')));
  child.stderr.resume();
  await log.waitFor('ready');
  return { pgid, log };
}

async function readPidFile(path: string): Promise<number> {
  return Number(await readFile(path, 'utf8'));
}

describe('terminateGroup', () => {
  test('a group that ends on SIGTERM is terminated without SIGKILL', async () => {
    const { pgid } = await startGroup('forever');
    const started = performance.now();
    expect(await terminateGroup(pgid, { graceMs: LONG_GRACE_MS })).toBe('terminated');
    expect(performance.now() - started).toBeLessThan(LONG_GRACE_MS);
    expect(await isProcessGone(pgid)).toBe(true);
  });

  test('a group that ignores SIGTERM gets SIGKILL once the grace has passed', async () => {
    const { pgid, log } = await startGroup('ignore-sigterm');
    const started = performance.now();
    expect(await terminateGroup(pgid, { graceMs: 300 })).toBe('killed');
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(await isProcessGone(pgid)).toBe(true);
    await log.waitFor('got SIGTERM');
  });

  test('a stopped group is continued, so it acts on SIGTERM instead of waiting for SIGKILL', async () => {
    const { pgid } = await startGroup('forever');
    process.kill(-pgid, 'SIGSTOP');
    await waitUntil('the group to stop', async () => (await processStateOf(pgid)) === 'T');
    expect(await terminateGroup(pgid, { graceMs: LONG_GRACE_MS })).toBe('terminated');
    expect(await isProcessGone(pgid)).toBe(true);
  });

  test('a grandchild in the group dies with its parent', async () => {
    const pidFile = join(await makeTempDir(), 'grandchild.pid');
    const { pgid } = await startGroup('fork-grandchild', [pidFile]);
    const grandchild = await readPidFile(pidFile);
    expect(await isProcessGone(grandchild)).toBe(false);
    expect(await terminateGroup(pgid, { graceMs: LONG_GRACE_MS })).toBe('terminated');
    expect(await isProcessGone(grandchild)).toBe(true);
  });

  test('a grandchild that ignores SIGTERM, left behind by its exited parent, gets SIGKILL', async () => {
    const pidFile = join(await makeTempDir(), 'grandchild.pid');
    const { pgid } = await startGroup('fork-grandchild', [pidFile, '--exit', '--stubborn']);
    const grandchild = await readPidFile(pidFile);
    await waitUntil('the parent to exit', () => isProcessGone(pgid));
    expect(await isProcessGone(grandchild)).toBe(false);
    expect(await terminateGroup(pgid, { graceMs: 300 })).toBe('killed');
    expect(await isProcessGone(grandchild)).toBe(true);
  });

  test('a group that no longer exists is not-running', async () => {
    const { pgid } = await startGroup('forever');
    process.kill(-pgid, 'SIGKILL');
    await waitUntil('the leader to be gone and reaped', async () => (await processStateOf(pgid)) === null);
    expect(await terminateGroup(pgid)).toBe('not-running');
  });
});
