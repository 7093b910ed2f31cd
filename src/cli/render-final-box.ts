// The box printed when a goal ends: "Goal Achieved" or "Goal Failed: <cause>".

import type { FailureReason } from '../../machines/goal.machine.js';
import { formatCount } from './format.js';
import { describeTamper } from './render-progress.js';
import { formatDuration } from '../config/duration.js';
import { toTerminalText } from './terminal-text.js';

const BOX_MAX_WIDTH = 78; // fits an 80-column terminal with the borders

export interface FinalBoxInput {
  status: 'achieved' | 'failed';
  condition: string;
  turns: number;
  tokens: number;
  tokensEstimated: boolean;
  elapsedMs: number;
  checks: { name: string; passed: boolean }[];
  reason: FailureReason | null;
  reasonMessage: string | null;
  breaker: string | null;
  files: { path: string; added: number | null; deleted: number | null }[];
  /** Files changed beyond `files` (the summary's list is capped). */
  filesOmitted?: number;
  /** Turns the tamper guard caught, and the latest one's findings (GoalSummary.tamper). */
  tamper?: { turns: number; last: { path: string; kind: string }[] } | undefined;
}

function wrap(text: string, width: number): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const chunk = word.length > width ? `${word.slice(0, width - 1)}…` : word;
    if (line.length === 0) line = chunk;
    else if (line.length + 1 + chunk.length <= width) line += ` ${chunk}`;
    else {
      lines.push(line);
      line = chunk;
    }
  }
  if (line.length > 0) lines.push(line);
  return lines.length > 0 ? lines : [''];
}

function title(input: FinalBoxInput): string {
  if (input.status === 'achieved') return 'Goal Achieved';
  if (input.breaker) return 'Goal Failed: Circuit Breaker';
  if (input.reason === 'stopped') return 'Goal Failed: Stopped';
  if (input.reason === 'agent-missing') return 'Goal Failed: Agent Missing';
  if (input.reason === 'workspace-gone') return 'Goal Failed: Workspace Gone';
  if (input.reason === 'storage') return 'Goal Failed: Could Not Write Its Files';
  return 'Goal Failed';
}

function formatFile(file: FinalBoxInput['files'][number]): string {
  return file.added === null || file.deleted === null ? `${file.path} (binary)` : `${file.path} (+${file.added} -${file.deleted})`;
}

/** Renders the final box as lines (no trailing newline); text from the world is escaped before it is measured. */
export function renderFinalBox(raw: FinalBoxInput): string {
  const input = escapedBoxInput(raw);
  const inner = BOX_MAX_WIDTH - 4;
  const body: string[] = [];
  body.push(...wrap(input.condition, inner));
  const tokens = `${input.tokensEstimated ? '~' : ''}${formatCount(input.tokens)} tokens`;
  body.push(`${input.turns} turn${input.turns === 1 ? '' : 's'} · ${tokens} · ${formatDuration(input.elapsedMs)}`);
  if (input.status === 'failed' && (input.breaker || input.reasonMessage)) {
    const label = input.breaker ?? input.reason ?? 'failed';
    body.push(...wrap(`${label}: ${input.reasonMessage ?? ''}`, inner));
  }
  if (input.tamper !== undefined && input.tamper.turns > 0) {
    const turns = `${input.tamper.turns} turn${input.tamper.turns === 1 ? '' : 's'}`;
    body.push(...wrap(`tamper (${turns}; last): ${describeTamper(input.tamper.last)}`, inner));
  }
  if (input.checks.length > 0) {
    body.push(...wrap(input.checks.map((check) => `${check.passed ? '✓' : '✗'} ${check.name}`).join('   '), inner));
  }
  if (input.status === 'failed' || input.files.length > 0) {
    const shown = input.files.slice(0, 8).map(formatFile);
    const hidden = Math.max(0, input.files.length - 8) + (input.filesOmitted ?? 0);
    const more = hidden > 0 ? ` and ${hidden} more` : '';
    body.push(...wrap(`files changed: ${input.files.length === 0 ? 'none' : shown.join(', ') + more}`, inner));
  }
  const heading = title(input);
  const width = Math.min(inner, Math.max(heading.length + 2, ...body.map((line) => line.length)));
  const top = `╭─ ${heading} ${'─'.repeat(Math.max(0, width - heading.length - 1))}╮`;
  const rows = body.map((line) => `│ ${line.padEnd(width)} │`);
  const bottom = `╰${'─'.repeat(width + 2)}╯`;
  return [top, ...rows, bottom].join('\n');
}

// The box's text fields with their control characters escaped (condition, reason, check names, file and tamper paths).
function escapedBoxInput(input: FinalBoxInput): FinalBoxInput {
  return {
    ...input,
    condition: toTerminalText(input.condition),
    reasonMessage: input.reasonMessage === null ? null : toTerminalText(input.reasonMessage),
    checks: input.checks.map((check) => ({ ...check, name: toTerminalText(check.name) })),
    files: input.files.map((file) => ({ ...file, path: toTerminalText(file.path) })),
    tamper:
      input.tamper === undefined
        ? undefined
        : { turns: input.tamper.turns, last: input.tamper.last.map((finding) => ({ ...finding, path: toTerminalText(finding.path) })) },
  };
}
