// The turn transcript: everything the agent prints, appended to a file (mode 0600) as it arrives, so
// memory holds only a bounded tail however much the agent prints. Secrets are redacted on the way, also
// one split across two chunks (src/secrets/redact.ts).
// Written with synchronous calls: each chunk is one write(2) into the page cache, which also holds an agent
// that prints faster than that back (its pipe fills while goald writes). A write stream would take a
// round trip through libuv's thread pool for the open, every chunk and the close, and the turn waits for
// the last of them before its snapshot.

import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createStreamRedactor, redactSecrets } from '../secrets/redact.js';

export interface Transcript {
  /** Appends output (nothing, once the transcript could not be written). */
  write(chunk: Buffer | string): void;
  /** Appends the footer (on a line of its own) and closes the file. Never throws. */
  close(footer: string): void;
  /** Why the transcript could not be written; null while it is fine. Output is then only in the tail. */
  readonly error: string | null;
}

/**
 * Opens `path` for appending (creating its directory, 0700) and writes `header` as the first line. Secret
 * values of `env` (default process.env) and key-shaped strings never reach the file.
 */
export function openTranscript(path: string, header: string, env: NodeJS.ProcessEnv = process.env): Transcript {
  let error: string | null = null;
  let fd: number | null = null;
  let endsWithNewline = true;
  const closeFile = (): void => {
    if (fd === null) return;
    const open = fd;
    fd = null;
    try {
      closeSync(open);
    } catch (cause) {
      fail(cause);
    }
  };
  function fail(cause: unknown): void {
    error ??= `cannot write the transcript ${path}: ${cause instanceof Error ? cause.message : String(cause)}`;
    closeFile();
  }

  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    fd = openSync(path, 'a', 0o600);
  } catch (cause) {
    fail(cause);
  }
  const decoder = new StringDecoder('utf8');
  const redactor = createStreamRedactor(env);

  const writeText = (text: string): void => {
    if (fd === null || text.length === 0) return;
    try {
      writeFileSync(fd, text);
      endsWithNewline = text.endsWith('\n');
    } catch (cause) {
      fail(cause); // a full disk: the rest of the output is only in the tail
    }
  };
  writeText(redactSecrets(header.endsWith('\n') ? header : `${header}\n`, env));

  return {
    write(chunk) {
      if (fd === null || chunk.length === 0) return;
      writeText(redactor.push(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
    },
    close(footer) {
      if (fd === null) return;
      // The held end of the output (a possible secret's start) and any incomplete UTF-8 sequence.
      writeText(redactor.push(decoder.end()) + redactor.flush());
      const line = footer.endsWith('\n') ? footer : `${footer}\n`;
      writeText(endsWithNewline ? line : `\n${line}`);
      closeFile();
    },
    get error() {
      return error;
    },
  };
}
