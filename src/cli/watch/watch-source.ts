// What `goald watch` reads and does, through the daemon's socket: every goal's view (the selected one with
// its events), every loop's view, the selected goal's recent progress lines, and the levers (pause, resume,
// stop, guidance; a loop's run now and stop). The ink app and `--once` both read through it; the views are
// escaped for the terminal here, once.

import type { GoalRecord, LoopRecord } from '../../../state/types.js';
import type { DaemonClient } from '../../daemon/client.js';
import { deriveGoalView, type GoalView } from '../../view/goal-view.js';
import { deriveLoopView, type LoopView } from '../../view/loop-view.js';
import { terminalView } from '../../view/terminal-view.js';
import { renderLoopRun } from '../render-loop-run.js';
import { renderProgressLine } from '../render-progress.js';

/** One read of everything a frame shows. */
export interface WatchSnapshot {
  goals: GoalView[];
  /** Every loop that still runs, oldest first. */
  loops: LoopView[];
  /** The selected goal's last progress lines (escaped), oldest first. */
  logLines: string[];
}

/** The daemon, as the watch view uses it. */
export interface WatchSource {
  /**
   * `selectedId`: a goal's id (its events are read), a loop's, or null for the first goal. `goals`: the
   * daemon's goal list when the caller has just read it (spares a round trip).
   */
  load(selectedId: string | null, goals?: readonly GoalRecord[]): Promise<WatchSnapshot>;
  pause(goalId: string, now: boolean): Promise<string>;
  resume(goalId: string): Promise<string>;
  stop(goalId: string): Promise<string>;
  say(goalId: string, text: string): Promise<string>;
  /** Fires a loop now (`goald loop run`). */
  runLoop(loopId: string): Promise<string>;
  /** Stops a loop (`goald loop stop`); its runs stay. */
  stopLoop(loopId: string): Promise<string>;
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
      // A selected loop needs no events: its pane shows its runs' goal records.
      const selected = selectedId === null ? ordered[0] : ordered.find((goal) => goal.id === selectedId);
      // The loops are rows of the list: one request on every refresh, beside the events' request.
      const [loops, events] = await Promise.all([client.listLoops(), selected === undefined ? [] : client.pastEvents(selected.id)]);
      const loopOf = (goal: GoalRecord): LoopRecord | null => loops.find((loop) => loop.id === goal.loopId) ?? null;
      const at = now();
      const views = ordered.map((goal) =>
        terminalView(deriveGoalView({ goal, events: goal === selected ? events : [], loop: loopOf(goal), now: at })),
      );
      const loopViews = loops.filter((loop) => !loop.stopped).map((loop) => terminalView(deriveLoopView({ loop, goals: ordered, now: at })));
      const logLines = events.map(renderProgressLine).filter((line): line is string => line !== null).slice(-LOG_LINES);
      return { goals: views, loops: loopViews, logLines };
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
    async runLoop(loopId) {
      const { loop, outcome } = await client.runLoop(loopId);
      return renderLoopRun(loop, outcome);
    },
    async stopLoop(loopId) {
      return `loop ${(await client.deleteLoop(loopId)).id} stopped (its runs stay: goald history --loop ${loopId})`;
    },
  };
}
