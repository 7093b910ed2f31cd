// Active time of one goal: wall time with the paused stretches left out. Turn timeouts, the wall-clock
// budget and the summary read it; the breakers take it turn by turn (sinceBoundary).

import type { Clock } from '../clock.js';

export class ActiveClock {
  private readonly clock: Clock;
  /** Active time of the stretches before the current one. */
  private msBeforeStretch: number;
  /** Start of the current un-paused stretch. */
  private stretchStart: number;
  private pausedAt: number | null = null;
  /** Active time at the last turn boundary: what the breakers already counted. */
  private boundaryMs: number;

  /** `alreadyActiveMs`: the active time a restored goal had when it was stored. */
  constructor(clock: Clock, alreadyActiveMs: number) {
    this.clock = clock;
    this.msBeforeStretch = alreadyActiveMs;
    this.boundaryMs = alreadyActiveMs;
    this.stretchStart = clock.now();
  }

  /** Active milliseconds so far. */
  activeMs(): number {
    if (this.pausedAt !== null) return this.msBeforeStretch;
    return this.msBeforeStretch + (this.clock.now() - this.stretchStart);
  }

  /** Stops counting (idempotent). */
  pause(): void {
    if (this.pausedAt !== null) return;
    this.msBeforeStretch = this.activeMs();
    this.pausedAt = this.clock.now();
  }

  /** Counts again from now (idempotent). */
  resume(): void {
    if (this.pausedAt === null) return;
    this.pausedAt = null;
    this.stretchStart = this.clock.now();
  }

  /** Active time since the previous call (or since the clock was made), for one turn's breaker facts. */
  takeSinceBoundary(): number {
    const now = this.activeMs();
    const since = now - this.boundaryMs;
    this.boundaryMs = now;
    return since;
  }
}
