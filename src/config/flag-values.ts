// Parsers for the values of start flags and GOALD_* variables that are not plain numbers or durations.
// `what` names the flag or variable in messages.

import { clip } from '../cut-text.js';
import { GoaldError } from '../errors.js';
import { parseDuration, parseNonNegativeNumber } from './duration.js';
import type { AdapterName, EvaluatorProvider, EvaluatorSpec } from './types.js';

export const ADAPTER_NAMES: readonly AdapterName[] = ['command', 'claude-code', 'codex', 'gemini', 'aider', 'builtin'];

// Check names are labels in one-line progress output; a long command is cut to this many characters.
const CHECK_NAME_MAX = 40;

/** The evaluator part a flag or variable can set. */
export type EvaluatorChoice = Partial<Pick<EvaluatorSpec, 'provider'>> & { model?: string };

/** A check's label: its command on one line, cut to CHECK_NAME_MAX characters. */
export function checkNameFor(run: string): string {
  return clip(run, CHECK_NAME_MAX, '...');
}

/** Parses an adapter name (`--adapter`). */
export function parseAdapter(text: string, what: string): AdapterName {
  const found = ADAPTER_NAMES.find((name) => name === text);
  if (found === undefined) {
    throw new GoaldError(
      'usage',
      `${what}: ${JSON.stringify(text)} is not an adapter`,
      `use one of ${ADAPTER_NAMES.join(', ')}`,
    );
  }
  return found;
}

/** Parses `openai:<model>`, `anthropic:<model>` or `none`. */
export function parseEvaluator(text: string, what: string): EvaluatorChoice {
  if (text === 'none') return { provider: 'none' };
  const colon = text.indexOf(':');
  const provider = colon === -1 ? text : text.slice(0, colon);
  const model = colon === -1 ? '' : text.slice(colon + 1).trim();
  if (provider !== 'openai' && provider !== 'anthropic') {
    throw new GoaldError(
      'usage',
      `${what}: ${JSON.stringify(text)} is not an evaluator`,
      'use openai:<model>, anthropic:<model> or none',
    );
  }
  if (model === '') {
    throw new GoaldError(
      'usage',
      `${what}: "${provider}" needs a model`,
      `use ${provider}:<model>, e.g. ${provider === 'openai' ? 'openai:gpt-4.1-mini' : 'anthropic:claude-sonnet-4-5'}`,
    );
  }
  return { provider: provider satisfies EvaluatorProvider, model };
}

/** A duration that must be longer than 0 (a zero turn timeout would mean "immediately"). */
export function parsePositiveDuration(text: string, what: string): number {
  const ms = parseDuration(text, what);
  if (ms === 0) {
    throw new GoaldError('usage', `${what}: must be longer than 0`, 'use a duration such as 90s or 30m');
  }
  return ms;
}

/** US dollars, or `off`. */
export function parseCostBudget(text: string, what: string): number | null {
  return text === 'off' ? null : parseNonNegativeNumber(text, what);
}

/** A duration, or `off`. */
export function parseWallClock(text: string, what: string): number | null {
  return text === 'off' ? null : parsePositiveDuration(text, what);
}
