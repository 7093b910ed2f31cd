// One model call with goald's retry loop around the provider's single try (the SDKs run with maxRetries 0):
// 408/409/429/5xx and connection failures are retried up to MODEL_RETRIES times, honouring retry-after; an
// answer that says the account's quota or usage limit is spent is not retried but reported, so the goal
// pauses like it does for the other adapters.

import { systemClock, type Clock } from '../../../clock.js';
import { callWithRetries, parseRetryAfter, resolveRetryPolicy } from '../../../evaluator/call-with-retries.js';
import { apiErrorDetail, describeSdkError } from '../../../evaluator/describe-sdk-error.js';
import type { ModelProvider, ModelReply, ModelRequest } from './provider.js';

/** Retries after the first try (the "retries exhausted after 5"). */
const MODEL_RETRIES = 5;
// A slow local model streaming a long reply takes minutes; a try that takes longer is hung.
const TRY_TIMEOUT_MS = 10 * 60_000;
// What quota and usage-limit answers say (OpenAI's insufficient_quota, Anthropic's credit balance, proxies).
const USAGE_LIMIT_TEXT = /insufficient_quota|quota|usage limit|usage_limit|credit balance|billing/i;

/** Why a model call failed after its retries: a usage limit (the goal pauses) or anything else. */
export class ModelCallError extends Error {
  override readonly name = 'ModelCallError';
  readonly kind: 'usage-limit' | 'failed';
  /** With `usage-limit`: when it resets (ms since epoch), if the server said. */
  readonly resetAt: number | null;

  constructor(kind: 'usage-limit' | 'failed', message: string, resetAt: number | null = null) {
    super(message);
    this.kind = kind;
    this.resetAt = resetAt;
  }
}

/** Calls the model with retries; rejects with ModelCallError, or with the signal's reason when it aborts. */
export async function callModel(
  provider: ModelProvider,
  request: ModelRequest,
  signal: AbortSignal,
  clock: Clock = systemClock,
): Promise<ModelReply> {
  // Set by the failure callback when an answer was a usage limit (an object: the callback assigns it).
  const found: { limit: { message: string; resetAt: number | null } | null } = { limit: null };
  const policy = resolveRetryPolicy({ retries: MODEL_RETRIES, timeoutMs: TRY_TIMEOUT_MS, clock });
  const outcome = await callWithRetries(
    (trySignal) => provider.attempt(request, trySignal),
    (error, timedOut) => {
      const failure = describeSdkError(error, timedOut, {
        classes: provider.errorClasses,
        timeoutMs: TRY_TIMEOUT_MS,
        baseURL: provider.baseURL,
        now: clock.now(),
        caller: 'model',
      });
      if (!timedOut && error instanceof provider.errorClasses.APIError && isUsageLimit(error)) {
        const wait = parseRetryAfter(error.headers, clock.now());
        found.limit = { message: failure.message, resetAt: wait === null ? null : clock.now() + wait };
        return { ...failure, retryable: false };
      }
      return failure;
    },
    policy,
    signal,
  );
  if (outcome.ok) return outcome.value;
  const limit = found.limit;
  if (limit !== null) throw new ModelCallError('usage-limit', limit.message, limit.resetAt);
  throw new ModelCallError('failed', outcome.message);
}

function isUsageLimit(error: { status: number | undefined; headers: Headers | undefined; error: unknown; message: string }): boolean {
  if (error.status !== 429 && error.status !== 402 && error.status !== 403 && error.status !== 400) return false;
  return USAGE_LIMIT_TEXT.test(`${apiErrorDetail(error)} ${safeJson(error.error)}`);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
