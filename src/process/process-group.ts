// Signals and liveness checks for an agent's process group. The agent leads its own group (spawned with
// `detached: true`), so `-pid` addresses it together with every descendant that did not leave the group.

import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * Sends `signal` to every process of the group and says whether it was delivered. It never throws: a group
 * that is already gone (ESRCH) is the normal end of a race, and EPERM means the id no longer names a group
 * of ours — in both cases there is nothing left to signal. Called from timers, where a throw would crash.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of the group is still running. `kill(-pgid, 0)` alone is not enough: an orphan that
 * died is a zombie until init reaps it, and some container inits never do, so on Linux the members are
 * read from /proc and zombies do not count.
 */
export async function isGroupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  // The common case, cheaply: the leader itself still runs (it is checked to lead this group, since its
  // pid may have been reused once it was reaped).
  const leader = readProcessStateNow(pgid);
  if (leader !== null && leader.pgid === pgid && !isDeadState(leader.state)) return true;
  const members = await listGroupMembers(pgid);
  return members === null ? true : members.some((member) => !isDeadState(member.state));
}

export interface ProcessState {
  pid: number;
  /** The one-letter state of /proc/<pid>/stat: R running, S sleeping, T stopped, Z zombie, ... */
  state: string;
  pgid: number;
}

/**
 * readProcessState for one process, read at once: /proc is in memory, and the read takes microseconds where
 * a trip through libuv's thread pool took 0.5-6 ms after a check or a turn (the pool's threads then wait on
 * fsyncs of goald's own writes). For scans of every process, readProcessState (asynchronous) instead.
 */
export function readProcessStateNow(pid: number): ProcessState | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Reads a process's state and group from /proc; null when it is gone or /proc is unavailable. */
async function readProcessState(pid: number): Promise<ProcessState | null> {
  try {
    return parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** The members of a group as /proc sees them; null when /proc cannot be read (not Linux). */
async function listGroupMembers(pgid: number): Promise<ProcessState[] | null> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return null;
  }
  const states = await Promise.all(
    entries.filter((entry) => /^\d+$/.test(entry)).map((entry) => readProcessState(Number(entry))),
  );
  return states.filter((state): state is ProcessState => state !== null && state.pgid === pgid);
}

// `pid (comm) state ppid pgrp ...`; comm may itself hold spaces and parentheses, so split after the last ')'.
function parseStat(stat: string): ProcessState | null {
  const close = stat.lastIndexOf(')');
  if (close < 0) return null;
  const fields = stat.slice(close + 2).split(' ');
  const state = fields[0];
  const pgid = Number(fields[2]);
  if (state === undefined || !Number.isInteger(pgid)) return null;
  return { pid: Number.parseInt(stat, 10), state, pgid };
}

function isDeadState(state: string): boolean {
  return state === 'Z' || state === 'X';
}
