// Where goald keeps its files, and the ids it names them by.

import { join, resolve } from 'node:path';

import { osRandomBytes } from '../src/os-random.js';
import { readEnv } from './goald-home.js';

export { resolveGoaldHome } from './goald-home.js';

export const STATE_FILE_NAME = 'state.json';

/**
 * What goald itself writes under GOALD_HOME while goals run, as globs relative to it (`*` stays in one
 * segment, `**` crosses them): state.json and its companions, temporary files, the socket, the daemon's log
 * and lock, the status snapshot, goals' and loops' directories, races, worktrees, the compile cache and the
 * sandbox's empty file. When GOALD_HOME lies in a workspace (dotfiles at $HOME), none of it is a turn's work:
 * the snapshots leave it out and the tamper guard skips it (src/guard/goald-paths.ts).
 */
export const GOALD_HOME_CHURN: readonly string[] = [
  'state.json',
  'state.json.*',
  'goald.sock',
  'daemon.*',
  'status.json',
  '*.lock',
  '*.tmp',
  'goals/**',
  'loops/**',
  'races/**',
  'worktrees/**',
  'cache/**',
  'sandbox-empty',
];
const SOCKET_FILE_NAME = 'goald.sock';

/** Resolves the daemon's socket: `GOALD_SOCKET`, else `<home>/goald.sock`. */
export function resolveSocketPath(env: NodeJS.ProcessEnv, home: string): string {
  const explicit = readEnv(env, 'GOALD_SOCKET');
  return explicit !== undefined ? resolve(explicit) : join(home, SOCKET_FILE_NAME);
}

/** The daemon's status snapshot in a goald home (src/daemon/status-snapshot.ts). */
export function statusSnapshotPath(home: string): string {
  return join(home, 'status.json');
}

/** The path of state.json in a goald home. */
export function stateFilePath(home: string): string {
  return join(home, STATE_FILE_NAME);
}

// base36 Date.now() is 8 characters from 1973 until 2059, so ids sort by creation time as strings.
const TIME_WIDTH = 8;
const SEQ_WIDTH = 3;
const SEQ_SPACE = 36 ** SEQ_WIDTH;
let lastTime = 0;
let lastSeq = 0;

// A random integer in [0, bound), from the kernel's CSPRNG (src/os-random.ts: no crypto module loaded, so
// the CLI commands that only read paths (`goald status`, bench/daemon.bench.ts) never load one, and those
// that make ids do not pay for it either). The modulo bias over 2^32 is immaterial for bounds this small.
function randomInt(bound: number): number {
  return osRandomBytes(4).readUInt32LE(0) % bound;
}

/** Returns `<prefix><time><seq>`: lowercase, sortable by creation, unique (monotonic within a process). */
function newId(prefix: string): string {
  let time = Date.now();
  let seq: number;
  if (time <= lastTime) {
    // Same millisecond (or the clock stepped back): count up from the last id so order and uniqueness hold.
    time = lastTime;
    seq = lastSeq + 1;
    if (seq >= SEQ_SPACE) {
      time += 1;
      seq = randomInt(SEQ_SPACE / 2);
    }
  } else {
    // Start in the lower half so same-millisecond ids have room to count up; random across processes.
    seq = randomInt(SEQ_SPACE / 2);
  }
  lastTime = time;
  lastSeq = seq;
  return prefix + time.toString(36).padStart(TIME_WIDTH, '0') + seq.toString(36).padStart(SEQ_WIDTH, '0');
}

/** A new goal id, e.g. `gmhx2k9q1a3f` (12 characters). */
export function newGoalId(): string {
  return newId('g');
}

/** A new loop id, e.g. `lmhx2k9q1a3f` (12 characters). */
export function newLoopId(): string {
  return newId('l');
}

/** Whether `id` is shaped like a goald id (safe to use as a directory name). */
export function isSafeId(id: string): boolean {
  return /^[a-z0-9][a-z0-9_-]{0,63}$/i.test(id);
}
