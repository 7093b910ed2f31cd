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

// The fields of /proc/<pid>/stat after "(comm)" (which may hold spaces): state is field 3, i.e. index 0;
// starttime field 22, index 19. Null when there is no such process (or no /proc).
function readStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The start time of a process as the OS reports it (/proc starttime ticks), or null when unknown. */
export function readProcessStartTime(pid: number): string | null {
  return readStatFields(pid)?.[19] ?? null;
}

/**
 * True when `pid` is the process that started at `startTime` (readProcessStartTime) and still runs: not
 * exited, nor a zombie its parent has not reaped yet (in containers PID 1 may reap late). Needs /proc.
 */
export function isRunningProcess(pid: number, startTime: string): boolean {
  const fields = readStatFields(pid);
  return fields !== null && fields[0] !== 'Z' && fields[0] !== 'X' && fields[19] === startTime;
}

/** True when `pid` still names the process that was recorded with `startTime`. */
export function isSameProcess(pid: number, startTime: string | null): boolean {
  if (!isProcessAlive(pid)) return false;
  if (startTime === null) return true; // nothing to compare (no /proc): trust the pid
  return readProcessStartTime(pid) === startTime;
}
