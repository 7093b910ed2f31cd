// The owner's guidance (`goald say`) waiting for the next turn's prompt. Held in memory by the supervisor:
// a daemon restart drops what no prompt carried yet (each turn record keeps what its prompt carried).

import { MAX_GUIDANCE_CHARS } from '../prompt/guidance-block.js';

// Enough for any real conversation with a running goal; a flood is cut from the oldest.
const MAX_QUEUED = 10;

export class GuidanceQueue {
  private queued: string[] = [];

  /** Adds one piece (at most MAX_GUIDANCE_CHARS, checked by the caller too); resolves how many wait. */
  add(text: string): number {
    this.queued.push(text.slice(0, MAX_GUIDANCE_CHARS));
    if (this.queued.length > MAX_QUEUED) this.queued = this.queued.slice(-MAX_QUEUED);
    return this.queued.length;
  }

  /** Everything queued, oldest first, leaving the queue empty. */
  take(): string[] {
    const taken = this.queued;
    this.queued = [];
    return taken;
  }
}
