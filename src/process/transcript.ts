// The turn transcript: everything the agent prints, appended to a file (mode 0600) as it arrives, so
// memory holds only a bounded tail however much the agent prints. Secrets are redacted on the way, also
// one split across two chunks (src/secrets/redact.ts).

import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createStreamRedactor, redactSecrets } from '../secrets/redact.js';

export interface Transcript {
  /** Appends output; false means the file is behind and the caller should pause until `onceDrained`. */
  write(chunk: Buffer | string): boolean;
  onceDrained(callback: () => void): void;
  /** Appends the footer (on a line of its own) and closes the file. Never rejects. */
  close(footer: string): Promise<void>;
  /** Why the transcript could not be written; null while it is fine. Output is then only in the tail. */
  readonly error: string | null;
}

/**
 * Opens `path` for appending (creating its directory, 0700) and writes `header` as the first line. Secret
 * values of `env` (default process.env) and key-shaped strings never reach the file.
 */
export function openTranscript(path: string, header: string, env: NodeJS.ProcessEnv = process.env): Transcript {
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
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (cause) {
    fail(cause);
  }
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  stream.on('error', fail);
  stream.on('drain', releaseWaiters);
  const decoder = new StringDecoder('utf8');
  const redactor = createStreamRedactor(env);

  const writeText = (text: string): boolean => {
    if (error !== null || text.length === 0) return true;
    endsWithNewline = text.endsWith('\n');
    return stream.write(text);
  };
  const write = (chunk: Buffer | string): boolean => {
    if (error !== null || chunk.length === 0) return true;
    return writeText(redactor.push(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
  };
  writeText(redactSecrets(header.endsWith('\n') ? header : `${header}\n`, env));

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
        // The held end of the output (a possible secret's start) and any incomplete UTF-8 sequence.
        writeText(redactor.push(decoder.end()) + redactor.flush());
        const line = footer.endsWith('\n') ? footer : `${footer}\n`;
        stream.end(endsWithNewline ? line : `\n${line}`);
      });
    },
    get error() {
      return error;
    },
  };
}
