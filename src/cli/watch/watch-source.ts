// What `goald watch` reads and does, through the daemon's socket: every goal's view (the selected one with
// its events), its recent progress lines, and the levers (pause, resume, stop, guidance). The ink app and
// `--once` both read through it; the views are escaped for the terminal here, once.

import type { GoalRecord, LoopRecord } from '../../../state/types.js';
import type { DaemonClient } from '../../daemon/client.js';
import { deriveGoalView, type GoalView } from '../../view/goal-view.js';
import { terminalView } from '../../view/terminal-view.js';
import { renderProgressLine } from '../render-progress.js';

/** One read of everything a frame shows. */
export interface WatchSnapshot {
  goals: GoalView[];
  /** The selected goal's last progress lines (escaped), oldest first. */
  logLines: string[];
}

/** The daemon, as the watch view uses it. */
export interface WatchSource {
  /** `goals`: the daemon's goal list when the caller has just read it (spares a round trip). */
  load(selectedId: string | null, goals?: readonly GoalRecord[]): Promise<WatchSnapshot>;
  pause(goalId: string, now: boolean): Promise<string>;
  resume(goalId: string): Promise<string>;
  stop(goalId: string): Promise<string>;
  say(goalId: string, text: string): Promise<string>;
}

const LOG_LINES = 8;

const isLive = (goal: GoalRecord): boolean => goal.status === 'active' || goal.status === 'paused';

/** Live goals first, then the most recently created. */
function orderGoals(goals: readonly GoalRecord[]): GoalRecord[] {
  return [...goals].sort((a, b) => Number(isLive(b)) - Number(isLive(a)) || b.createdAt.localeCompare(a.createdAt));
}

/** The watch source over a daemon client; `now` is the clock views are derived at. */
export function daemonWatchSource(client: DaemonClient, now: () => number = Date.now): WatchSource {
  return {
    async load(selectedId, known) {
      const ordered = orderGoals(known ?? (await client.listGoals()));
      const selected = ordered.find((goal) => goal.id === selectedId) ?? ordered[0];
      // The loops only for a goal a loop started (its next run); most lists have none.
      const [loops, events] = await Promise.all([
        ordered.some((goal) => goal.loopId !== null) ? client.listLoops() : [],
        selected === undefined ? [] : client.pastEvents(selected.id),
      ]);
      const loopOf = (goal: GoalRecord): LoopRecord | null => loops.find((loop) => loop.id === goal.loopId) ?? null;
      const at = now();
      const views = ordered.map((goal) =>
        terminalView(deriveGoalView({ goal, events: goal === selected ? events : [], loop: loopOf(goal), now: at })),
      );
      const logLines = events.map(renderProgressLine).filter((line): line is string => line !== null).slice(-LOG_LINES);
      return { goals: views, logLines };
    },
    async pause(goalId, pauseNow) {
      const goal = await client.pauseGoal(goalId, pauseNow);
      return goal.status === 'paused' ? `goal ${goal.id} paused${pauseNow ? ' (agent suspended)' : ''}` : `goal ${goal.id} will pause at the end of the current turn`;
    },
    async resume(goalId) {
      return `goal ${(await client.resumeGoal(goalId)).id} resumed`;
    },
    async stop(goalId) {
      return `goal ${(await client.stopGoal(goalId)).id} stopped`;
    },
    async say(goalId, text) {
      const reply = await client.guideGoal(goalId, text);
      return `goal ${reply.goal.id}: guidance queued for its next turn (${reply.pending} pending)`;
    },
  };
}
