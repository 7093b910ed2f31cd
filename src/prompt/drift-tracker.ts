// Drift between turns: the supervisor folds each turn's parsed tool calls in and gets the turn's drift
// record and the warning for the next prompt. The in-turn hook (src/hook/) keeps its own state on disk.

import type { ToolCall } from '../agents/types.js';
import {
  DRIFT_WINDOW,
  driftWarning,
  INITIAL_DRIFT_STATE,
  nextDriftState,
  scoreDrift,
  type DriftResult,
  type DriftState,
} from './drift.js';

/** One turn's drift as its record stores it. */
export interface DriftAssessment extends DriftResult {
  consecutiveHigh: number;
  /** Persistent high drift (or the hook said so): a human should look before more turns are spent. */
  pause: boolean;
}

export class DriftTracker {
  private readonly goal: string;
  private state: DriftState = INITIAL_DRIFT_STATE;
  private recentCalls: ToolCall[] = [];
  private warningLine: string | null = null;

  constructor(goal: string) {
    this.goal = goal;
  }

  /** The drift warning for the next prompt; null while drift is low or unmeasured. */
  get warning(): string | null {
    return this.warningLine;
  }

  /**
   * Folds one turn's tool calls in. Null when the turn made none and the hook did not ask for a pause
   * (nothing was measured); `hookAskedPause` forces `pause`.
   */
  assess(calls: readonly ToolCall[], hookAskedPause: boolean): DriftAssessment | null {
    if (calls.length === 0 && !hookAskedPause) return null;
    this.recentCalls = [...this.recentCalls, ...calls].slice(-DRIFT_WINDOW);
    const score = scoreDrift({ goal: this.goal, recentCalls: this.recentCalls });
    this.state = nextDriftState(this.state, score);
    this.warningLine = driftWarning(score);
    return { ...score, consecutiveHigh: this.state.consecutiveHigh, pause: this.state.shouldPause || hookAskedPause };
  }
}
