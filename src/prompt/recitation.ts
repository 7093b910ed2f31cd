// The recitation block: the last thing in every turn's prompt, so the objective, the progress so far and
// what remains are always in the agent's most recent context.

import { clip, ellipsize } from '../cut-text.js';

export const RECITATION_MAX_CHARS = 2_000; // DESIGN.md § Prompt
const OBJECTIVE_MAX_CHARS = 300; // DESIGN.md § Prompt: verbatim, cut with "..." only if longer
const ITEM_MAX_CHARS = 160;

export interface RecitationInput {
  condition: string;
  turn: number;
  maxTurns: number;
  /** Results of the latest checks; null before any ran. */
  checks: { name: string; passed: boolean }[] | null;
  lastVerdictReason: string | null;
  remaining: string[];
  /** Files changed since the goal started, with line counts. */
  filesChanged: { path: string; added: number | null; deleted: number | null }[];
  /** Files changed beyond those listed (the goal's summary keeps at most 200; the rest are counted). */
  filesOmitted?: number;
  /** Breaker proximity and drift warnings. */
  warnings: string[];
  /** How far from the goal ("Distance: 3 items remain, 2 fewer than turn 4"; distance-line.ts), when measured. */
  distance?: string | null;
}

function formatFile(file: RecitationInput['filesChanged'][number]): string {
  if (file.added === null || file.deleted === null) return `${file.path} (binary)`;
  return `${file.path} (+${file.added} -${file.deleted})`;
}

function formatChecks(checks: RecitationInput['checks']): string {
  if (checks === null) return 'Checks: not run yet';
  if (checks.length === 0) return 'Checks: none configured (the evaluator decides)';
  const failing = checks.filter((c) => !c.passed).map((c) => c.name);
  const passing = checks.length - failing.length;
  const tail = failing.length > 0 ? ` — failing: ${failing.join(', ')}` : '';
  return `Checks: ${passing} passing, ${failing.length} failing${tail}`;
}

function render(input: RecitationInput, maxFiles: number, maxRemaining: number): string {
  const lines = [`=== GOAL RECITATION (turn ${input.turn} of ${input.maxTurns}) ===`];
  lines.push(`Objective: ${ellipsize(input.condition, OBJECTIVE_MAX_CHARS, '...')}`);
  lines.push('Progress so far:');
  lines.push(`- ${formatChecks(input.checks)}`);
  if (input.distance) lines.push(`- ${input.distance}`);
  if (input.lastVerdictReason) {
    lines.push(`- Last review: ${clip(input.lastVerdictReason, 300, '...')}`);
  }
  const files = input.filesChanged;
  const total = files.length + (input.filesOmitted ?? 0);
  if (total === 0) {
    lines.push('- Files changed so far: none');
  } else {
    const shown = files.slice(0, maxFiles).map(formatFile).join(', ');
    const hidden = total - Math.min(files.length, maxFiles);
    const more = hidden > 0 ? `${shown === '' ? '' : ', and '}${hidden} more` : '';
    lines.push(`- Files changed so far (${total}): ${shown}${more}`);
  }
  if (input.remaining.length > 0) {
    lines.push('What remains:');
    for (const item of input.remaining.slice(0, maxRemaining)) {
      lines.push(`- ${clip(item, ITEM_MAX_CHARS, '...')}`);
    }
    if (input.remaining.length > maxRemaining) lines.push(`- and ${input.remaining.length - maxRemaining} more`);
  }
  if (input.warnings.length > 0) {
    lines.push('Warnings:');
    for (const warning of input.warnings) lines.push(`- ${clip(warning, ITEM_MAX_CHARS, '...')}`);
  }
  lines.push('Keep working toward the objective above; goald checks the result after this turn.');
  lines.push('=== END OF GOAL RECITATION ===');
  return lines.join('\n');
}

/** Renders the recitation within RECITATION_MAX_CHARS, dropping file and remaining items first. */
export function renderRecitation(input: RecitationInput): string {
  let maxFiles = Math.min(input.filesChanged.length, 20);
  let maxRemaining = Math.min(input.remaining.length, 8);
  let text = render(input, maxFiles, maxRemaining);
  while (text.length > RECITATION_MAX_CHARS && (maxFiles > 0 || maxRemaining > 1)) {
    if (maxFiles > 0) maxFiles -= 1;
    else maxRemaining -= 1;
    text = render(input, maxFiles, maxRemaining);
  }
  if (text.length <= RECITATION_MAX_CHARS) return text;
  // Still too long (huge warnings): keep the head and the closing marker.
  const footer = '\n=== END OF GOAL RECITATION ===';
  return text.slice(0, RECITATION_MAX_CHARS - footer.length - 4) + '...' + footer;
}
