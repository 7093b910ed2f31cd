// The one way a test waits for a condition: vitest's vi.waitFor, polled at a short interval and always
// bounded, failing with what the test waited for instead of vi.waitFor's bare last error.

import { vi } from 'vitest';

const POLL_INTERVAL_MS = 25;

/**
 * Polls `probe` until it returns something other than undefined or false, and returns that. A probe that
 * throws (a file not written yet) has not held yet. Fails after `timeoutMs`, naming `what` and the last error.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const notYet = new Error(`not yet: ${what}`);
  try {
    return await vi.waitFor(
      async () => {
        const value = await probe();
        if (value === undefined || value === false) throw notYet;
        return value;
      },
      { timeout: timeoutMs, interval: POLL_INTERVAL_MS },
    );
  } catch (error) {
    // vi.waitFor rejects with the probe's last error, or its own "Timed out" when no probe had finished.
    const probeError = error !== notYet && error instanceof Error && !error.message.startsWith('Timed out in waitFor');
    const cause = probeError ? ` (last error: ${error.message})` : '';
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`, { cause: error });
  }
}
