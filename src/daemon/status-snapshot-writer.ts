// The daemon's side of the status snapshot (status-snapshot.ts says what the file is and when the CLI
// believes it): written for each new version of state.json the daemon sees, withdrawn while an ending the
// store refused is held, removed at shutdown.

import { closeSync, fstatSync, openSync, unlinkSync } from 'node:fs';

import { removeOrphanTempFiles, replaceFileSync } from '../../state/durable-file.js';
import { statusSnapshotPath, stateFilePath } from '../../state/paths.js';
import { fileIdentity } from '../../state/state-seal.js';
import type { GoalRecord } from '../../state/types.js';
import { readProcessStartTime } from '../process/process-identity.js';
import { SNAPSHOT_FORMAT, type StatusSnapshot } from './status-snapshot.js';

/** Keeps the status snapshot of one daemon. Never throws: the file is only speed, the socket the truth. */
export class StatusSnapshotWriter {
  readonly #path: string;
  readonly #statePath: string;
  readonly #daemon: StatusSnapshot['daemon'] | null;
  /** The state.json version last published, held open (see the top of status-snapshot.ts). */
  #held: number | null = null;
  #closed = false;

  constructor(home: string, socketPath: string) {
    this.#path = statusSnapshotPath(home);
    this.#statePath = stateFilePath(home);
    try {
      removeOrphanTempFiles([this.#path]); // a dead daemon's draft, cut off before its rename
    } catch {
      // no home yet: nothing left behind
    }
    const startTime = readProcessStartTime(process.pid);
    // Without a start time (no /proc) a dead daemon's pid, reused, would vouch for a stale file: none is kept.
    this.#daemon = startTime === null ? null : { pid: process.pid, startTime, socket: socketPath };
  }

  /**
   * Publishes `goals` (the live goals) as those of the state.json version `identity`: only while that
   * version is still the one at the path, which is then held open until the next publish.
   */
  publish(identity: string, goals: readonly GoalRecord[]): void {
    if (this.#daemon === null || this.#closed) return;
    let fd: number | null = null;
    try {
      fd = openSync(this.#statePath, 'r');
      if (fileIdentity(fstatSync(fd, { bigint: true })) !== identity) {
        this.withdraw(); // replaced since (another process wrote): the socket answers until the next version
        return;
      }
      const snapshot: StatusSnapshot = { format: SNAPSHOT_FORMAT, daemon: this.#daemon, state: identity, goals: [...goals] };
      // Not fsynced: after a crash the daemon it names is gone, and the file with it.
      replaceFileSync(this.#path, JSON.stringify(snapshot));
      this.#hold(fd);
      fd = null;
    } catch {
      this.withdraw();
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /** Removes the file: the socket answers `goald status` until the next publish. */
  withdraw(): void {
    try {
      unlinkSync(this.#path);
    } catch {
      // already gone (or the home is: nothing to mislead anyone then)
    }
    this.#hold(null);
  }

  /** At shutdown: the file goes, and nothing is published any more. */
  close(): void {
    this.#closed = true;
    this.withdraw();
  }

  #hold(fd: number | null): void {
    const previous = this.#held;
    this.#held = fd;
    try {
      if (previous !== null) closeSync(previous);
    } catch {
      // closed already: nothing held
    }
  }
}
