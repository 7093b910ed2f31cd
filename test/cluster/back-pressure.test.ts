// How long a cluster turn that met a 429 holds the fleet back (cluster-turn-runner.ts's backPressureOf).

import { describe, expect, it } from 'vitest';

import { backPressureOf } from '../../src/cluster/cluster-turn-runner.js';
import { makeTurn } from '../state/fixtures.js';

const NOW = 1_800_000_000_000;
const usage = { inputTokens: 0, outputTokens: 0 };

describe('backPressureOf', () => {
  it("is the wait an evaluator's 429 asked for, or 30 s when it gave none", () => {
    const asked = makeTurn({ evaluation: { kind: 'error', message: 'HTTP 429', usage, attempts: 3, rateLimited: { retryAfterMs: 7_000 } } });
    expect(backPressureOf(asked, null, NOW)).toBe(7_000);
    const unsaid = makeTurn({ evaluation: { kind: 'error', message: 'HTTP 429', usage, attempts: 3, rateLimited: { retryAfterMs: null } } });
    expect(backPressureOf(unsaid, null, NOW)).toBe(30_000);
  });

  it("is the time to an agent's usage-limit reset, even for a turn with no record", () => {
    expect(backPressureOf(null, NOW + 90_000, NOW)).toBe(90_000);
    expect(backPressureOf(null, NOW - 5, NOW)).toBe(0);
  });

  it('is 0 for a turn that met no limit: a verdict, or an evaluator that failed otherwise', () => {
    expect(backPressureOf(makeTurn({}), null, NOW)).toBe(0);
    expect(backPressureOf(makeTurn({ evaluation: { kind: 'error', message: 'HTTP 500', usage, attempts: 3 } }), null, NOW)).toBe(0);
  });
});
