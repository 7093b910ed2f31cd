import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { killMarkedProcesses, markEnvironment, newProcessToken, onlyTheLeaderForked, pidsMayHaveWrapped, readForkCount } from '../../src/process/escaped-processes.js';

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
    const forksBefore = readForkCount();
    const leader = markedSleeper(token);
    const after = markedSleeper(token);
    const leaderPid = leader.pid ?? 0;
    // pids rise unless the counter wrapped between these spawns (then everything is read: still correct).
    const wrapped = (before.pid ?? 0) > leaderPid || leaderPid > (after.pid ?? 0);
    expect(await killMarkedProcesses(token, { bornAfter: { pid: leaderPid, forksBefore } })).toBe(wrapped ? 3 : 2);
    await Promise.all([exited(leader), exited(after)]);
    expect([leader.signalCode, after.signalCode]).toEqual(['SIGKILL', 'SIGKILL']);
    if (!wrapped) expect(before.exitCode === null && before.signalCode === null).toBe(true);
    // Without the bound, the older one is found as well.
    expect(await killMarkedProcesses(token)).toBe(wrapped ? 0 : 1);
  });

  it('finds a token in an environment larger than one read, wherever it falls, even across two reads', async () => {
    const token = newProcessToken();
    const entry = `GOALD_TURN_TOKEN=${token}`;
    // environ is `P0=<x…>\0P1=<x…>\0…GOALD_TURN_TOKEN=…\0PATH=…\0`: the token starts `start` bytes in (one
    // variable holds at most 128 KiB, so the padding is several).
    const padding = (start: number): Record<string, string> => {
      const vars: Record<string, string> = {};
      for (let left = start, index = 0; left > 0; index += 1) {
        const name = `P${index}`;
        const length = Math.min(60_000, left - name.length - 2);
        vars[name] = 'x'.repeat(length);
        left -= name.length + 2 + length;
      }
      return vars;
    };
    const starts = [65_536 - 20, 65_536 - 1, 65_536, 3 * 65_536 + 7];
    const sleepers = starts.map((start) => {
      const child = spawn('sleep', ['60'], { env: { ...padding(start), [entry.split('=')[0] ?? '']: token, PATH: process.env.PATH }, stdio: 'ignore' });
      started.push(child);
      return child;
    });
    expect(await killMarkedProcesses(token)).toBe(starts.length);
    await Promise.all(sleepers.map(exited));
    expect(sleepers.map((child) => child.signalCode)).toEqual(starts.map(() => 'SIGKILL'));
  });

  it('skips the sweep only when the kernel forked nothing since the leader but the leader', async () => {
    expect(onlyTheLeaderForked({ pid: 500, forksBefore: 1_000 }, 1_001)).toBe(true);
    expect(onlyTheLeaderForked({ pid: 500, forksBefore: 1_000 }, 1_002)).toBe(false);
    expect(onlyTheLeaderForked({ pid: 500, forksBefore: null }, 1_001)).toBe(false);
    expect(onlyTheLeaderForked({ pid: 500, forksBefore: 1_000 }, null)).toBe(false);
    // A real leader that forks a child: the count shows it, and the child it left is found and killed.
    const token = newProcessToken();
    const forksBefore = readForkCount();
    const leader = spawn('sh', ['-c', 'sleep 60 & exit 0'], { env: markEnvironment(process.env, token), stdio: 'ignore' });
    await exited(leader);
    expect(onlyTheLeaderForked({ pid: leader.pid ?? 0, forksBefore }, readForkCount())).toBe(false);
    expect(await killMarkedProcesses(token, { bornAfter: { pid: leader.pid ?? 0, forksBefore } })).toBe(1);
  });

  it('counts forks: the kernel counter rises with every process started', async () => {
    const first = readForkCount();
    expect(first).toBeTypeOf('number');
    await exited(spawn('true'));
    expect(readForkCount()).toBeGreaterThan(first ?? Infinity);
  });
});

describe('pidsMayHaveWrapped', () => {
  const birth = { pid: 20_000, forksBefore: 1_000_000 };
  it.each([
    ['the counter is past the leader, few forks since', { lastPid: 20_500, forks: 1_000_600, pidMax: 32_768 }, false],
    ['the counter is below the leader: it wrapped', { lastPid: 400, forks: 1_013_000, pidMax: 32_768 }, true],
    // A hostile agent forks a whole cycle so its hidden child lands below the leader and the counter ends
    // above the leader again: the last pid alone cannot tell, the fork count can.
    ['a full cycle of forks since the leader, the counter past it again', { lastPid: 20_100, forks: 1_000_000 + 32_568, pidMax: 32_768 }, true],
    ['one fork short of a full cycle', { lastPid: 20_100, forks: 1_000_000 + 32_467, pidMax: 32_768 }, false],
    ['no fork count', { lastPid: 20_100, forks: null, pidMax: 32_768 }, true],
    ['no ns_last_pid', { lastPid: null, forks: 1_000_001, pidMax: 32_768 }, true],
    ['no pid_max', { lastPid: 20_100, forks: 1_000_001, pidMax: null }, true],
  ] as const)('%s', (_name, now, expected) => {
    expect(pidsMayHaveWrapped(birth, now)).toBe(expected);
  });
  it('a group started without a fork count is always read in full', () => {
    expect(pidsMayHaveWrapped({ pid: 20_000, forksBefore: null }, { lastPid: 20_001, forks: 5, pidMax: 32_768 })).toBe(true);
  });
});
