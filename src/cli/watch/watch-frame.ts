// One frame of `goald watch` as lines of styled text: the list of goals and loops, the selected one's detail
// pane, the key hint. Pure (views in, lines out), so `--once` prints the same frame without loading ink, and the
// ink app only draws these lines. Narrow terminals drop the low-priority fields first.

import { clip, oneLine } from '../../cut-text.js';
import { formatDuration } from '../../config/duration.js';
import type { GoalView, Tone } from '../../view/goal-view.js';
import type { LoopRunView, LoopView } from '../../view/loop-view.js';
import { formatCount } from '../format.js';
import { toTerminalText } from '../terminal-text.js';

export type Color = 'green' | 'cyan' | 'yellow' | 'red' | 'gray' | 'magenta';

export interface Segment {
  text: string;
  color?: Color;
  bold?: boolean;
  inverse?: boolean;
}

export type Line = Segment[];

/** What the user is being asked, when anything. */
export type WatchPrompt = { kind: 'confirm-stop'; what: 'goal' | 'loop'; id: string } | { kind: 'guidance'; goalId: string; text: string };

/** One row of the list: a goal or a loop. */
export type WatchRow = { kind: 'goal'; view: GoalView } | { kind: 'loop'; view: LoopView };

export interface WatchFrameState {
  /** Every goal, already escaped for the terminal (terminalView), live first, then newest first. */
  goals: GoalView[];
  /** Every loop that still runs, escaped likewise. */
  loops: LoopView[];
  /** A goal's or a loop's id (their ids never collide: `g…`, `l…`). */
  selectedId: string | null;
  width: number;
  height: number;
  /** The selected goal's recent progress lines (the `l` key), or null when the log pane is closed. */
  logLines: string[] | null;
  prompt: WatchPrompt | null;
  /** The last action's result or error (escaped here). */
  message: string | null;
}

const TONE_COLOR: Record<Tone, Color> = { running: 'green', waiting: 'cyan', paused: 'yellow', achieved: 'green', failed: 'red' };
const SPARK = '▁▂▃▄▅▆▇█';

/** Widths at which fields are dropped: below WIDE the list loses cost and time, below NARROW tokens too. */
const WIDE = 90;
const NARROW = 60;

/** A sparkline of `values` scaled to `ceiling` (or their maximum), the last `width` of them. */
function sparkline(values: readonly number[], width: number, ceiling?: number): string {
  const shown = values.slice(-Math.max(0, width));
  const top = Math.max(ceiling ?? 0, ...shown, 0);
  if (top <= 0) return shown.map(() => SPARK[0]).join('');
  return shown.map((value) => SPARK[Math.min(SPARK.length - 1, Math.round((Math.max(0, value) / top) * (SPARK.length - 1)))]).join('');
}

/** "12 300 / 100 000 tok", or "12 300 tok" without a budget. */
function tokensText(view: GoalView): string {
  return view.tokens.budget === null ? `${formatCount(view.tokens.used)} tok` : `${formatCount(view.tokens.used)}/${formatCount(view.tokens.budget)} tok`;
}

function costText(view: GoalView): string {
  const used = `$${view.cost.usd.toFixed(2)}`;
  return view.cost.budget === null ? used : `${used}/$${view.cost.budget.toFixed(2)}`;
}

const isLiveView = (view: GoalView): boolean => view.status === 'active' || view.status === 'paused';

/** The list's rows: live goals, then loops (they will run again), then finished goals, each in its given order. */
export function watchRows(goals: readonly GoalView[], loops: readonly LoopView[]): WatchRow[] {
  const goalRow = (view: GoalView): WatchRow => ({ kind: 'goal', view });
  return [
    ...goals.filter(isLiveView).map(goalRow),
    ...loops.map((view): WatchRow => ({ kind: 'loop', view })),
    ...goals.filter((view) => !isLiveView(view)).map(goalRow),
  ];
}

