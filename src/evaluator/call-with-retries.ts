// Our own retry loop around one evaluator request (the SDKs run with maxRetries: 0), so the number of tries,
// the backoff, the retry-after cap and the per-try timeout are goald's and visible in the result.

import type { Clock } from '../clock.js';

export interface RetryPolicy {
  /** Retries after the first try. */
  retries: number;
  /** Budget of one try, from sending the request to decoding the reply. */
  timeoutMs: number;
  /** First backoff wait when the server gives no retry-after; doubles each retry. */
  baseDelayMs: number;
  /** Cap on the doubling backoff. */
  maxDelayMs: number;
  /** Cap on a server's retry-after: past it we retry anyway rather than stall a turn for an hour. */
  maxRetryAfterMs: number;
  clock: Clock;
}

const DEFAULT_RETRIES = 2;
// Backoff 500 ms, 1 s, 2 s ... capped at 8 s: the same start as the OpenAI and Anthropic SDKs' own retry.
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 8_000;
// A minute is long for one turn's verdict yet short enough that a goal is never stuck on a rate limit.
const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

export interface BackoffOptions {
  /** First wait when the server gives no retry-after (default 500 ms); doubles each retry. */
  baseDelayMs?: number;
  /** Cap on the doubling wait (default 8 s). */
  maxDelayMs?: number;
  /** Cap on a server's retry-after (default 60 s). */
  maxRetryAfterMs?: number;
}

// Fills a policy from an evaluator's options and the defaults above.
export function resolveRetryPolicy(options: {
  retries?: number | undefined;
  timeoutMs: number;
  backoff?: BackoffOptions | undefined;
  clock: Clock;
}): RetryPolicy {
  return {
    retries: Math.max(0, Math.floor(options.retries ?? DEFAULT_RETRIES)),
    timeoutMs: options.timeoutMs,
    baseDelayMs: options.backoff?.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
    maxDelayMs: options.backoff?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
    maxRetryAfterMs: options.backoff?.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
    clock: options.clock,
  };
}

/** How one failed try should be reported and whether it is worth another. */
export interface AttemptFailure {
  retryable: boolean;
  /** The server's requested wait (retry-after-ms / retry-after), already parsed; null when absent. */
  retryAfterMs: number | null;
  message: string;
  /** HTTP 429: the provider asks its callers to slow down. */
  rateLimited?: boolean;
}

export type RetryOutcome<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; message: string; attempts: number; rateLimited?: { retryAfterMs: number | null } };

// Runs `attempt` until it resolves or a failure is not retryable or retries run out. Rejects only when
// `signal` aborts (with its reason); every other failure comes back as a value.
export async function callWithRetries<T>(
  attempt: (signal: AbortSignal) => Promise<T>,
  describeFailure: (error: unknown, timedOut: boolean) => AttemptFailure,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<RetryOutcome<T>> {
  let attempts = 0;
  for (;;) {
    throwIfAborted(signal);
    attempts += 1;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${policy.timeoutMs} ms`));
    }, policy.timeoutMs);
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let failure: AttemptFailure;
    try {
      const value = await attempt(controller.signal);
      return { ok: true, value, attempts };
    } catch (error) {
      throwIfAborted(signal);
      failure = describeFailure(error, timedOut);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const retriesUsed = attempts - 1;
    if (!failure.retryable || retriesUsed >= policy.retries) {
      const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
      const rateLimited = failure.rateLimited === true ? { rateLimited: { retryAfterMs: failure.retryAfterMs } } : {};
      return { ok: false, message: `${failure.message} (after ${tries})`, attempts, ...rateLimited };
    }
    await policy.clock.sleep(nextDelayMs(failure.retryAfterMs, retriesUsed + 1, policy), signal);
  }
}

// The wait before retry number `retry` (1-based): the server's retry-after when given, capped; else backoff.
export function nextDelayMs(
  retryAfterMs: number | null,
  retry: number,
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'maxRetryAfterMs'>,
): number {
  if (retryAfterMs !== null) return Math.min(Math.max(0, retryAfterMs), policy.maxRetryAfterMs);
  return Math.min(policy.baseDelayMs * 2 ** (retry - 1), policy.maxDelayMs);
}

// Reads `retry-after-ms` (milliseconds, OpenAI/Anthropic extension) or `retry-after` (seconds or HTTP date).
export function parseRetryAfter(headers: Headers | undefined, now: number): number | null {
  if (headers === undefined) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return null;
  const seconds = Number(after);
  // A number is seconds (a negative one is nonsense); only other text can be an HTTP date.
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
}
