// The view state of one loop: what `goald watch` shows of it (a row of the list, a detail pane) and the
// dashboard's loop rows, derived in one pure function from the loop's record and the goal records of its
// runs, as goal-view.ts derives a goal's. Text from the world (the condition, a config error) stays as it came:
// the terminal escapes it (`terminalView`), the web page sets it as textContent.

import type { GoalStatus } from '../../machines/goal.machine.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { goalStatusOf, type Tone } from './goal-view.js';

/** One run of a loop: the goal it started. */
export interface LoopRunView {
  goalId: string;
  status: GoalStatus;
  glyph: string;
  tone: Tone;
  /** "achieved", "failed (stagnation)"; the loop's own record only keeps the status of a pruned goal. */
  statusText: string;
  /** ISO time the run started; null when only the loop's record remembers the run. */
  startedAt: string | null;
  turns: number | null;
}

export interface LoopView {
  id: string;
  name: string | null;
  /** The schedule as typed: `30m` or `0 9 * * 1-5`. */
  every: string;
  /** "every 30m", "cron 0 9 * * 1-5". */
  scheduleText: string;
  /** The condition, or what the loop runs when goal.config.json declares its goal. */
  condition: string;
  workspace: string;
  source: LoopRecord['source'];
  glyph: string;
  tone: Tone;
  /** "scheduled", "waiting (workspace busy)", "running", "stopped", "config error". */
  statusText: string;
  stopped: boolean;
  /** ISO time of the next run; null when none is armed. */
  nextRunAt: string | null;
  /** Time left until the next run (0 when it is due); null without one. */
  nextRunInMs: number | null;
  runs: number;
  skipped: number;
  catchUp: LoopRecord['catchUp'];
  /** The newest run, from its goal record when listed, else from the loop's record. */
  lastRun: LoopRunView | null;
  /** The newest runs whose goals are listed, newest first (at most 5). */
  recentRuns: LoopRunView[];
  configError: string | null;
}

export interface LoopViewInput {
  loop: LoopRecord;
  /** Goal records (any order); those the loop started are its runs. */
  goals: readonly GoalRecord[];
  now: number;
}

const MAX_RUNS = 5;
const CONFIG_GOAL_TEXT = '(goal from goal.config.json)';

function runOf(goal: GoalRecord): LoopRunView {
  const status = goalStatusOf(goal);
  return { goalId: goal.id, status: goal.status, glyph: status.glyph, tone: status.tone, statusText: status.text, startedAt: goal.createdAt, turns: goal.summary.turns };
}

// A run whose goal is not listed (pruned): only its id and status survive, on the loop's record.
function recordedRunOf(loop: LoopRecord): LoopRunView | null {
  if (loop.lastGoalId === null || loop.lastOutcome === null) return null;
  const status = goalStatusOf({ status: loop.lastOutcome, phase: 'running', pauseReason: null, reason: null });
  return { goalId: loop.lastGoalId, status: loop.lastOutcome, glyph: status.glyph, tone: status.tone, statusText: loop.lastOutcome, startedAt: null, turns: null };
}

/** The glyph, tone and words of a loop: its own state first, then its live run's, else scheduled. */
function loopStatusOf(loop: LoopRecord, lastRun: LoopRunView | null): { glyph: string; tone: Tone; text: string } {
  if (loop.stopped) return { glyph: '■', tone: 'paused', text: 'stopped' };
  if (loop.configError !== undefined && loop.configError !== null) return { glyph: '!', tone: 'failed', text: 'config error' };
  if (lastRun?.status === 'active') return { glyph: lastRun.glyph, tone: lastRun.tone, text: 'running' };
  if (lastRun?.status === 'paused') return { glyph: lastRun.glyph, tone: lastRun.tone, text: `run ${lastRun.statusText}` };
  if (loop.waiting) return { glyph: '…', tone: 'waiting', text: 'waiting (workspace busy)' };
  if (loop.nextRunAt === null) return { glyph: '◌', tone: 'waiting', text: 'no run armed' };
  return { glyph: '↻', tone: 'waiting', text: 'scheduled' };
}

/** The view state of one loop from its record and the goals it started (pure). */
export function deriveLoopView(input: LoopViewInput): LoopView {
  const { loop, now } = input;
  const recentRuns = input.goals
    .filter((goal) => goal.loopId === loop.id)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .slice(0, MAX_RUNS)
    .map(runOf);
  // The record's last goal is the newest run; its goal record, when listed, says more than the loop's does.
  const lastRun = recentRuns.find((run) => run.goalId === loop.lastGoalId) ?? recordedRunOf(loop) ?? recentRuns[0] ?? null;
  const status = loopStatusOf(loop, lastRun);
  const nextRunAt = loop.stopped ? null : loop.nextRunAt;
  const next = nextRunAt === null ? Number.NaN : Date.parse(nextRunAt);
  return {
    id: loop.id,
    name: loop.name ?? null,
    every: loop.every,
    // A cron expression has five fields; a duration is one word.
    scheduleText: /\s/.test(loop.every.trim()) ? `cron ${loop.every.trim()}` : `every ${loop.every}`,
    condition: loop.condition ?? CONFIG_GOAL_TEXT,
    workspace: loop.workspace,
    source: loop.source,
    glyph: status.glyph,
    tone: status.tone,
    statusText: status.text,
    stopped: loop.stopped,
    nextRunAt,
    nextRunInMs: Number.isNaN(next) ? null : Math.max(0, next - now),
    runs: loop.runs,
    skipped: loop.skipped,
    catchUp: loop.catchUp,
    lastRun,
    recentRuns,
    configError: loop.configError ?? null,
  };
}