/** The row `selectedId` names; else the first goal's (what `goald watch` selects at start), else the first. */
export function selectedRow(rows: readonly WatchRow[], selectedId: string | null): WatchRow | undefined {
  return rows.find((row) => row.view.id === selectedId) ?? rows.find((row) => row.kind === 'goal') ?? rows[0];
}

// The list's columns: id, status, turn, tokens, then (wide) active time and cost; a loop's row fills the same.
const statusWidth = (width: number): number => (width >= WIDE ? 22 : 12);

/** One row of the list, fitted to `width`: the glyph in its tone, then the fields and the condition. */
function fittedRow(glyph: string, tone: Tone, fields: string[], condition: string, width: number, selected: boolean): Line {
  const head = `${selected ? '›' : ' '} ${glyph} `;
  const body = fields.join(' ');
  const room = width - head.length - body.length - 1;
  const text = room > 8 ? ` ${clip(oneLine(condition), room)}` : '';
  return [
    { text: head, color: TONE_COLOR[tone], bold: selected },
    { text: `${body}${text}`.slice(0, Math.max(0, width - head.length)), bold: selected, ...(selected ? { inverse: true } : {}) },
  ];
}

/** A goal's row. */
function goalRow(view: GoalView, width: number, selected: boolean): Line {
  const fields: string[] = [view.id.slice(0, 10), view.statusText.padEnd(statusWidth(width)).slice(0, statusWidth(width)), `turn ${view.turnText}`.padEnd(10)];
  if (width >= NARROW) fields.push(tokensText(view).padEnd(statusWidth(width)));
  if (width >= WIDE) fields.push(formatDuration(view.activeMs).padEnd(8), costText(view).padEnd(12));
  return fittedRow(view.glyph, view.tone, fields, view.condition, width, selected);
}

/** "in 12m 05s", "due now", "no run armed". */
function nextRunText(view: LoopView): string {
  if (view.nextRunInMs === null) return 'no run armed';
  return view.nextRunInMs === 0 ? 'due now' : `in ${formatDuration(Math.round(view.nextRunInMs / 1_000) * 1_000)}`;
}

/** "last ✖ failed": the status alone (the pane says why), so the column holds it. */
function lastRunText(run: LoopRunView | null): string {
  return run === null ? 'never run' : `last ${run.glyph} ${run.status}`;
}

