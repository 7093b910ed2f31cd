// The in-turn reflection: what the PostToolUse hook hands Claude Code every N tool calls, so the original
// task is back in the agent's most recent context in the middle of a long turn, with three questions that
// make it check its course. Pure and import-light: it runs inside the hook on every check.

import { driftWarning, type DriftResult } from './drift.js';
import { ellipsize } from '../cut-text.js';

/** The first line of every reflection, so the model does not take it for the user speaking. */
export const REFLECTION_MARKER = '[System meta · not a user message]';
const TASK_MAX_CHARS = 300; // DESIGN.md § Prompt: the original task verbatim, cut at 300 chars with "..."

export interface ReflectionInput {
  /** The goal's condition verbatim; null or blank when unknown. */
  task: string | null;
  /** Tool calls made since the previous reflection (or since the turn started). */
  toolCallsSinceLastCheck: number;
  /** The latest drift check; above DRIFT_WARN_ABOVE the reflection leads with a warning. */
  drift?: DriftResult;
}

/** Renders the reflection block that the hook returns as `additionalContext`. */
export function renderReflection(input: ReflectionInput): string {
  const steps = Math.max(0, Math.floor(input.toolCallsSinceLastCheck));
  const task = input.task !== null && input.task.trim() !== '' ? input.task : null;
  const warning = input.drift === undefined ? null : driftWarning(input.drift);

  const lines = [REFLECTION_MARKER];
  if (warning !== null) lines.push(warning);
  lines.push(`${steps} tool ${steps === 1 ? 'call' : 'calls'} since the last check. Take stock before the next one.`);
  if (task === null) {
    lines.push('The original task is not available here: restate, in one sentence, the goal you are working toward.');
    lines.push('1. Does your current plan still match that goal? If not, correct course now.');
  } else {
    lines.push('=== ORIGINAL TASK ===');
    lines.push(ellipsize(task, TASK_MAX_CHARS, '...'));
    lines.push('=== END OF TASK ===');
    lines.push('1. Does your current plan still match the task above? If not, correct course now.');
  }
  lines.push(`2. What did ${steps === 1 ? 'that 1 step' : `those ${steps} steps`} prove or rule out?`);
  lines.push('3. What is the next concrete output, and how close is it?');
  return lines.join('\n');
}
