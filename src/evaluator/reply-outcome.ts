// What one try of a provider call produced, and how the retry loop's outcome becomes an EvaluationResult.

import type { RetryOutcome } from './call-with-retries.js';
import { redactSecrets } from './describe-sdk-error.js';
import type { EvaluationResult, EvaluatorUsage, Verdict } from './types.js';

/** One try's reply: a verdict, or an answer we could not use. */
export type ReplyOutcome =
  | { kind: 'verdict'; verdict: Verdict; usage: EvaluatorUsage; model: string }
  | { kind: 'malformed'; message: string; usage: EvaluatorUsage };

// Maps the retry loop's outcome to the evaluator contract; every message is scrubbed of the secrets.
export function toEvaluationResult(
  provider: 'openai' | 'anthropic',
  outcome: RetryOutcome<ReplyOutcome>,
  secrets: readonly string[],
): EvaluationResult {
  if (!outcome.ok) {
    const message = redactSecrets(`${provider} evaluator: ${outcome.message}`, secrets);
    const rateLimited = outcome.rateLimited === undefined ? {} : { rateLimited: outcome.rateLimited };
    return { kind: 'error', message, usage: { inputTokens: 0, outputTokens: 0 }, attempts: outcome.attempts, ...rateLimited };
  }
  const value = outcome.value;
  if (value.kind === 'malformed') {
    // Malformed output is not retried: a model that answered off-schema tends to do it again, and the next
    // turn asks anew (the evaluator-failures breaker counts consecutive errors). Its tokens still count.
    const message = redactSecrets(`${provider} evaluator: ${value.message}`, secrets);
    return { kind: 'error', message, usage: value.usage, attempts: outcome.attempts };
  }
  return { kind: 'verdict', verdict: value.verdict, usage: value.usage, model: value.model };
}
