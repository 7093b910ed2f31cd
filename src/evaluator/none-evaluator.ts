// The `none` evaluator: no model is asked; the supervisor treats all checks passing as the goal achieved.

import type { Evaluator } from './types.js';

// Creates the evaluator that always defers to the checks.
export function createNoneEvaluator(): Evaluator {
  return {
    provider: 'none',
    model: null,
    evaluate: () => Promise.resolve({ kind: 'skipped', reason: 'checks decide' }),
  };
}
