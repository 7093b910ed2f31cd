// Turns an error thrown by the OpenAI or Anthropic SDK into a one-line message and a retry decision. Both
// SDKs are generated from the same template, so one function serves both given their error classes.

import { clip } from '../cut-text.js';
import { errorChain } from '../error-chain.js';
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

export interface SdkErrorContext {
  classes: SdkErrorClasses;
  timeoutMs: number;
  /** Named in messages by host only, so credentials or paths in it never reach a log. */
  baseURL: string;
  now: number;
  /** Who calls the API, named in messages (default `evaluator`; the builtin agent says `model`). */
  caller?: string;
}

const MAX_DETAIL_CHARS = 300;

// 408 request timeout, 409 lock contention, 429 rate limit and 5xx are worth another try: the SDKs'
// own default retry rule, which we replace.
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

// Describes one failed try; `timedOut` is true when our own per-try timer aborted it.
export function describeSdkError(error: unknown, timedOut: boolean, context: SdkErrorContext): AttemptFailure {
  const { classes, timeoutMs, now } = context;
  const where = describeEndpoint(context.baseURL, context.caller ?? 'evaluator');
  if (timedOut || error instanceof classes.APIConnectionTimeoutError) {
    return { retryable: true, retryAfterMs: null, message: `${where} did not answer within ${timeoutMs} ms` };
  }
  if (error instanceof classes.APIConnectionError) {
    const cause = rootCause(error);
    return { retryable: true, retryAfterMs: null, message: `could not reach ${where}${cause === '' ? '' : `: ${cut(cause)}`}` };
  }
  if (error instanceof classes.APIError && error.status !== undefined) {
    const shouldRetry = error.headers?.get('x-should-retry');
    const retryable = shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : isRetryableStatus(error.status);
    return {
      retryable,
      retryAfterMs: parseRetryAfter(error.headers, now),
      message: `${where} answered HTTP ${error.status}: ${apiErrorDetail(error)}`,
      ...(error.status === 429 ? { rateLimited: true } : {}),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { retryable: false, retryAfterMs: null, message: `the ${context.caller ?? 'evaluator'} request failed: ${cut(message)}` };
}

// "the evaluator API at host:port", or without the host when the URL does not parse.
function describeEndpoint(baseURL: string, caller: string): string {
  try {
    return `the ${caller} API at ${new URL(baseURL).host}`;
  } catch {
    return `the ${caller} API`;
  }
}

// The innermost cause's message: fetch says only "fetch failed"; the socket error below it says why
// ("connect ECONNREFUSED 127.0.0.1:9", "getaddrinfo ENOTFOUND ...").
function rootCause(error: Error): string {
  return errorChain(error.cause).at(-1)?.message ?? '';
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
  return clip(text, MAX_DETAIL_CHARS, '...');
}

// Removes every occurrence of each secret from text. Servers and proxies sometimes echo the key they were
// sent ("Invalid API key: sk-..."), fetch quotes URLs with their credentials, and goald's messages end up
// in logs and state files.
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  // Too short to be a credential, and redacting it would shred ordinary words.
  for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join('[redacted]');
  return result;
}

/** The API key and any password written into the base URL (`https://user:pass@host`). */
export function secretsOf(apiKey: string, baseURL: string): string[] {
  const secrets = [apiKey];
  try {
    const url = new URL(baseURL);
    if (url.password !== '') secrets.push(url.password, decodeURIComponent(url.password));
  } catch {
    // an unparsable URL fails the request itself; nothing more to hide
  }
  return secrets;
}
