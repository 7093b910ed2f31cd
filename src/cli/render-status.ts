// `goald status`, `history` and `show` output: the goal box, one line per goal, one row per turn.

import { isPausePendingIn, resumeAtOfSnapshot, turnOfSnapshot } from '../../state/machine-snapshot.js';
import { notRecoveredWhy, stopUnrecoveredHint } from '../../state/not-recovered.js';
import type { GoalRecord } from '../../state/types.js';
import type { TurnRecord } from '../supervisor/types.js';
import { clip } from '../cut-text.js';
import { formatCount } from './format.js';
import { describeTamper } from './render-progress.js';
import { formatDuration } from '../config/duration.js';
import { toTerminalText } from './terminal-text.js';
import { renderHeldConfig } from './render-edits.js';
import { renderDistanceCell } from './render-distance.js';

function maxTurnsOf(goal: GoalRecord): number | null {
  const settings = goal.settings;
  if (settings && typeof settings === 'object' && !Array.isArray(settings)) {
    const limits = settings.limits;
    if (limits && typeof limits === 'object' && !Array.isArray(limits) && typeof limits.maxTurns === 'number') return limits.maxTurns;
  }
  return null;
}

// When a paused goal resumes by itself (a usage limit's reset): the goal machine's deadline, stored with the goal.
function resumeAtOf(goal: GoalRecord): number | null {
  return goal.status === 'paused' ? resumeAtOfSnapshot(goal.machine) : null;
}

// Phases in which a turn is under way (its agent, checks or evaluator run).
const IN_TURN_PHASES = new Set(['running', 'checking', 'evaluating']);

/**
 * `turn 3/20`: the turn in flight while one is under way, as `goald watch` shows it (its machine snapshot
 * is stored when the agent starts), else the last one finished.
 */
function turnText(goal: GoalRecord): string {
  const maxTurns = maxTurnsOf(goal);
  const inFlight = goal.status === 'active' && IN_TURN_PHASES.has(goal.phase) ? (turnOfSnapshot(goal.machine) ?? 0) : 0;
  return `turn ${Math.max(goal.summary.turns, inFlight)}${maxTurns === null ? '' : `/${maxTurns}`}`;
}

function statusWord(goal: GoalRecord): string {
  if (notRecoveredWhy(goal) !== null) return `${goal.status} · not running: could not be recovered`;
  if (goal.status === 'active' && goal.phase !== 'queued' && isPausePendingIn(goal.machine)) return `active · ${goal.phase} · pausing after this turn`;
  if (goal.status === 'active') return goal.phase === 'queued' ? 'queued' : `active · ${goal.phase}`;
  if (goal.status === 'paused') return `paused (${goal.pauseReason ?? 'requested'})`;
  if (goal.status === 'failed') return `failed (${goal.reason ?? 'unknown'})`;
  return 'achieved';
}

function elapsedOf(goal: GoalRecord, now: number): number {
  if (goal.summary.activeMs > 0 && goal.status !== 'active') return goal.summary.activeMs;
  const start = goal.startedAt ?? goal.createdAt;
  const end = goal.finishedAt ? Date.parse(goal.finishedAt) : now;
  return Math.max(0, end - Date.parse(start));
}

