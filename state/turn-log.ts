// Each goal's append-only turn log, `goals/<id>/turns.jsonl`: one turn record per line, fsynced per
// append. Only the process running the goal writes it. Every line read back is checked against the turn
// record schema. A crash mid-append can leave a torn last line, and a line can be damaged by hand; readers
// skip such lines (and say so) instead of failing, so one bad line never hides the rest of a goal's
// history, and the next append starts on a fresh line.

import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrnoCode } from '../src/errno.js';
import { redactJson } from '../src/secrets/redact.js';
import { fsyncFd } from './durable-file.js';
import { describeSchemaProblem } from './state-schema.js';
import type { TurnRecord } from './turn-record.js';

const TURN_LOG_FILE_NAME = 'turns.jsonl';

/** The path of a goal's turn log. */
export function turnLogPath(goalDir: string): string {
  return join(goalDir, TURN_LOG_FILE_NAME);
}

/**
 * Appends one record (secrets redacted) as a JSON line and fsyncs it before resolving. The line is written
 * when the call returns; only the flush is awaited (the supervisor flushes a state write beside it).
 */
export async function appendTurnRecord(goalDir: string, record: TurnRecord): Promise<void> {
  await writeTurnRecord(goalDir, record);
}

/**
 * appendTurnRecord's line written now, or thrown (a full disk): resolves once the line is flushed. For a
 * caller that goes on while the flush runs, knowing the line is there for whoever reads the log.
 */
export function writeTurnRecord(goalDir: string, record: TurnRecord): Promise<void> {
  const line = JSON.stringify(redactJson(record));
  if (line === undefined) throw new TypeError('appendTurnRecord: the record is not JSON-serializable');
  // Synchronous steps, asynchronous fsync: see durable-file.ts.
  mkdirSync(goalDir, { recursive: true, mode: 0o700 });
  const fd = openSync(turnLogPath(goalDir), 'a+', 0o600);
  try {
    // After a torn append the file does not end in a newline; start on a fresh line so the new record
    // is not glued onto the broken one.
    const { size } = fstatSync(fd);
    let prefix = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    writeFileSync(fd, `${prefix}${line}\n`);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fsyncFd(fd).finally(() => closeSync(fd));
}

/** A line of turns.jsonl that could not be read back. */
export interface SkippedLine {
  /** 1-based line number. */
  line: number;
  /**
   * `torn` for an unterminated last line (crash mid-append), `invalid` for a bad line elsewhere (not JSON,
   * or JSON that is not a turn record).
   */
  kind: 'torn' | 'invalid';
  /** One-line description. */
  message: string;
}

export interface TurnLog {
  records: TurnRecord[];
  skipped: SkippedLine[];
}

/** Reads every record of a goal's turn log, reporting lines it had to skip; a missing log is empty. */
export async function readTurnLog(goalDir: string): Promise<TurnLog> {
  const path = turnLogPath(goalDir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return { records: [], skipped: [] };
    throw error;
  }
  // The record's schema loads with the first read: a goal that only appends never builds it.
  const { turnRecordSchema } = await import('./turn-record.js');
  const lines = text.split('\n');
  const records: TurnRecord[] = [];
  const skipped: SkippedLine[] = [];
  for (const [index, raw] of lines.entries()) {
    if (raw.trim() === '') continue;
    // Only the final piece can lack its newline: that is an append cut short by a crash.
    const torn = index === lines.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      skipped.push({
        line: index + 1,
        kind: torn ? 'torn' : 'invalid',
        message: torn
          ? `${path}:${index + 1}: incomplete last line (an append interrupted by a crash); ignored`
          : `${path}:${index + 1}: not a JSON record (${reason.replace(/\s+/g, ' ')}); ignored`,
      });
      continue;
    }
    const parsed = turnRecordSchema.safeParse(value);
    if (parsed.success) records.push(parsed.data);
    else {
      skipped.push({
        line: index + 1,
        kind: 'invalid',
        message: `${path}:${index + 1}: not a turn record (${describeSchemaProblem(parsed.error)}); ignored`,
      });
    }
  }
  return { records, skipped };
}

/** Reads every record of a goal's turn log; `onSkipped` hears about torn or invalid lines. */
export async function readTurnRecords(
  goalDir: string,
  onSkipped?: (skipped: SkippedLine) => void,
): Promise<TurnRecord[]> {
  const log = await readTurnLog(goalDir);
  if (onSkipped !== undefined) for (const skipped of log.skipped) onSkipped(skipped);
  return log.records;
}
