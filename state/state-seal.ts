// A note beside state.json, `state.json.checked`, that says "the file at this path is the one goald last
// wrote there, every record checked against this schema": the written file's device, inode, size and
// modification time (taken from its own descriptor before its rename) and the schema's revision. A
// process's first read of a file the note matches skips the schema pass, which otherwise grows with the
// home's history (~30 ms at 300 goals, cold); the store's own writes check every record they write. A
// file written by anything else (an editor, `goald state restore`, another tool) has another identity and is
// checked as always; a note that is missing, torn or stale (a crash between the rename and the note) costs
// only that. The one change it cannot tell is an edit in place that keeps the size, made within the same
// tick of the kernel's file clock (a few ms) as goald's write: nothing a person or a tool does by chance.
// It is no defence against whoever can write GOALD_HOME: that one can write state.json itself.

import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync, type BigIntStats } from 'node:fs';

/**
 * The schema's revision: bump it with any change to state-schema.ts, so that a note written by a goald
 * that checked against another schema vouches for nothing (test/state/state-seal.test.ts pins the schema).
 */
export const STATE_SCHEMA_REVISION = 5;

/** What identifies one written file: its device, inode, size and modification time (ns). */
export function fileIdentity(stats: BigIntStats): string {
  return `${STATE_SCHEMA_REVISION} ${stats.dev} ${stats.ino} ${stats.size} ${stats.mtimeNs}`;
}

/** The identity of the file open on `fd`; null when it cannot be had (then no note vouches for it). */
export function identityOfOpenFile(fd: number): string | null {
  try {
    return fileIdentity(fstatSync(fd, { bigint: true }));
  } catch {
    return null;
  }
}

/** The note beside `path`. */
export function sealPathFor(path: string): string {
  return `${path}.checked`;
}

// The note is always this long (its line, padded with spaces) and rewritten in place: a state write is
// followed by one positional write of a block already allocated (~8 µs), where replacing a file's content
// (truncate, then write) took ~200 µs, twice a turn.
const SEAL_BYTES = 128;

/** Notes that the file at `path` is the checked one with `identity`. Never throws: the note is only speed. */
export function writeSeal(path: string, identity: string | null): void {
  if (identity === null) return;
  const line = `${identity}\n`;
  if (line.length > SEAL_BYTES) return;
  try {
    const fd = openSync(sealPathFor(path), constants.O_WRONLY | constants.O_CREAT, 0o600);
    try {
      writeSync(fd, line.padEnd(SEAL_BYTES, ' '), 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // A full disk, say: the next process checks the file instead.
  }
}

/** Whether the note beside `path` vouches for the file with `identity` (a torn or stale note does not). */
export function isSealed(path: string, identity: string | null): boolean {
  if (identity === null) return false;
  try {
    const note = readFileSync(sealPathFor(path), 'utf8');
    return note.length === SEAL_BYTES && note.startsWith(`${identity}\n`) && note.trimEnd() === identity;
  } catch {
    return false;
  }
}