/** The multi-line box for one goal. */
export function renderGoalBox(goal: GoalRecord, now = Date.now()): string {
  const lines = [
    `Goal: ${clip(goal.condition, 70)}`,
    `id ${goal.id} · ${statusWord(goal)}`,
    `${turnText(goal)} · ${formatCount(goal.summary.tokens)} tokens · ${formatDuration(elapsedOf(goal, now))}`,
    `workspace ${goal.workspace}`,
  ];
  if (goal.worktree) lines.push(`worktree of ${goal.worktree.repo} · branch ${goal.worktree.branch}`);
  const checks = goal.summary.checksPassing + goal.summary.checksFailing;
  if (checks > 0) lines.push(`checks ${goal.summary.checksPassing}/${checks} passing`);
  if (goal.summary.lastVerdictReason) lines.push(`last verdict: ${clip(goal.summary.lastVerdictReason, 90)}`);
  if (goal.reasonMessage && goal.status === 'failed') lines.push(`why: ${clip(goal.reasonMessage, 90)}`);
  const tamper = goal.summary.tamper;
  if (tamper !== undefined && tamper.turns > 0) {
    lines.push(`tamper: ${tamper.turns} turn${tamper.turns === 1 ? '' : 's'}; last: ${clip(describeTamper(tamper.last), 80)}`);
  }
  const resumeAt = resumeAtOf(goal);
  if (resumeAt !== null) lines.push(`resumes by itself at ${new Date(resumeAt).toISOString()}`);
  if (goal.configError) lines.push(`config error (last good config in force): ${clip(goal.configError, 90)}`);
  const notRecovered = notRecoveredWhy(goal);
  if (notRecovered !== null) lines.push(`not recovered: ${clip(notRecovered, 90)}`, stopUnrecoveredHint(goal.id));
  const held = renderHeldConfig(goal);
  if (held !== null) lines.push(held);
  if (goal.summary.remaining.length > 0) lines.push(`remaining: ${clip(goal.summary.remaining.join('; '), 90)}`);
  if (goal.summary.files.length > 0) {
    const files = goal.summary.files.slice(0, 5).map((file) => (file.added === null ? file.path : `${file.path} (+${file.added} -${file.deleted ?? 0})`));
    const hidden = Math.max(0, goal.summary.files.length - 5) + (goal.summary.filesOmitted ?? 0);
    lines.push(`files: ${clip(files.join(', '), 90)}${hidden > 0 ? ` and ${hidden} more` : ''}`);
  }
  // Escaped before measuring, so a hostile file name neither drives the terminal nor bends the box.
  const shown = lines.map(toTerminalText);
  const width = Math.max(...shown.map((line) => line.length));
  return [`╭${'─'.repeat(width + 2)}╮`, ...shown.map((line) => `│ ${line.padEnd(width)} │`), `╰${'─'.repeat(width + 2)}╯`].join('\n');
}

/** One line per goal. */
export function renderGoalLine(goal: GoalRecord, now = Date.now()): string {
  const line = [
    goal.id,
    statusWord(goal).padEnd(22),
    turnText(goal).padEnd(10),
    `${formatCount(goal.summary.tokens)} tok`.padEnd(12),
    formatDuration(elapsedOf(goal, now)).padEnd(8),
    clip(goal.condition, 60),
  ].join('  ');
  return toTerminalText(line);
}

/** One row per turn for `goald show`. */
export function renderTurnRow(turn: TurnRecord): string {
  const duration = turn.agent ? formatDuration(turn.agent.durationMs) : '-';
  const outcome = turn.agent ? turn.agent.outcome : 'pre-check';
  const checks = turn.checks.length === 0 ? '-' : `${turn.checks.filter((check) => check.passed).length}/${turn.checks.length}`;
  const verdictText =
    turn.evaluation.kind === 'verdict'
      ? `${turn.evaluation.verdict.achieved ? 'met' : 'not yet'}: ${clip(turn.evaluation.verdict.reason, 50)}`
      : turn.evaluation.kind === 'error'
        ? `evaluator error: ${clip(turn.evaluation.message, 40)}`
        : `(${clip(turn.evaluation.reason, 40)})`;
  const verdict = toTerminalText(verdictText); // escaped before padding, so the columns stay aligned
  const b = turn.breakers;
  const breakerState = turn.trip
    ? `TRIPPED ${turn.trip.breaker}`
    : `stag ${b.consecutiveStagnantTurns} · agentF ${b.consecutiveAgentFailures} · evalF ${b.consecutiveEvaluatorFailures} · osc ${b.oscillations}`;
  const tamper = turn.tamper ?? [];
  const tamperText = tamper.length === 0 ? [] : [`TAMPER: ${clip(describeTamper(tamper), 100)}`];
  // What the judge was told it could not see (nested repositories, files no snapshot holds, .gitignore edits).
  const notes = turn.guardNotes ?? [];
  const notesText = notes.length === 0 ? [] : [`notes: ${clip(describeTamper(notes), 100)}`];
  const distanceText = turn.distance === undefined ? [] : [renderDistanceCell(turn.distance)].filter((text) => text !== '');
  return [
    String(turn.turn).padStart(4),
    outcome.padEnd(11),
    duration.padEnd(8),
    formatCount(turn.tokens).padStart(9),
    `${turn.files.length} file${turn.files.length === 1 ? '' : 's'}`.padEnd(9),
    `checks ${checks}`.padEnd(12),
    verdict.padEnd(60),
    breakerState,
    ...(turn.sandbox === undefined ? [] : [`sandbox ${turn.sandbox}`]),
    ...distanceText,
    ...(turn.guidance === undefined ? [] : [`guidance: ${clip(turn.guidance.join(' / ').replace(/\s+/g, ' '), 100)}`]),
    ...tamperText,
    ...notesText,
  ].join('  ');
}

export const TURN_TABLE_HEADER = ['turn', 'outcome    ', 'duration', '   tokens', 'files    ', 'checks      ', 'verdict'.padEnd(60), 'breakers'].join('  ');
