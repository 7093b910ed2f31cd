// The evaluator contract: a separate model judges whether the goal is met from bounded evidence.

import type { GuardNote, TamperFinding } from '../guard/types.js';
import type { CheckResult, FileChange } from '../workspace/types.js';

export interface Verdict {
  achieved: boolean;
  /** The goal cannot progress without a human (missing credentials, an impossible condition). */
  blocked: boolean;
  reason: string;
  remaining: string[];
  nextStep?: string;
  confidence?: number;
}

export interface EvaluationInput {
  condition: string;
  turn: number;
  maxTurns: number;
  checks: CheckResult[];
  /** Files changed by this turn with numstat. */
  files: FileChange[];
  /** Unified patch of this turn (already bounded by the caller or cut by the evaluator). */
  patch: string;
  agentFinalMessage: string;
  agentOutputTail: string;
  previousVerdict: Verdict | null;
  /** The tamper guard's findings on this turn: the goal cannot be met with any (src/guard/). */
  tamper?: readonly TamperFinding[];
  /** What the guard reported without counting it as tamper (lost assertions). */
  guardNotes?: readonly GuardNote[];
}

export interface EvaluatorUsage {
  inputTokens: number;
  outputTokens: number;
}

export type EvaluationResult =
  | { kind: 'verdict'; verdict: Verdict; usage: EvaluatorUsage; model: string }
  | {
      kind: 'error';
      message: string;
      usage: EvaluatorUsage;
      attempts: number;
      /** The provider's last answer was HTTP 429, with the wait it asked for (ms) when it said (a cluster backs off its queue). */
      rateLimited?: { retryAfterMs: number | null };
    }
  | { kind: 'skipped'; reason: string };

export interface Evaluator {
  readonly provider: 'openai' | 'anthropic' | 'none';
  readonly model: string | null;
  /** Never rejects for HTTP or model errors: they come back as `{ kind: 'error' }` after retries. */
  evaluate(input: EvaluationInput, signal?: AbortSignal): Promise<EvaluationResult>;
}
