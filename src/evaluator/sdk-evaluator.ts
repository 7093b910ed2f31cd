// What the OpenAI and Anthropic evaluators share: their options, and the evaluate() that builds the
// evidence, runs one provider try under our retry loop and maps the outcome to the evaluator contract.

import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { BackoffOptions } from './call-with-retries.js';
import { callWithRetries, resolveRetryPolicy } from './call-with-retries.js';
import type { SdkErrorClasses } from './describe-sdk-error.js';
import { describeSdkError, secretsOf } from './describe-sdk-error.js';
import { buildEvaluationMessages, DEFAULT_MAX_INPUT_CHARS } from './evidence.js';
import type { ReplyOutcome } from './reply-outcome.js';
import { toEvaluationResult } from './reply-outcome.js';
import type { EvaluationInput, EvaluationResult, Evaluator } from './types.js';

export interface SdkEvaluatorOptions {
  model: string;
  baseURL: string;
  apiKey: string;
  /** Budget of one try (request and reply). */
  timeoutMs: number;
  /** Retries after the first try for retryable statuses, connection errors and timeouts (default 2). */
  retries?: number;
  /** Bound on the evidence message (default 24 000 chars). */
  maxInputChars?: number;
  /** Replaces global fetch inside the SDK. */
  fetch?: typeof globalThis.fetch;
  backoff?: BackoffOptions;
  /** Sleeps between retries. */
  clock?: Clock;
}

/** One provider try: sends the evidence and reads the reply. */
export type SdkAttempt = (system: string, user: string, signal: AbortSignal) => Promise<ReplyOutcome>;

// Rounds the per-try budget to what the SDKs accept: only positive integer timeouts.
export function sdkTimeoutMs(timeoutMs: number): number {
  return Math.max(1, Math.round(timeoutMs));
}

// Wraps one provider's try into an Evaluator with goald's retry loop, error descriptions and redaction.
export function createSdkEvaluator(
  provider: 'openai' | 'anthropic',
  options: SdkEvaluatorOptions,
  classes: SdkErrorClasses,
  attempt: SdkAttempt,
): Evaluator {
  const timeoutMs = sdkTimeoutMs(options.timeoutMs);
  const clock = options.clock ?? systemClock;
  const maxInputChars = options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS;
  const policy = resolveRetryPolicy({ ...options, timeoutMs, clock });
  const secrets = secretsOf(options.apiKey, options.baseURL);
  return {
    provider,
    model: options.model,
    async evaluate(input: EvaluationInput, signal?: AbortSignal): Promise<EvaluationResult> {
      const { system, user } = buildEvaluationMessages(input, maxInputChars);
      const outcome = await callWithRetries(
        (attemptSignal) => attempt(system, user, attemptSignal),
        (error, timedOut) =>
          describeSdkError(error, timedOut, { classes, timeoutMs, baseURL: options.baseURL, now: clock.now() }),
        policy,
        signal,
      );
      return toEvaluationResult(provider, outcome, secrets);
    },
  };
}
