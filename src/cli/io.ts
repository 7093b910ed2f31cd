// The CLI's view of the terminal: the only place goald writes to stdout/stderr. Whatever reaches it passes
// through toTerminalText last, so no text from the world (file names, agent output) can drive the terminal.

import { writeSync } from 'node:fs';

import { isErrnoCode } from '../errno.js';
import { toTerminalText } from './terminal-text.js';

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export const processIO: CliIO = {
  out: (text) => {
    writeLine(1, toTerminalText(text));
  },
  err: (text) => {
    writeLine(2, toTerminalText(text));
  },
  env: process.env,
  // Asked when used, never when this module loads: a start-up snapshot loads it in another directory.
  get cwd() {
    return process.cwd();
  },
};

// Descriptors whose reader has gone (EPIPE) or that are closed (EBADF): what would follow is dropped.
const closed = new Set<number>();
// Descriptors that were once non-blocking: all that follows goes through the stream too, in order.
const streamed = new Set<number>();

/**
 * Whether output is still queued in a stream (writeLine fell back to one for a non-blocking descriptor,
 * and it holds what the reader has not taken yet), so that process.exit() now would drop it. Touches no
 * stream that was not used: building process.stdout to ask would load what writeLine avoids.
 */
export function outputQueued(): boolean {
  return [...streamed].some((fd) => (fd === 1 ? process.stdout : process.stderr).writableLength > 0);
}

/**
 * Writes `text` and a final newline straight to fd 1 or 2. Not through process.stdout: building the stream
 * loads Node's stream modules, ~3 ms of `goald status`, a quarter of what it costs beyond Node's own start.
 * Node's streams write files, pipes and terminals synchronously on Linux too, so nothing is reordered
 * against what else writes there. A descriptor left non-blocking by whoever shares it (EAGAIN) gets the
 * rest through the stream, which waits for it.
 */
function writeLine(fd: 1 | 2, text: string): void {
  if (closed.has(fd)) return;
  const bytes = Buffer.from(text.endsWith('\n') ? text : `${text}\n`, 'utf8');
  if (streamed.has(fd)) {
    streamOf(fd).write(bytes);
    return;
  }
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(fd, bytes, written);
  } catch (error) {
    if (isErrnoCode(error, 'EAGAIN')) {
      streamed.add(fd);
      const stream = streamOf(fd);
      stream.on('error', (streamError) => (isErrnoCode(streamError, 'EPIPE') ? gone(fd) : undefined));
      stream.write(bytes.subarray(written));
    } else if (isErrnoCode(error, 'EPIPE')) gone(fd);
    else if (isErrnoCode(error, 'EBADF')) closed.add(fd); // closed by whoever started goald: it runs on unheard
    else throw error;
  }
}

function streamOf(fd: 1 | 2): NodeJS.WriteStream {
  return fd === 1 ? process.stdout : process.stderr;
}

/**
 * The reader of `fd` has gone. For stdout (`goald logs -f | head -3`) that is the SIGPIPE a Unix tool dies
 * of, which Node ignores: a command that handles Ctrl-C hears it as that, named SIGPIPE (a foreground goal
 * is stopped cleanly and recorded as interrupted, `logs -f` stops following); any other ends, as it would
 * print nothing more to anyone. In the next turn of the event loop, not inside whatever was printing.
 */
function gone(fd: 1 | 2): void {
  if (closed.has(fd)) return;
  closed.add(fd);
  if (fd !== 1) return;
  setImmediate(() => {
    if (process.listenerCount('SIGINT') > 0) process.emit('SIGINT', 'SIGPIPE');
    else process.exit();
  });
}
