// The turn transcript: everything the agent prints, appended to a file as it arrives, so memory holds only
// a bounded tail however much the agent prints.

import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Transcript {
  /** Appends output; false means the file is behind and the caller should pause until `onceDrained`. */
  write(chunk: Buffer | string): boolean;
  onceDrained(callback: () => void): void;
  /** Appends the footer (on a line of its own) and closes the file. Never rejects. */
  close(footer: string): Promise<void>;
  /** Why the transcript could not be written; null while it is fine. Output is then only in the tail. */
  readonly error: string | null;
}

/** Opens `path` for appending (creating its directory) and writes `header` as the first line. */
export function openTranscript(path: string, header: string): Transcript {
  let error: string | null = null;
  let endsWithNewline = true;
  let drainWaiters: Array<() => void> = [];
  const releaseWaiters = (): void => {
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const waiter of waiters) waiter();
  };
  const fail = (cause: unknown): void => {
    error ??= `cannot write the transcript ${path}: ${cause instanceof Error ? cause.message : String(cause)}`;
    releaseWaiters();
  };

  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (cause) {
    fail(cause);
  }
  const stream = createWriteStream(path, { flags: 'a' });
  stream.on('error', fail);
  stream.on('drain', releaseWaiters);

  const write = (chunk: Buffer | string): boolean => {
    if (error !== null || chunk.length === 0) return true;
    const last = typeof chunk === 'string' ? chunk.at(-1) : chunk.at(-1) === 0x0a ? '\n' : '';
    endsWithNewline = last === '\n';
    return stream.write(chunk);
  };
  write(header.endsWith('\n') ? header : `${header}\n`);

  return {
    write,
    onceDrained(callback) {
      if (error !== null || !stream.writableNeedDrain) callback();
      else drainWaiters.push(callback);
    },
    close(footer) {
      return new Promise<void>((resolve) => {
        if (error !== null || stream.destroyed) {
          stream.destroy();
          resolve();
          return;
        }
        stream.once('close', () => resolve());
        const line = footer.endsWith('\n') ? footer : `${footer}\n`;
        stream.end(endsWithNewline ? line : `\n${line}`);
      });
    },
    get error() {
      return error;
    },
  };
}
