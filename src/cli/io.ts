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
  cwd: process.cwd(),
};

// Descriptors whose reader has gone (EPIPE) or that are closed (EBADF): what would follow is dropped.
const closed = new Set<number>();
// Descriptors that were once non-blocking: all that follows goes through the stream too, in order.
const streamed = new Set<number>();

/**
 * Whether output written through the streams is still queued (writeLine fell back to one, and it is an
 * asynchronous one: a pipe outside Linux), so that process.exit() now would drop it. Touches no stream
 * that was not used: building process.stdout to ask would load what writeLine avoids.
 */
export function outputQueued(): boolean {
  return [...streamed].some((fd) => (fd === 1 ? process.stdout : process.stderr).writableLength > 0);
}

/**
 * Writes `text` and a final newline straight to fd 1 or 2. Not through process.stdout: the stream is
 * built on first use and loads Node's stream modules, ~4.5 ms of CPU, a quarter of what `goald status`
 * costs beyond Node's own start. Node's streams write files, pipes and terminals synchronously on Linux
 * too, so nothing is reordered against what else writes there. A descriptor left non-blocking by whoever shares it (EAGAIN)
 * gets the rest through the stream, which waits for it.
 */
function writeLine(fd: 1 | 2, text: string): void {
  if (closed.has(fd)) return;
  const bytes = Buffer.from(text.endsWith('\n') ? text : `${text}\n`, 'utf8');
  const stream = (): NodeJS.WriteStream => (fd === 1 ? process.stdout : process.stderr);
  if (streamed.has(fd)) {
    stream().write(bytes);
    return;
  }
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(fd, bytes, written);
  } catch (error) {
    if (isErrnoCode(error, 'EAGAIN')) {
      streamed.add(fd);
      stream().write(bytes.subarray(written));
    } else if (isErrnoCode(error, 'EPIPE')) {
      closed.add(fd);
      if (fd === 1) readerGone();
    } else if (isErrnoCode(error, 'EBADF')) closed.add(fd); // closed by whoever started goald: it runs on unheard
    else throw error;
  }
}

/**
 * stdout's reader has gone (`goald logs -f | head -3`): the SIGPIPE a Unix tool dies of, which Node
 * ignores. A command that handles Ctrl-C hears it as that, named SIGPIPE (a foreground goal is stopped
 * cleanly and recorded as interrupted, `logs -f` stops following); any other ends here, as it would have
 * printed nothing more to anyone.
 */
function readerGone(): void {
  if (process.listenerCount('SIGINT') > 0) process.emit('SIGINT', 'SIGPIPE');
  else process.exit();
}
