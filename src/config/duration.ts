// Strict parsers for the numbers and durations users type (flags, environment) and their display.
// Strict means `12abc`, `-1`, `1e999`, `0x10` and the empty string are errors, not 12, -1 or Infinity.

import { ellipsize } from '../cut-text.js';
import { GoaldError } from '../errors.js';

/** `500ms`, `90s`, `30m`, `1.5h`, `2d`, or `0`. Also the pattern of duration strings in goal.config.json. */
export const DURATION_PATTERN = /^(?:0|(\d+(?:\.\d+)?)(ms|s|m|h|d))$/;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Shows a value the user typed, quoted and bounded, so a pasted paragraph cannot flood the message. */
function quote(text: string): string {
  // Not trimmed: a stray space may be exactly what is wrong with the value.
  return JSON.stringify(ellipsize(text.replace(/\s+/g, ' '), 43, '...'));
}

/** Parses a duration (`90s`, `30m`, `1.5h`, `0`) into whole milliseconds; `what` names the flag or key. */
export function parseDuration(text: string, what: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (match === null) {
    throw new GoaldError(
      'usage',
      `${what}: ${quote(text)} is not a duration`,
      'use a number with ms, s, m, h or d, e.g. 90s or 30m',
    );
  }
  const [, amount, unit] = match;
  if (amount === undefined || unit === undefined) return 0;
  const ms = Math.round(Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS]);
  if (!Number.isSafeInteger(ms)) {
    throw new GoaldError('usage', `${what}: ${quote(text)} is too long`, 'use a shorter duration, e.g. 30d');
  }
  return ms;
}

/** Parses a whole number greater than 0 (digits, optionally grouped with `_`: `500_000`). */
export function parsePositiveInt(text: string, what: string): number {
  const value = /^\d+(?:_\d+)*$/.test(text) ? Number(text.replaceAll('_', '')) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new GoaldError(
      'usage',
      `${what}: ${quote(text)} is not a positive whole number`,
      'use a whole number greater than 0, e.g. 20',
    );
  }
  return value;
}

/** Parses a decimal number of 0 or more (`5`, `2.50`, `0`), e.g. a budget in US dollars. */
export function parseNonNegativeNumber(text: string, what: string): number {
  const value = /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value)) {
    throw new GoaldError(
      'usage',
      `${what}: ${quote(text)} is not a number of 0 or more`,
      'use a number such as 5 or 2.50',
    );
  }
  return value;
}

/** Writes milliseconds as the duration text a user would type, in its largest exact unit: `30m`, `90s`. */
export function toDurationText(ms: number): string {
  if (ms === 0) return '0';
  const units = [['d', UNIT_MS.d], ['h', UNIT_MS.h], ['m', UNIT_MS.m], ['s', UNIT_MS.s]] as const;
  for (const [unit, size] of units) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Formats milliseconds for people: `450ms`, `2.3s`, `1m 05s`, `2h 03m`, `3d 04h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (Math.round(ms) < 1_000) return `${Math.round(ms)}ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${tenths / 10}s`;
  const seconds = Math.round(ms / 1_000);
  const pad = (n: number): string => String(n).padStart(2, '0');
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ${pad(seconds % 60)}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h ${pad(Math.floor(seconds / 60) % 60)}m`;
  return `${Math.floor(seconds / 86_400)}d ${pad(Math.floor(seconds / 3_600) % 24)}h`;
}
