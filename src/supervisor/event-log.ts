// Each goal's progress events, appended to goals/<id>/events.jsonl (event-log-writer.ts), so `goald logs`
// can replay them with or without a daemon and `logs -f` can join a stream already in progress. Events read
// back are checked against their schema; a line that is not one (a torn last line after a crash) is skipped.

import { readFileSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { isErrnoCode } from '../errno.js';
import { eventLogPath } from './event-log-writer.js';
import { progressEventSchema } from './progress-event-schema.js';
import type { ProgressEvent } from './types.js';

/** The events recorded so far; a line that is not an event (a torn last line after a crash) is skipped. */
export async function readEventLog(goalDir: string): Promise<ProgressEvent[]> {
  let text: string;
  try {
    text = await readFile(eventLogPath(goalDir), 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return [];
    throw error;
  }
  const events: ProgressEvent[] = [];
  for (const line of text.split('\n')) pushEvent(events, line);
  return events;
}

/**
 * Adds `listener` (through `add`, which returns its removal) and hands it, first, the events the log holds
 * beyond the `seen` ones read before: those told while that read was under way, or since, and before the
 * listener was there to hear them. A goal's log is written before any listener hears an event, and nothing
 * runs between adding the listener and reading the log again here, so no event is lost or told twice.
 */
export function followEventLog(
  goalDir: string,
  seen: number,
  listener: (event: ProgressEvent) => void,
  add: (listener: (event: ProgressEvent) => void) => () => void,
): () => void {
  const remove = add(listener);
  let text = '';
  try {
    text = readFileSync(eventLogPath(goalDir), 'utf8');
  } catch (error) {
    if (!isErrnoCode(error, 'ENOENT')) {
      remove();
      throw error;
    }
  }
  const events: ProgressEvent[] = [];
  for (const line of text.split('\n')) pushEvent(events, line);
  for (const event of events.slice(seen)) listener(event);
  return remove;
}

function pushEvent(events: ProgressEvent[], line: string): void {
  if (line.trim() === '') return;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return;
  }
  const parsed = progressEventSchema.safeParse(value);
  if (parsed.success) events.push(parsed.data);
}

// What a cached reader knows of one log: the file it read (by inode), how far, the last bytes it read there
// (to tell a log rewritten in place from one appended to), the events of its whole lines, and the bytes of a
// last line not ended yet (it may be one being written).
interface ReadSoFar {
  ino: number;
  size: number;
  tail: Buffer;
  events: ProgressEvent[];
  unended: Buffer;
}

// Logs a daemon keeps read: the goals being watched; the least recently read goes first.
const CACHED_LOGS = 64;
// Bytes compared again before reading on from where the last read stopped.
const TAIL_BYTES = 64;

/**
 * readEventLog for a process that reads the same logs again and again (the daemon, for `watch` and the
 * dashboard, every refresh): the log is append-only, so only what was appended since the last read is
 * read and checked. A log replaced (another inode), shorter than before, or whose last bytes read differ
 * now (rewritten in place) is read whole again.
 */
export function createEventLogReader(): (goalDir: string) => Promise<ProgressEvent[]> {
  const known = new Map<string, ReadSoFar>();
  return async (goalDir) => {
    const file = eventLogPath(goalDir);
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (isErrnoCode(error, 'ENOENT')) {
        known.delete(file);
        return [];
      }
      throw error;
    }
    try {
      const { ino, size } = await handle.stat();
      let from = known.get(file);
      let chunk = from === undefined || from.ino !== ino || from.size > size ? null : await readAt(handle, from.size - from.tail.length, size - from.size + from.tail.length);
      if (from === undefined || chunk === null || !chunk.subarray(0, from.tail.length).equals(from.tail)) {
        from = { ino, size: 0, tail: Buffer.alloc(0), events: [], unended: Buffer.alloc(0) };
        chunk = await readAt(handle, 0, size);
      }
      const read = chunk.length - from.tail.length;
      const bytes = Buffer.concat([from.unended, chunk.subarray(from.tail.length)]);
      const lastNewline = bytes.lastIndexOf(0x0a);
      const events = [...from.events];
      // Whole lines only: UTF-8 never has 0x0a inside a character, so a cut there decodes cleanly.
      for (const line of bytes.subarray(0, lastNewline + 1).toString('utf8').split('\n')) pushEvent(events, line);
      known.delete(file);
      known.set(file, { ino, size: from.size + read, tail: Buffer.from(chunk.subarray(Math.max(0, chunk.length - TAIL_BYTES))), events, unended: Buffer.from(bytes.subarray(lastNewline + 1)) });
      if (known.size > CACHED_LOGS) known.delete(known.keys().next().value ?? '');
      // The last line read may be torn for good (a crash mid-write): read as readEventLog would.
      const result = [...events];
      if (lastNewline + 1 < bytes.length) pushEvent(result, bytes.subarray(lastNewline + 1).toString('utf8'));
      return result;
    } finally {
      await handle.close();
    }
  };
}

// Up to `length` bytes of the file from `position` (fewer when it is shorter now).
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  let read = 0;
  while (read < buffer.length) {
    const { bytesRead } = await handle.read(buffer, read, buffer.length - read, position + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return buffer.subarray(0, read);
}
