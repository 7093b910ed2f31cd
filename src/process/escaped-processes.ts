// Processes that left the process group goald started them in (`setsid cmd &`, a double fork) are out of
// reach of a group signal. Each agent turn and check therefore carries a random token in its environment,
// which every descendant inherits wherever it moves; once the group is gone, goald finds the processes
// still carrying it in /proc/<pid>/environ and kills them. A process that deliberately rebuilds its
// environment without the token escapes this sweep (the kernel sandbox's PID namespace is the answer to
// that); everything that merely detached is caught.
//
// Reading every process's environ costs ~0.1 ms a process, paid after every turn and every check: on a
// desktop with 500 processes, more than the turn's own git work. A process of the turn was forked after
// the turn's leader, so its pid was allocated after the leader's: unless the pid counter may have wrapped
// around since (pidsMayHaveWrapped), only higher pids are read. Each environ is read synchronously into
// one reused buffer: /proc answers from memory, and a promise, a file handle and a buffer per process (the
// thread pool's round trips and their garbage) cost more than the reads on a machine running many.

import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { setImmediate as yieldToLoop, setTimeout as delay } from 'node:timers/promises';

import { osRandomBytes } from '../os-random.js';

/** The environment variable that marks every process of one agent turn or one check. */
const PROCESS_TOKEN_ENV = 'GOALD_TURN_TOKEN';

// A marked process may fork between the scan that found it and its SIGKILL; each further sweep catches
// the children of the last. Ten rounds end any realistic fork chain; a fork bomb outruns any sweep.
const MAX_SWEEPS = 10;
// Lets the kernel finish the kills of the last sweep before looking again.
const SWEEP_PAUSE_MS = 10;

/** A fresh random token for one process group's environment. */
export function newProcessToken(): string {
  return osRandomBytes(16).toString('hex');
}

/** `env` plus the token that marks the processes started with it. */
export function markEnvironment(env: NodeJS.ProcessEnv, token: string): NodeJS.ProcessEnv {
  return { ...env, [PROCESS_TOKEN_ENV]: token };
}

/**
 * Kills (SIGKILL: they may be stopped, or ignore SIGTERM) every process whose environment carries `token`,
 * again and again until a sweep finds none; resolves with how many distinct processes were killed. Never
 * rejects; without /proc (not Linux) it finds nothing.
 */
export async function killMarkedProcesses(token: string, options: { bornAfter?: GroupBirth } = {}): Promise<number> {
  // Nothing was forked anywhere on the machine since the leader but the leader itself: no process carries
  // the token (an agent that runs only shell built-ins, say), and /proc need not be read (~2 ms).
  if (options.bornAfter !== undefined && onlyTheLeaderForked(options.bornAfter, readForkCount())) return 0;
  const needle = Buffer.from(`${PROCESS_TOKEN_ENV}=${token}\0`);
  const killed = new Set<number>();
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep += 1) {
    const marked = await findMarkedProcesses(needle, options.bornAfter);
    if (marked.length === 0) break;
    for (const pid of marked) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // Gone already (ESRCH), or not ours to kill (EPERM).
      }
    }
    await delay(SWEEP_PAUSE_MS);
  }
  return killed.size;
}

/**
 * The live (non-zombie) processes whose environment holds `needle`; [] when /proc cannot be read. With
 * `bornAfter` (the pid of a process every marked one descends from), only pids allocated after it.
 */
async function findMarkedProcesses(needle: Buffer, bornAfter: GroupBirth | undefined): Promise<number[]> {
  // /proc is read synchronously, as environ below: it is in memory, and a trip through libuv's thread pool
  // per read waited behind the fsyncs of goald's own writes (~1 ms of each turn's sweep).
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const lowest = bornAfter !== undefined && !pidsWrappedSince(bornAfter) ? bornAfter.pid : 0;
  const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => pid >= lowest && pid !== process.pid);
  const buffer = Buffer.allocUnsafe(ENVIRON_CHUNK);
  const found: number[] = [];
  for (const [index, pid] of pids.entries()) {
    if (index > 0 && index % PIDS_PER_SLICE === 0) await yieldToLoop(); // the event loop is never held long
    if (environHolds(pid, needle, buffer)) found.push(pid);
  }
  return found;
}

// Read in chunks of this size; a scan between chunks keeps the last needle.length − 1 bytes, so a token
// split across two reads is still found.
const ENVIRON_CHUNK = 64 * 1024;
const PIDS_PER_SLICE = 200;

// Whether /proc/<pid>/environ holds `needle`. A zombie's environ reads empty; another user's is unreadable
// (EACCES) unless we are root; a process gone meanwhile is ENOENT/ESRCH: all false.
function environHolds(pid: number, needle: Buffer, buffer: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, 'r');
  } catch {
    return false;
  }
  try {
    let carried = 0;
    for (;;) {
      const read = readSync(fd, buffer, carried, buffer.length - carried, null);
      if (read === 0) return false;
      const end = carried + read;
      if (buffer.subarray(0, end).includes(needle)) return true;
      carried = Math.min(needle.length - 1, end);
      buffer.copyWithin(0, end - carried, end);
    }
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Where a process group began: its leader's pid, and the kernel's fork count just before it was started. */
export interface GroupBirth {
  pid: number;
  forksBefore: number | null;
}

/** The kernel's count of forks since boot (`processes` in /proc/stat); null without /proc. */
export function readForkCount(): number | null {
  try {
    const match = /^processes (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    return match?.[1] === undefined ? null : Number(match[1]);
  } catch {
    return null;
  }
}

/**
 * Whether the kernel forked nothing since `birth` but the group's leader itself (`forks`: the count now): the
 * count is the whole machine's and counts threads too, so anything the leader started shows in it.
 */
export function onlyTheLeaderForked(birth: GroupBirth, forks: number | null): boolean {
  return birth.forksBefore !== null && forks !== null && forks - birth.forksBefore <= 1;
}

// Pids below this are never handed out again once the counter wraps (the kernel's RESERVED_PIDS).
const RESERVED_PIDS = 300;

/**
 * Whether a process of the group may hold a pid below its leader's: the kernel's last allocated pid is
 * lower than the leader's (the counter wrapped), or so many processes were forked since the leader that
 * the counter may have gone all the way round and past it again (a full cycle takes pid_max − 300 forks;
 * an agent can fork that many on purpose to hide a child below its leader). Unknown counts as wrapped.
 */
export function pidsMayHaveWrapped(birth: GroupBirth, now: { lastPid: number | null; forks: number | null; pidMax: number | null }): boolean {
  if (now.lastPid === null || now.lastPid < birth.pid) return true;
  if (birth.forksBefore === null || now.forks === null || now.pidMax === null) return true;
  return now.forks - birth.forksBefore >= now.pidMax - RESERVED_PIDS;
}

function pidsWrappedSince(birth: GroupBirth): boolean {
  const read = (file: string): number | null => {
    try {
      const value = Number(readFileSync(file, 'utf8').trim());
      return Number.isInteger(value) ? value : null;
    } catch {
      return null;
    }
  };
  return pidsMayHaveWrapped(birth, { lastPid: read('/proc/sys/kernel/ns_last_pid'), forks: readForkCount(), pidMax: read('/proc/sys/kernel/pid_max') });
}