/** "…/the/workspace" keeps the end of a path, the part that names it. */
function pathTail(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max + 1)}`;
}

/** A loop's row: its schedule, next run, last run's status, workspace (wide), condition. */
function loopRow(view: LoopView, width: number, selected: boolean): Line {
  const fields: string[] = [view.id.slice(0, 10), view.scheduleText.padEnd(statusWidth(width)).slice(0, statusWidth(width)), nextRunText(view).padEnd(10)];
  if (width >= NARROW) fields.push(lastRunText(view.lastRun).padEnd(statusWidth(width)).slice(0, statusWidth(width)));
  if (width >= WIDE) fields.push(pathTail(view.workspace, 21).padEnd(21));
  return fittedRow(view.glyph, view.tone, fields, view.condition, width, selected);
}

/** One row of the list. */
function listRow(row: WatchRow, width: number, selected: boolean): Line {
  return row.kind === 'goal' ? goalRow(row.view, width, selected) : loopRow(row.view, width, selected);
}

function isoMinute(iso: string): string {
  return `${iso.replace('T', ' ').slice(0, 16)} UTC`;
}

/** The detail pane of the selected loop: its state, next run, last runs. */
function loopDetailLines(view: LoopView, width: number): Line[] {
  const lines: Line[] = [];
  lines.push([{ text: 'Loop: ', bold: true }, { text: clip(oneLine(view.condition), Math.max(1, width - 6)) }]);
  const summary = [`${view.glyph} ${view.statusText}`, view.scheduleText, `runs ${view.runs}`, `skipped ${view.skipped}`, `catch-up ${view.catchUp}`];
  if (view.name !== null) summary.push(`"${oneLine(view.name)}"`);
  if (view.source === 'config') summary.push('from goal.config.json');
  lines.push([{ text: clip(summary.join(' · '), width), color: TONE_COLOR[view.tone] }]);
  lines.push(plain(`workspace: ${view.workspace}`, width));
  lines.push(plain(view.nextRunAt === null ? 'next run: none armed' : `next run: ${isoMinute(view.nextRunAt)} (${nextRunText(view)})`, width, 'cyan'));
  if (view.configError !== null) lines.push(plain(`config error: ${oneLine(view.configError)}`, width, 'red'));
  const runs = view.recentRuns.length > 0 ? view.recentRuns : view.lastRun === null ? [] : [view.lastRun];
  if (runs.length === 0) lines.push(plain('last runs: none yet (r runs it now)', width));
  else lines.push(plain('last runs:', width));
  for (const run of runs) {
    const facts = [`${run.goalId} ${run.statusText}`];
    if (run.startedAt !== null) facts.push(isoMinute(run.startedAt));
    if (run.turns !== null) facts.push(`${run.turns} turn${run.turns === 1 ? '' : 's'}`);
    lines.push([{ text: `  ${run.glyph} `, color: TONE_COLOR[run.tone] }, { text: clip(facts.join(' · '), Math.max(1, width - 4)) }]);
  }
  return lines;
}
function plain(text: string, width: number, color?: Color): Line {
  const fitted = clip(text, Math.max(1, width));
  return [color === undefined ? { text: fitted } : { text: fitted, color }];
}

/** The detail pane of the selected goal. */
function detailLines(view: GoalView, width: number, logLines: string[] | null): Line[] {
  const wide = width >= WIDE;
  const lines: Line[] = [];
  lines.push([{ text: 'Goal: ', bold: true }, { text: clip(oneLine(view.condition), Math.max(1, width - 6)) }]);
  const summary = [`${view.glyph} ${view.statusText}`, `turn ${view.turnText}`, `active ${formatDuration(view.activeMs)}`, tokensText(view), costText(view)];
  lines.push([{ text: clip(summary.join(' · '), width), color: TONE_COLOR[view.tone] }]);
  const sparkWidth = Math.max(4, Math.min(40, width - 30));
  if (view.series.length > 0) {
    const tokens = view.series.map((point) => point.tokens);
    const budgetPerTurn = view.tokens.budget !== null && view.maxTurns !== null ? view.tokens.budget / view.maxTurns : undefined;
    const last = view.series[view.series.length - 1];
    lines.push(plain(`tokens/turn ${sparkline(tokens, sparkWidth, budgetPerTurn)} last ${formatCount(last?.tokens ?? 0)}${view.tokens.budget === null ? '' : ` · budget ${formatCount(view.tokens.budget)}`}`, width));
    const checks = view.series.map((point) => (point.checksTotal === 0 ? 0 : point.checksPassing / point.checksTotal));
    lines.push(plain(`checks/turn ${sparkline(checks, sparkWidth, 1)} last ${last?.checksPassing ?? 0}/${last?.checksTotal ?? 0} passing`, width));
  }
  const near = view.breakers.filter((gauge) => gauge.value > 0).slice(0, wide ? 3 : 1);
  if (near.length > 0) {
    const color: Color = near.some((gauge) => gauge.limit - gauge.value <= 1) ? 'red' : 'yellow';
    lines.push(plain(`breakers: ${near.map((gauge) => gauge.text).join(' · ')}`, width, color));
  }
  if (view.evaluator.reason !== null) lines.push(plain(`evaluator: ${oneLine(view.evaluator.reason)}`, width));
  if (view.evaluator.remaining.length > 0) lines.push(plain(`remaining: ${view.evaluator.remaining.map(oneLine).join('; ')}`, width));
  if (view.lastTurnFiles !== null) {
    const files = view.lastTurnFiles.paths.length > 0 ? `: ${view.lastTurnFiles.paths.join(', ')}` : '';
    lines.push(plain(`files (turn ${view.lastTurnFiles.turn}): ${view.lastTurnFiles.count}${files}`, width));
  }
  for (const error of wide ? view.providerErrors.slice(-3) : view.providerErrors.slice(-1)) {
    lines.push(plain(`error (turn ${error.turn}, ${error.source}): ${oneLine(error.message)}`, width, 'red'));
  }
  if (view.nextLoopRun !== null) lines.push(plain(`next loop run: ${isoMinute(view.nextLoopRun)}`, width, 'cyan'));
  if (view.stop !== null) {
    lines.push(plain(`stopped: ${view.stop.reason}${view.stop.message === null ? '' : ` (${oneLine(view.stop.message)})`}`, width, view.status === 'achieved' ? 'green' : 'red'));
    lines.push([{ text: 'next: ', bold: true }, { text: clip(view.stop.nextAction, Math.max(1, width - 6)) }]);
  }
  if (logLines !== null) {
    lines.push(plain('── log ──', width, 'gray'));
    for (const line of logLines) lines.push(plain(oneLine(line), width, 'gray'));
  }
  return lines;
}

/** The message `p`, `P`, `g` or `l` on a loop's row leaves (the keys of a goal). */
export const GOAL_KEYS_ON_LOOP = 'p, P, g and l act on goals; on a loop r runs it now and s stops it';

/** The key hint for the selected row (shorter on a narrow terminal), or the question being asked. */
function hintLine(state: Pick<WatchFrameState, 'prompt' | 'width'>, selected: WatchRow | undefined): Line {
  const { prompt, width } = state;
  if (prompt?.kind === 'confirm-stop') return [{ text: clip(`stop ${prompt.what} ${prompt.id}? press s again to stop, any other key to cancel`, width), color: 'red', bold: true }];
  if (prompt?.kind === 'guidance') return [{ text: clip(`guidance for ${prompt.goalId} (Enter sends, Esc cancels): ${toTerminalText(prompt.text)}▏`, width), color: 'cyan' }];
  const onLoop = selected?.kind === 'loop';
  const text = onLoop
    ? width >= WIDE
      ? '↑↓/j/k select · loop: r run now · s stop loop · q quit (p P g l: goals only)'
      : 'j/k · loop: r run s stop · q'
    : width >= WIDE
      ? '↑↓/j/k select · p pause · P pause now · r resume · s stop · g guidance · l logs · q quit'
      : 'j/k p P r s g l q';
  return [{ text: clip(text, width), color: 'gray' }];
}

/** The whole frame, at most `height` lines. */
export function renderFrame(state: WatchFrameState): Line[] {
  const { width, height } = state;
  const rows = watchRows(state.goals, state.loops);
  const selected = selectedRow(rows, state.selectedId);
  const lines: Line[] = [];
  if (selected === undefined) {
    lines.push(plain('goald watch: no goals yet.', width, 'cyan'));
    lines.push(plain('Start one with: goald start "<condition>" --check "<command>"', width));
  } else {
    // The list gets at most a third of the screen; the selected row stays in it.
    const listRoom = Math.max(1, Math.min(rows.length, Math.floor(height / 3)));
    const index = rows.indexOf(selected);
    const first = Math.max(0, Math.min(index - listRoom + 1, rows.length - listRoom));
    for (const row of rows.slice(first, first + listRoom)) lines.push(listRow(row, width, row === selected));
    lines.push(plain('─'.repeat(Math.max(1, width)), width, 'gray'));
    lines.push(...(selected.kind === 'goal' ? detailLines(selected.view, width, state.logLines) : loopDetailLines(selected.view, width)));
  }
  const tail: Line[] = [];
  // A lever's answer or error may quote what the user or a model wrote: escaped like the views.
  if (state.message !== null) tail.push(plain(oneLine(toTerminalText(state.message)), width, 'yellow'));
  tail.push(hintLine(state, selected));
  return [...lines.slice(0, Math.max(0, height - tail.length)), ...tail];
}

/** The frame as plain text (no colours): what `--once` prints. */
export function frameText(lines: readonly Line[]): string {
  return lines.map((line) => line.map((segment) => segment.text).join('').trimEnd()).join('\n');
}
