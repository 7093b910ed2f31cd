// One frame of `goald watch` as lines of styled text: the goal list, the selected goal's detail pane, the
// key hint. Pure (views in, lines out), so `--once` prints the same frame without loading ink, and the
// ink app only draws these lines. Narrow terminals drop the low-priority fields first.

import { clip, oneLine } from '../../cut-text.js';
import { formatDuration } from '../../config/duration.js';
import type { GoalView, Tone } from '../../view/goal-view.js';
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
export type WatchPrompt = { kind: 'confirm-stop'; goalId: string } | { kind: 'guidance'; goalId: string; text: string };

export interface WatchFrameState {
  /** Every goal, already escaped for the terminal (terminalView), newest first. */
  goals: GoalView[];
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

/** One row of the goal list, fitted to `width`. */
function listRow(view: GoalView, width: number, selected: boolean): Line {
  const fields: string[] = [view.id.slice(0, 10), view.statusText.padEnd(width >= WIDE ? 22 : 12).slice(0, width >= WIDE ? 22 : 12), `turn ${view.turnText}`.padEnd(10)];
  if (width >= NARROW) fields.push(tokensText(view).padEnd(width >= WIDE ? 22 : 12));
  if (width >= WIDE) fields.push(formatDuration(view.activeMs).padEnd(8), costText(view).padEnd(12));
  const head = `${selected ? '›' : ' '} ${view.glyph} `;
  const body = fields.join(' ');
  const room = width - head.length - body.length - 1;
  const condition = room > 8 ? ` ${clip(oneLine(view.condition), room)}` : '';
  return [
    { text: head, color: TONE_COLOR[view.tone], bold: selected },
    { text: `${body}${condition}`.slice(0, Math.max(0, width - head.length)), bold: selected, ...(selected ? { inverse: true } : {}) },
  ];
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
  if (view.nextLoopRun !== null) lines.push(plain(`next loop run: ${view.nextLoopRun.replace('T', ' ').slice(0, 16)} UTC`, width, 'cyan'));
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

/** The key hint (shorter on a narrow terminal), or the question being asked. */
function hintLine(state: Pick<WatchFrameState, 'prompt' | 'width'>): Line {
  const { prompt, width } = state;
  if (prompt?.kind === 'confirm-stop') return [{ text: clip(`stop goal ${prompt.goalId}? press s again to stop, any other key to cancel`, width), color: 'red', bold: true }];
  if (prompt?.kind === 'guidance') return [{ text: clip(`guidance for ${prompt.goalId} (Enter sends, Esc cancels): ${toTerminalText(prompt.text)}▏`, width), color: 'cyan' }];
  const text =
    width >= WIDE
      ? '↑↓/j/k select · p pause · P pause now · r resume · s stop · g guidance · l logs · q quit'
      : 'j/k p P r s g l q';
  return [{ text: clip(text, width), color: 'gray' }];
}

/** The whole frame, at most `height` lines. */
export function renderFrame(state: WatchFrameState): Line[] {
  const { goals, width, height } = state;
  const lines: Line[] = [];
  if (goals.length === 0) {
    lines.push(plain('goald watch: no goals yet.', width, 'cyan'));
    lines.push(plain('Start one with: goald start "<condition>" --check "<command>"', width));
  } else {
    const selected = goals.find((goal) => goal.id === state.selectedId) ?? goals[0];
    // The list gets at most a third of the screen; the selected goal stays in it.
    const listRoom = Math.max(1, Math.min(goals.length, Math.floor(height / 3)));
    const index = selected === undefined ? 0 : goals.indexOf(selected);
    const first = Math.max(0, Math.min(index - listRoom + 1, goals.length - listRoom));
    for (const goal of goals.slice(first, first + listRoom)) lines.push(listRow(goal, width, goal === selected));
    if (selected !== undefined) {
      lines.push(plain('─'.repeat(Math.max(1, width)), width, 'gray'));
      lines.push(...detailLines(selected, width, state.logLines));
    }
  }
  const tail: Line[] = [];
  // A lever's answer or error may quote what the user or a model wrote: escaped like the views.
  if (state.message !== null) tail.push(plain(oneLine(toTerminalText(state.message)), width, 'yellow'));
  tail.push(hintLine(state));
  return [...lines.slice(0, Math.max(0, height - tail.length)), ...tail];
}

/** The frame as plain text (no colours): what `--once` prints. */
export function frameText(lines: readonly Line[]): string {
  return lines.map((line) => line.map((segment) => segment.text).join('').trimEnd()).join('\n');
}
