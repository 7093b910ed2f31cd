// Process liveness for tests: a pid counts as gone when it no longer exists or is a zombie waiting to
// be reaped (in containers PID 1 may reap late).

import { readFileSync } from 'node:fs';
import { waitUntil } from './wait.js';

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
