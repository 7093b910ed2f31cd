// Drift inside one builtin turn, with the Claude Code hook's thresholds (src/prompt/drift.ts): at every
// reflection the recent tool calls are scored; once the score stays high for DRIFT_PAUSE_CHECKS checks in a
// row, `drift-pause` is written to the turn's state directory, where the supervisor looks after the turn
// (the same file the hook writes), and the goal pauses for a human.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HOOK_FILES } from '../../hook/post-tool-use.js';
import { DRIFT_WINDOW, INITIAL_DRIFT_STATE, nextDriftState, scoreDrift, type DriftResult, type DriftState } from '../../prompt/drift.js';
import type { ToolCall } from '../types.js';

export interface InTurnDrift {
  record(call: ToolCall): void;
  /** Scores the recent calls; writes drift-pause when the goal should pause. */
  check(): Promise<{ drift: DriftResult; pause: boolean }>;
}

/** Creates the tracker for one turn; `stateDir` null: nothing is written. */
export function createInTurnDrift(condition: string, stateDir: string | null): InTurnDrift {
  const recent: ToolCall[] = [];
  let calls = 0;
  let state: DriftState = INITIAL_DRIFT_STATE;
  return {
    record(call) {
      calls += 1;
      recent.push(call);
      if (recent.length > DRIFT_WINDOW) recent.shift();
    },
    async check() {
      const drift = scoreDrift({ goal: condition, recentCalls: recent });
      state = nextDriftState(state, drift);
      if (state.shouldPause && stateDir !== null) {
        const record = { ...drift, ...state, at: new Date().toISOString(), toolCalls: calls };
        await writeFile(path.join(stateDir, HOOK_FILES.driftPause), `${JSON.stringify(record)}\n`, { mode: 0o600 });
      }
      return { drift, pause: state.shouldPause };
    },
  };
}
