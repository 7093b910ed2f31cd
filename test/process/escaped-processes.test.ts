import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { killMarkedProcesses, markEnvironment, newProcessToken } from '../../src/process/escaped-processes.js';

const started: ChildProcess[] = [];

function markedSleeper(token: string): ChildProcess {
  const child = spawn('sleep', ['60'], { env: markEnvironment(process.env, token), stdio: 'ignore' });
  started.push(child);
  return child;
}

function exited(child: ChildProcess): Promise<unknown> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit');
}

afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

describe('killMarkedProcesses', () => {
  it('kills every process carrying the token, and only those', async () => {
    const token = newProcessToken();
    const marked = [markedSleeper(token), markedSleeper(token)];
    const other = markedSleeper(newProcessToken());
    expect(await killMarkedProcesses(token)).toBe(2);
    await Promise.all(marked.map(exited));
    expect(marked.map((child) => child.signalCode)).toEqual(['SIGKILL', 'SIGKILL']);
    expect(other.exitCode === null && other.signalCode === null).toBe(true);
  });

  it('with bornAfter, reads only the processes started since that pid (unless the pid counter wrapped)', async () => {
    const token = newProcessToken();
    const before = markedSleeper(token);
    const leader = markedSleeper(token);
    const after = markedSleeper(token);
    const leaderPid = leader.pid ?? 0;
    // pids rise unless the counter wrapped between these spawns (then everything is read: still correct).
    const wrapped = (before.pid ?? 0) > leaderPid || leaderPid > (after.pid ?? 0);
    expect(await killMarkedProcesses(token, { bornAfter: leaderPid })).toBe(wrapped ? 3 : 2);
    await Promise.all([exited(leader), exited(after)]);
    expect([leader.signalCode, after.signalCode]).toEqual(['SIGKILL', 'SIGKILL']);
    if (!wrapped) expect(before.exitCode === null && before.signalCode === null).toBe(true);
    // Without the bound, the older one is found as well.
    expect(await killMarkedProcesses(token)).toBe(wrapped ? 0 : 1);
  });
});
