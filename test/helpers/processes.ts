// Process liveness for tests: a pid counts as gone when it no longer exists or is a zombie waiting to
// be reaped (in containers PID 1 may reap late).

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { waitUntil } from './wait.js';

export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` to its end, `input` on its stdin (none: an empty one); its exit code and output. */
export function runProcess(command: string, args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv; input?: string }): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** True when the process exists and is not a zombie. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc (not Linux): trust kill(0)
  }
}

/** Waits until the pid is gone; fails the test, naming the pid, if it still runs after `timeoutMs`. */
export async function waitUntilGone(pid: number, timeoutMs = 3_000): Promise<void> {
  await waitUntil(`process ${pid} to be gone`, () => !isProcessRunning(pid), timeoutMs);
}

/** For cleanup paths that escalate rather than fail: true once the pid is gone, false if it still runs after `timeoutMs`. */
export function waitForProcessGone(pid: number, timeoutMs = 3_000): Promise<boolean> {
  return waitUntilGone(pid, timeoutMs).then(
    () => true,
    () => false,
  );
}

/** The running processes whose command line holds `marker`, this test process excluded. */
export function pidsWithMarker(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number)
    .filter(isProcessRunning);
}

/** Agents' processes started ahead (src/process/ready-leader.ts), still waiting, in working directory `dir`. */
export function waitingLeadersIn(dir: string): number[] {
  return pidsWithMarker('read -r goald_n goald_b || exit 125').filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === dir;
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** Whether `ancestor` is `pid`'s parent, or its parent's, and so on. */
export function isDescendantOf(pid: number, ancestor: number): boolean {
  for (let current = pid; current > 1; ) {
    let parent: number;
    try {
      parent = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${current}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return false;
    }
    if (parent === ancestor) return true;
    current = parent;
  }
  return false;
}

/** Whether `pid` leads its process group (as every agent and check goald starts does). */
export function isGroupLeader(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pid;
  } catch {
    return false;
  }
}
