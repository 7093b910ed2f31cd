// Turns an error thrown by the OpenAI or Anthropic SDK into a one-line message and a retry decision. Both
// SDKs are generated from the same template, so one function serves both given their error classes.

import type { AttemptFailure } from './call-with-retries.js';
import { parseRetryAfter } from './call-with-retries.js';

interface SdkApiError {
  status: number | undefined;
  headers: Headers | undefined;
  error: unknown;
  message: string;
}

/** The SDK's error classes, as exported on its client (`OpenAI.APIError`, `Anthropic.APIError`, ...). */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => SdkApiError;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

const MAX_DETAIL_CHARS = 300;

// 408 request timeout, 409 lock contention, 429 rate limit and 5xx are worth another try: the SDKs'
// own default retry rule, which we replace.
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

// Describes one failed try; `timedOut` is true when our own per-try timer aborted it.
export function describeSdkError(
  error: unknown,
  timedOut: boolean,
  classes: SdkErrorClasses,
  timeoutMs: number,
  now: number,
): AttemptFailure {
  if (timedOut || error instanceof classes.APIConnectionTimeoutError) {
    return { retryable: true, retryAfterMs: null, message: `the evaluator API did not answer within ${timeoutMs} ms` };
  }
  if (error instanceof classes.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { retryable: true, retryAfterMs: null, message: `could not reach the evaluator API${cause}` };
  }
  if (error instanceof classes.APIError && error.status !== undefined) {
    const shouldRetry = error.headers?.get('x-should-retry');
    const retryable = shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : isRetryableStatus(error.status);
    return {
      retryable,
      retryAfterMs: parseRetryAfter(error.headers, now),
      message: `the evaluator API answered HTTP ${error.status}: ${apiErrorDetail(error)}`,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { retryable: false, retryAfterMs: null, message: `the evaluator request failed: ${cut(message)}` };
}

/** The text of an API error body: `error.message` in either provider's shape, else the SDK's message. */
export function apiErrorDetail(error: SdkApiError): string {
  const body = error.error;
  const nested = readMessage(body) ?? readMessage(isRecord(body) ? body.error : undefined);
  return cut(nested ?? error.message);
}

function readMessage(value: unknown): string | null {
  return isRecord(value) && typeof value.message === 'string' ? value.message : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function cut(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_DETAIL_CHARS ? flat : `${flat.slice(0, MAX_DETAIL_CHARS - 3)}...`;
}

// Removes every occurrence of the secret from text. Servers and proxies sometimes echo the key they were
// sent ("Invalid API key: sk-..."), and goald's messages end up in logs and state files.
export function redactSecret(text: string, secret: string): string {
  if (secret.length < 4) return text;
  return text.split(secret).join('[redacted]');
}
