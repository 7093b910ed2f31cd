// A process's identity beyond its pid: pids are reused, so a restarted daemon only kills a recorded agent
// group when the process start time still matches what was recorded at spawn.

import { readFileSync } from 'node:fs';

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/** The start time of a process as the OS reports it (/proc starttime ticks), or null when unknown. */
export function readProcessStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)": state is field 3; starttime is field 22, i.e. index 19 after the comm.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** True when `pid` still names the process that was recorded with `startTime`. */
export function isSameProcess(pid: number, startTime: string | null): boolean {
  if (!isProcessAlive(pid)) return false;
  if (startTime === null) return true; // nothing to compare (no /proc): trust the pid
  return readProcessStartTime(pid) === startTime;
}
