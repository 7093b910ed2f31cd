import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { callWithRetries, nextDelayMs, parseRetryAfter } from '../../src/evaluator/call-with-retries.js';
import type { RetryPolicy } from '../../src/evaluator/call-with-retries.js';

const noWaitClock: Clock & { sleeps: number[] } = {
  sleeps: [],
  now: () => 0,
  sleep(ms) {
    this.sleeps.push(ms);
    return Promise.resolve();
  },
};

function policy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    retries: 2,
    timeoutMs: 1_000,
    baseDelayMs: 500,
    maxDelayMs: 8_000,
    maxRetryAfterMs: 60_000,
    clock: noWaitClock,
    ...overrides,
  };
}

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  const cases: Array<[Record<string, string>, number | null]> = [
    [{}, null],
    [{ 'retry-after': '0' }, 0],
    [{ 'retry-after': '2' }, 2_000],
    [{ 'retry-after': '1.5' }, 1_500],
    [{ 'retry-after-ms': '250' }, 250],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after-ms': 'soon', 'retry-after': '1' }, 1_000],
    [{ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }, 0],
    [{ 'retry-after': 'whenever' }, null],
    [{ 'retry-after': '-5' }, null],
  ];
  for (const [headers, expected] of cases) {
    it(`reads ${JSON.stringify(headers)} as ${expected}`, () => {
      expect(parseRetryAfter(new Headers(headers), now)).toBe(expected);
    });
  }
});

describe('nextDelayMs', () => {
  const limits = { baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };
  const cases: Array<[number | null, number, number]> = [
    [null, 1, 500],
    [null, 2, 1_000],
    [null, 3, 2_000],
    [null, 10, 8_000],
    [0, 1, 0],
    [1_234, 3, 1_234],
    [3_600_000, 1, 60_000],
  ];
  for (const [retryAfter, retry, expected] of cases) {
    it(`waits ${expected} ms before retry ${retry} given retry-after ${retryAfter}`, () => {
      expect(nextDelayMs(retryAfter, retry, limits)).toBe(expected);
    });
  }
});

describe('callWithRetries', () => {
  it('stops at the first non-retryable failure', async () => {
    let calls = 0;
    const outcome = await callWithRetries(
      () => {
        calls += 1;
        return Promise.reject(new Error('bad request'));
      },
      (error) => ({ retryable: false, retryAfterMs: null, message: (error as Error).message }),
      policy(),
    );
    expect(outcome).toEqual({ ok: false, message: 'bad request (after 1 attempt)', attempts: 1 });
    expect(calls).toBe(1);
  });

  it('aborts a try that overruns its timeout and reports it as timed out', async () => {
    const outcome = await callWithRetries(
      (signal) =>
        new Promise<never>((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      (_error, timedOut) => ({ retryable: true, retryAfterMs: 0, message: timedOut ? 'timed out' : 'other' }),
      policy({ retries: 1, timeoutMs: 20 }),
    );
    expect(outcome).toEqual({ ok: false, message: 'timed out (after 2 attempts)', attempts: 2 });
  });
});
