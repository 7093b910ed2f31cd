// `goald status` without a round trip: the file's format and the CLI's reader (the daemon's writer is
// status-snapshot-writer.ts, kept apart so the CLI's status path loads none of it). Shell prompts, editors and scripts poll it; over the socket each
// poll loads node:net, connects and waits for the daemon (~5 ms of a ~33 ms command, bench/daemon.bench.ts)
// and wakes the daemon for a reply it could have written down once. So the daemon keeps
// `<home>/status.json`: the goals a plain `goald status` shows (the live ones), written each time it
// writes or reads a new version of state.json, beside that version's identity (state-seal.ts) and the
// daemon's own (pid, start time, socket).
//
// The CLI takes the file only when it is certainly what the socket would answer: the daemon named there is
// the one running (same pid and start time, not a zombie), it listens on the socket this CLI would ask,
// and state.json is still the version the goals were taken from. Anything else (another process wrote
// state.json, the daemon died, a home without /proc) falls back to the socket, which answers as always.
// The daemon holds the version it published open, so that file's inode cannot be reused by a later
// state.json with the same size and timestamp (the kernel's file clock ticks every few ms). Endings the
// store could not take (disk full) live in the daemon only: while it holds one, it withdraws the file.
// Like the socket, the file is trusted only when this user owns it and nobody else can write it; whoever
// runs as the user can write it, as they can write state.json (DESIGN.md's trust boundary: the agent's
// sandbox hides GOALD_HOME).

import type { GoalRecord } from '../../state/types.js';
import { statusSnapshotPath, stateFilePath } from '../../state/paths.js';
import { fileIdentity } from '../../state/state-seal.js';
import { isRunningProcess } from '../process/process-identity.js';
import { arrayOf, isNumber, isOneOf, isString, objectOf, withStringFields } from './reply-checks.js';

// Loaded on first use (not imported): see state/home-trust.ts.
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');

/** Bumped when the file's shape changes: a file of another format is not read. */
export const SNAPSHOT_FORMAT = 1;
const GROUP_OTHER_WRITE = 0o022;

/** What the daemon writes (status-snapshot-writer.ts). */
export interface StatusSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  daemon: { pid: number; startTime: string; socket: string };
  /** The identity of the state.json version the goals come from (state-seal.ts fileIdentity). */
  state: string;
  /** The live goals, as GET /v1/goals?status=active,paused answers. */
  goals: GoalRecord[];
}

// The light checks the client applies to the socket's reply (client.ts): the file is written by our own code.
const isSnapshot = objectOf({
  format: isOneOf(SNAPSHOT_FORMAT),
  daemon: objectOf({ pid: isNumber, startTime: isString, socket: isString }),
  state: isString,
  goals: arrayOf(withStringFields<GoalRecord>('id', 'status', 'workspace')),
});

/**
 * The live goals from the status snapshot of the daemon listening on `socketPath`, when the file is
 * certainly what that daemon would answer now (see the top of this file); null otherwise.
 */
export function readStatusSnapshot(home: string, socketPath: string): GoalRecord[] | null {
  const { openSync, closeSync, fstatSync, readFileSync, statSync, constants } = fs();
  let text: string;
  try {
    // Not blocking on a FIFO put in its place (nor following a link): only a regular file is read.
    const fd = openSync(statusSnapshotPath(home), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    try {
      const stats = fstatSync(fd);
      const uid = process.getuid?.();
      if (!stats.isFile() || uid === undefined || stats.uid !== uid || (stats.mode & GROUP_OTHER_WRITE) !== 0) return null;
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null; // none (the usual case without a daemon)
  }
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isSnapshot(snapshot) || snapshot.daemon.socket !== socketPath) return null;
  try {
    if (fileIdentity(statSync(stateFilePath(home), { bigint: true })) !== snapshot.state) return null;
  } catch {
    return null;
  }
  return isRunningProcess(snapshot.daemon.pid, snapshot.daemon.startTime) ? snapshot.goals : null;
}
