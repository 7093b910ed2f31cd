// How a goal's contract changes print: one `setting old → new` per change, the edit history of `show`,
// and the held config edit of `status` and `show`.

import type { GoalRecord, Json, SettingChange } from '../../state/types.js';
import { clip } from '../cut-text.js';

/** A setting's value in one short line: checks by their commands, `off` for null. */
function formatValue(value: Json): string {
  if (value === null) return 'off';
  if (Array.isArray(value)) {
    const items = value.map((item) =>
      item !== null && typeof item === 'object' && !Array.isArray(item) && typeof item.run === 'string' ? item.run : JSON.stringify(item),
    );
    return `[${items.join(', ')}]`;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `limits.maxTurns 3 → 10`. */
export function renderChange(change: SettingChange): string {
  return `${change.setting} ${clip(formatValue(change.from), 60)} → ${clip(formatValue(change.to), 60)}`;
}

/** The line `status` and `show` print for a held config edit, or null. */
export function renderHeldConfig(goal: GoalRecord): string | null {
  const held = goal.heldConfig;
  if (!held) return null;
  const when = held.turn === null ? 'while a turn ran' : `during turn ${held.turn}`;
  return `config edit held (made ${when}; not applied): ${clip(held.settings.join(', ') || 'no setting', 60)} · goald edit ${goal.id} --apply-config`;
}

/** The edit history of `show`: one line per edit, then one per change. */
export function renderEditHistory(goal: GoalRecord): string[] {
  const edits = goal.edits ?? [];
  if (edits.length === 0) return [];
  const lines = ['edits:'];
  for (const edit of edits) {
    lines.push(`  ${edit.at.slice(0, 19).replace('T', ' ')}  by ${edit.by}${edit.resumed ? ' (reopened the goal)' : ''}`);
    if (edit.changes.length === 0) lines.push('    (no setting changed)');
    for (const change of edit.changes) lines.push(`    ${renderChange(change)}`);
  }
  return lines;
}
