// The one error shape that crosses the socket, `{ "error": { "code", "message", "hint" } }`, and the HTTP
// status each GoaldError code maps to.

import { GoaldError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import { isRecord } from './reply-checks.js';

// `ambiguous` (an id prefix that matches several goals) is a 400, not a 409: the request names no single
// resource, and the client fixes it by sending a longer prefix, not by waiting for state to change.
// `conflict` (workspace busy with --no-queue, a daemon already listening) is the 409.
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  'bad-request': 400,
  usage: 400,
  config: 400,
  'not-a-git-repo': 400,
  'missing-api-key': 400,
  'same-model': 400,
  ambiguous: 400,
  // The dashboard's web guard (src/ui/web-guard.ts): a request it refuses, nothing done.
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  'state-corrupt': 500,
  'state-locked': 503,
  'daemon-unreachable': 503,
  'cluster-unreachable': 503,
  internal: 500,
};

const ERROR_CODES: ReadonlySet<string> = new Set(Object.keys(STATUS_BY_CODE));

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  hint?: string;
}

export interface ErrorEnvelope {
  error: ErrorBody;
}

/** The HTTP status for a GoaldError code. */
export function statusForCode(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

/** Wraps a GoaldError's facts in the envelope the server sends. */
export function toErrorEnvelope(error: GoaldError): ErrorEnvelope {
  return { error: error.toJSON() };
}

/** Whether `code` is one of goald's stable error codes. */
function isErrorCode(code: string): code is ErrorCode {
  return ERROR_CODES.has(code);
}

/** Rebuilds the GoaldError a server sent, or returns null when `body` is not an error envelope. */
export function parseErrorEnvelope(body: unknown): GoaldError | null {
  // Checked by hand, not with zod: the CLI loads this on every daemon call, and zod costs ~100 ms to load.
  if (!isRecord(body) || !isRecord(body.error)) return null;
  const { code, message, hint } = body.error;
  if (typeof code !== 'string' || typeof message !== 'string') return null;
  if (hint !== undefined && hint !== null && typeof hint !== 'string') return null;
  // Lenient on `code` so a newer daemon's unknown code still reaches the user's screen (as `internal`).
  return new GoaldError(isErrorCode(code) ? code : 'internal', message, hint ?? undefined);
}
