// The prompt's "# Rolled back" block: the turn after goald restored an earlier turn's files (the regression
// guard, `--keep-best`, or the owner's `goald rollback`) is told which turn, why, and which files.

import { clip } from '../cut-text.js';

/** What the next turn is told about a rollback. */
export interface RollbackNote {
  by: 'goald rollback' | 'keep-best';
  toTurn: number;
  afterTurn: number;
  /** Why, in one line (the regression guard's numbers). */
  reason: string | null;
  written: string[];
  removed: string[];
  writtenCount: number;
  removedCount: number;
}

const FILES_SHOWN = 12;

/** The block for the last rollback. */
export function renderRollbackBlock(note: RollbackNote): string {
  const lines = [`# Rolled back to turn ${note.toTurn}`];
  if (note.by === 'keep-best') {
    lines.push(`Your last turn (turn ${note.afterTurn}) made the tests worse: ${note.reason ?? 'fewer passing than before'}.`);
    lines.push(`goald put the files back as turn ${note.toTurn}, the best turn so far, left them, before this turn.`);
  } else {
    lines.push(`The owner rolled the files back to how turn ${note.toTurn} left them (goald rollback) after turn ${note.afterTurn}.`);
  }
  const files = [...note.written.map((file) => `- ${clip(file, 200, '...')} (restored)`), ...note.removed.map((file) => `- ${clip(file, 200, '...')} (removed)`)];
  const total = note.writtenCount + note.removedCount;
  if (files.length > 0) {
    lines.push('Files changed back:', ...files.slice(0, FILES_SHOWN));
    if (total > Math.min(files.length, FILES_SHOWN)) lines.push(`- and ${total - Math.min(files.length, FILES_SHOWN)} more`);
  }
  lines.push(
    note.by === 'keep-best'
      ? `Your changes since turn ${note.toTurn} to these files are gone. Start from this state, keep the tests that pass passing, and take a different approach than the one that broke them.`
      : `Your changes since turn ${note.toTurn} to these files are gone. Start from this state.`,
  );
  return lines.join('\n');
}
