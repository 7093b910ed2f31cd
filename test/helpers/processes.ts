// Process liveness for tests: a pid counts as gone when it no longer exists or is a zombie waiting to
// be reaped (in containers PID 1 may reap late).

import { readFileSync } from 'node:fs';

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

/** Resolves true once the pid is gone, false if it is still running after `timeoutMs`. */
export async function waitForProcessGone(pid: number, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessRunning(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
