// The prompt's "# Revert these changes" block: after a turn the tamper guard caught weakening its own
// grading, the next turn is told each finding and asked to undo it (DESIGN.md § Trust boundary).

import { clip } from '../cut-text.js';
import type { GuardReport } from '../guard/types.js';

const FINDINGS_SHOWN = 12;
const FINDING_MAX_CHARS = 240;

/**
 * The block for the last turn's guard report, or null when it found nothing worth saying. A config change
 * nobody claimed is not mentioned: it may be the owner's own edit, and the agent must not undo it.
 */
export function renderTamperBlock(report: GuardReport): string | null {
  const guard = { tamper: report.tamper, notes: report.notes.filter((note) => note.kind !== 'config-change') };
  if (guard.tamper.length === 0 && guard.notes.length === 0) return null;
  const lines: string[] = [];
  if (guard.tamper.length > 0) {
    lines.push(
      '# Revert these changes',
      'Your last turn weakened the checks that grade this goal instead of meeting it. While any of these stands,',
      'the goal cannot be achieved, however the checks end; goald stops the goal when this happens again.',
      'Restore each of them exactly as it was, then make the real fix:',
    );
    for (const finding of guard.tamper.slice(0, FINDINGS_SHOWN)) lines.push(`- ${clip(`${finding.path}: ${finding.kind}, ${finding.detail}`, FINDING_MAX_CHARS, '...')}`);
    if (guard.tamper.length > FINDINGS_SHOWN) lines.push(`- and ${guard.tamper.length - FINDINGS_SHOWN} more`);
  }
  if (guard.notes.length > 0) {
    lines.push(guard.tamper.length > 0 ? '' : '# Noticed in your last turn', 'goald also noticed (not counted against you; put them back unless they were wrong):');
    for (const note of guard.notes.slice(0, FINDINGS_SHOWN)) lines.push(`- ${clip(`${note.path}: ${note.detail}`, FINDING_MAX_CHARS, '...')}`);
  }
  return lines.join('\n');
}
