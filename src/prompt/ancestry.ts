// The "# Why you're here" block: where the goal comes from, one line per level.

import type { Ancestry } from '../config/types.js';
import { clip } from '../cut-text.js';

const ANCESTRY_LINE_MAX_CHARS = 200; // DESIGN.md § Prompt: each level ≤ 200 chars

const LEVELS: { key: keyof Ancestry; label: string }[] = [
  { key: 'mission', label: 'Mission' },
  { key: 'project', label: 'Project' },
  { key: 'goal', label: 'Parent goal' },
  { key: 'loop', label: 'Loop' },
];

/** Renders the ancestry block, or '' when no level is set. */
export function renderAncestry(ancestry: Ancestry): string {
  const lines = LEVELS.flatMap(({ key, label }) => {
    const value = ancestry[key];
    if (value === undefined || value.trim() === '') return [];
    return [`- ${label}: ${clip(value, ANCESTRY_LINE_MAX_CHARS, '...')}`];
  });
  return lines.length === 0 ? '' : `# Why you're here\n${lines.join('\n')}`;
}
