import { describe, expect, it } from 'vitest';
import { readStartLog } from '../../src/daemon/auto-start.js';

describe('readStartLog', () => {
  it('sees a lost lock race even when the winner has logged requests after the loser', () => {
    // What CI saw with ten CLIs auto-starting at once: the loser's line, then the winner serving pings.
    const lines = [
      '2026-12-02T01:06:05.401Z goald 0.1.0 listening on /tmp/gd/h/goald.sock',
      'goald: a goald daemon (pid 4242) already runs for /tmp/gd/h — use it, or stop it first with: goald daemon stop',
      '2026-12-02T01:06:05.410Z GET /v1/ping 200 1ms',
    ];
    expect(readStartLog(lines)).toEqual({ lostTheLock: true, line: lines[1] });
  });

  it('reports the start error itself, not a request line logged after it', () => {
    const lines = ['goald: /tmp/gd/h/state.json is not valid JSON — move it aside', '2026-12-02T01:06:05.410Z GET /v1/ping 200 1ms'];
    expect(readStartLog(lines)).toEqual({ lostTheLock: false, line: lines[0] });
  });

  it('falls back to the last line, and to nothing when nothing was logged', () => {
    expect(readStartLog(['Segmentation fault'])).toEqual({ lostTheLock: false, line: 'Segmentation fault' });
    expect(readStartLog([])).toEqual({ lostTheLock: false, line: '' });
  });
});
