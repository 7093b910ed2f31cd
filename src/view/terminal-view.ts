// A view state made safe for a terminal: every string in it (the condition, verdict reasons, file names,
// provider errors, a loop's config error: text from the world) passes through toTerminalText, so none can
// drive the terminal.

import { toTerminalText } from '../cli/terminal-text.js';
import type { GoalView } from './goal-view.js';
import type { LoopView } from './loop-view.js';

function escapeDeep<T>(value: T): T;
function escapeDeep(value: unknown): unknown {
  if (typeof value === 'string') return toTerminalText(value);
  if (Array.isArray(value)) return value.map((item: unknown) => escapeDeep(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, escapeDeep(item)]));
  }
  return value;
}

/** `view` (a goal's or a loop's) with every string escaped for the terminal (control characters as `\u00XX`). */
export function terminalView<T extends GoalView | LoopView>(view: T): T {
  return escapeDeep(view);
}
