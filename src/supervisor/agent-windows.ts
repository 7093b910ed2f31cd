// When the goal's agent ran, turn by turn: the tamper guard counts a change to a file git ignores as the
// agent's only when its ctime falls in one of these (workspace/ignored-changes.ts), so what the checks
// write between turns is not taken for the agent's work. A supervisor that took over a goal (a restarted
// daemon, a cluster worker's turn) reads the earlier turns' windows from the turn log when first asked.

import { readTurnRecords } from '../../state/index.js';
import type { TurnRecord } from './types.js';
import type { TimeWindow } from '../workspace/time-window.js';

export class AgentWindows {
  readonly #goalDir: string;
  /** Every window so far; null until the earlier turns' are read (a goal taken over mid-way). */
  #windows: TimeWindow[] | null;

  constructor(goalDir: string, options: { takenOver: boolean }) {
    this.#goalDir = goalDir;
    this.#windows = options.takenOver ? null : [];
  }

  /** A turn's window, once its agent has ended. */
  add(window: TimeWindow): void {
    this.#windows?.push(window);
  }

  /** Every window so far, `current` (this turn's, not yet in the turn log) included. */
  async soFar(current: TimeWindow | undefined): Promise<readonly TimeWindow[]> {
    if (this.#windows === null) {
      const earlier = (await readTurnRecords(this.#goalDir)).flatMap(windowOfRecord);
      this.#windows = current === undefined ? earlier : [...earlier, current];
    }
    return this.#windows;
  }
}

// A recorded turn's window; a record older than the field gives the whole turn (its checks too: more
// may be reported than the agent changed, never less).
function windowOfRecord(record: TurnRecord): TimeWindow[] {
  if (record.agent === null) return [];
  if (record.agent.window !== undefined) return [record.agent.window];
  return [{ from: Date.parse(record.startedAt), to: Date.parse(record.finishedAt) }];
}
