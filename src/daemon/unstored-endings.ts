// Endings the store could not take. A goal that failed because the disk is full usually cannot store that
// either: its record in state.json still says `active`. The daemon knows better; it shows the ending in
// place of the stored record (status, show, logs -f) and stores it as soon as the store takes writes again
// (at the next read through the daemon, e.g. after `goald prune` or any freed space).

import { BREAKER_NAMES, type BreakerName } from '../../machines/goal.machine.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { recordGoalEnding, type GoalEnding } from './mark-goal-failed.js';
import { isLiveGoal } from './resolve-goal.js';

type FinishedEvent = Extract<ProgressEvent, { type: 'goal.finished' }>;

interface PendingEnding extends GoalEnding {
  /** When the goal ended (the time stored with it). */
  at: Date;
}

function isBreakerName(reason: string | null): reason is BreakerName {
  return reason !== null && (BREAKER_NAMES as readonly string[]).includes(reason);
}

/** The `goal.finished` event a finished goal's record tells (for an event log that lacks it). */
export function finishedEventOf(goal: GoalRecord): FinishedEvent {
  return {
    type: 'goal.finished',
    id: goal.id,
    status: goal.status === 'achieved' ? 'achieved' : 'failed',
    reason: goal.status === 'achieved' ? null : goal.reason,
    breaker: goal.status === 'achieved' || !isBreakerName(goal.reason) ? null : goal.reason,
    turns: goal.summary.turns,
    tokens: goal.summary.tokens,
  };
}

/** Endings announced but not yet stored, by goal id. */
export class UnstoredEndings {
  private readonly pending = new Map<string, PendingEnding>();

  /** Remembers an ending the store refused. */
  add(goalId: string, ending: GoalEnding, at: Date): void {
    this.pending.set(goalId, { ...ending, at });
  }

  /** Stores the endings the store now takes; keeps the others (and never throws). */
  async flush(store: Store): Promise<void> {
    for (const [goalId, ending] of [...this.pending]) {
      try {
        await recordGoalEnding(store, goalId, ending, ending.at);
        this.pending.delete(goalId);
      } catch {
        return; // still refused: the rest would be too
      }
    }
  }

  /** Whether no ending waits to be stored. */
  isEmpty(): boolean {
    return this.pending.size === 0;
  }

  /** Whether an ending of this goal waits to be stored (apply() may show it finished). */
  has(goalId: string): boolean {
    return this.pending.has(goalId);
  }

  /** The goal as it should be shown: its stored record, or the ending the store has not taken yet. */
  apply(goal: GoalRecord): GoalRecord {
    const ending = this.pending.get(goal.id);
    if (ending === undefined || !isLiveGoal(goal)) return goal;
    return {
      ...goal,
      status: ending.status,
      phase: ending.status,
      reason: ending.reason,
      reasonMessage: ending.message,
      finishedAt: ending.at.toISOString(),
      pauseReason: null,
      runningAgent: null,
    };
  }
}
