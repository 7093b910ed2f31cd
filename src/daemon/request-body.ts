// Reads a request body into memory up to a limit, and parses it as JSON. An oversized body is never
// buffered: reading stops at the limit (or before the first byte when Content-Length already says so).

import type { Readable } from 'node:stream';

import { GoaldError } from '../errors.js';

/** DESIGN.md § Daemon and control plane: body limit 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

export type BodyResult = { kind: 'ok'; bytes: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/** Collects `stream` unless it exceeds `limit` bytes (declared or actual) or the client goes away first. */
export function readBody(stream: Readable, declaredLength: number | null, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  if (declaredLength !== null && declaredLength > limit) return Promise.resolve({ kind: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: BodyResult): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onAbort);
      stream.off('close', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        // Stop pulling bytes off the socket; the server answers 413 and closes the connection.
        stream.pause();
        chunks.length = 0;
        settle({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle({ kind: 'ok', bytes: Buffer.concat(chunks, size) });
    const onAbort = (): void => settle({ kind: 'aborted' });
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onAbort);
    stream.once('close', onAbort);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

// A JSON.parse message quotes the start of the input; keep what goes back to the client short.
const MAX_PARSE_MESSAGE_CHARS = 200;

/** Parses a body as JSON; an empty body is `undefined`. Throws a `bad-request` GoaldError otherwise. */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  let textBody: string;
  try {
    textBody = utf8.decode(bytes);
  } catch {
    throw new GoaldError('bad-request', 'the request body is not valid UTF-8', 'send a JSON body encoded as UTF-8');
  }
  if (textBody.trim() === '') return undefined;
  try {
    return JSON.parse(textBody);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const shown = reason.length > MAX_PARSE_MESSAGE_CHARS ? `${reason.slice(0, MAX_PARSE_MESSAGE_CHARS - 3)}...` : reason;
    throw new GoaldError('bad-request', `the request body is not valid JSON: ${shown}`, 'send a JSON object, e.g. {"dir":"/abs/path","flags":{}}');
  }
}
