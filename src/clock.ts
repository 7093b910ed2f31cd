// Time behind an interface so tests can simulate it where real time would make them slow.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * Milliseconds on a monotonic clock, for durations and deadlines (the wall clock can jump). The same clock
 * as `performance.now()`, whose first use loads ten of Node's perf_hooks modules (~0.6 ms of a CLI start).
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
