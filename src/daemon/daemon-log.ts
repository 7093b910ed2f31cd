// The daemon's log file: each line appended to GOALD_HOME/daemon.log (mode 0600), rotated by size so a
// daemon that runs for months keeps a bounded log: daemon.log → daemon.log.1 → daemon.log.2, the oldest
// dropped. A plain sink: what to write (timestamps, redaction) is the caller's. It never throws: a full
// disk must not take the daemon down; lines it could not write are counted and reported once it can.
// stderr stays pointed at daemon.log by the auto-start, for what only a crash prints (a stack trace).

import { appendFileSync, renameSync, statSync } from 'node:fs';
import { isErrnoCode } from '../errno.js';

/** Rotate once the log would pass this many bytes (a few months of an ordinary daemon's lines). */
const DAEMON_LOG_MAX_BYTES = 5 * 1024 * 1024;
/** Rotated files kept beside the log (daemon.log.1, daemon.log.2). */
const DAEMON_LOG_KEEP = 2;

export interface DaemonLogOptions {
  maxBytes?: number;
  keep?: number;
}

/** Opens `file` for appending log lines; returns the function that writes one line. */
export function openDaemonLog(file: string, options: DaemonLogOptions = {}): (line: string) => void {
  const maxBytes = options.maxBytes ?? DAEMON_LOG_MAX_BYTES;
  const keep = Math.max(1, options.keep ?? DAEMON_LOG_KEEP);
  let size = sizeOf(file);
  let dropped = 0;
  let lastProblem = '';

  const rotate = (): void => {
    for (let index = keep - 1; index >= 1; index -= 1) renameIfThere(`${file}.${index}`, `${file}.${index + 1}`);
    renameIfThere(file, `${file}.1`);
    size = 0;
  };

  return (line: string) => {
    const text = line.endsWith('\n') ? line : `${line}\n`;
    const note = dropped > 0 ? `${new Date().toISOString()} (${dropped} log line${dropped === 1 ? '' : 's'} could not be written: ${lastProblem})\n` : '';
    const bytes = Buffer.byteLength(note + text);
    try {
      // Others may append too (stderr shares the file): look at the real size before rotating.
      if (size + bytes > maxBytes && (size = sizeOf(file)) + bytes > maxBytes && size > 0) rotate();
      appendFileSync(file, note + text, { mode: 0o600 });
      size += bytes;
      dropped = 0;
    } catch (error) {
      dropped += 1;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
  };
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if (!isErrnoCode(error, 'ENOENT')) throw error;
  }
}
