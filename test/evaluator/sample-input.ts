// Evaluation inputs for the evaluator tests.

import type { EvaluationInput } from '../../src/evaluator/types.js';
import type { CheckResult } from '../../src/workspace/types.js';

export const CONDITION = 'All tests pass and `npm run lint` reports no errors; the README documents the --retry flag.';

export function makeCheck(overrides: Partial<CheckResult> = {}): CheckResult {
  return {
    name: 'unit tests',
    command: 'npm test',
    exitCode: 0,
    passed: true,
    timedOut: false,
    durationMs: 1234,
    outputTail: '42 passed',
    ...overrides,
  };
}

export function makeInput(overrides: Partial<EvaluationInput> = {}): EvaluationInput {
  return {
    condition: CONDITION,
    turn: 3,
    maxTurns: 20,
    checks: [
      makeCheck(),
      makeCheck({ name: 'lint', command: 'npm run lint', exitCode: 1, passed: false, outputTail: 'src/retry.ts:3 no-unused-vars' }),
    ],
    files: [
      { path: 'src/retry.ts', status: 'M', added: 12, deleted: 3 },
      { path: 'README.md', status: 'M', added: 4, deleted: 0 },
      { path: 'assets/logo.png', status: 'A', added: null, deleted: null },
    ],
    patch: 'diff --git a/src/retry.ts b/src/retry.ts\n--- a/src/retry.ts\n+++ b/src/retry.ts\n@@ -1 +1 @@\n-old\n+new\n',
    agentFinalMessage: 'I added the --retry flag and documented it.',
    agentOutputTail: 'running npm test...\n42 passed\n',
    previousVerdict: null,
    ...overrides,
  };
}

export const ACHIEVED = {
  achieved: true,
  blocked: false,
  reason: 'All checks pass and the README documents --retry.',
  remaining: [],
  next_step: null,
  confidence: 0.9,
};

export const NOT_YET = {
  achieved: false,
  blocked: false,
  reason: 'lint fails on src/retry.ts.',
  remaining: ['fix the unused variable in src/retry.ts'],
  next_step: 'remove the unused import',
  confidence: 0.8,
};
