// When an agent's usage limit resets, read from what the agent CLI itself reports: a structured reset
// timestamp (Claude Code's `rate_limit_event`, `api_error_params.rate_limit_info`) or the time in its own
// error message ("resets 9pm (America/New_York)", "try again at 5:08 AM"). Callers pass only the CLI's own
// error and result lines here, never tool output: a file that mentions a limit is not the limit itself.
// Pure: the current time and the fallback time zone are arguments.

/** A usage limit stopped the turn; `resetAt` is when it lifts (ms since epoch), null when not said. */
export interface UsageLimitInfo {
  resetAt: number | null;
  message: string;
}

export interface ResetTimeOptions {
  /** The current time, ms since epoch. */
  now: number;
  /**
   * The zone of times written without one: the CLI's own (its TZ variable). Codex prints "try again at
   * 5:08 AM" in local time. Undefined: this process's zone.
   */
  timeZone?: string;
}

// Both CLIs print the reset to the minute (Claude sometimes to the hour, "resets 2am"); the limit lifts
// somewhere within that minute, so the end of the minute is returned: resuming then is never too early.
const DISPLAYED_MINUTE_MS = 60_000;
// A time without a date is the next such time, but the text was written a moment ago: a time up to this
// far in the past is today's (lag between the CLI writing it and us reading it), not tomorrow's.
const PAST_TOLERANCE_MS = 60 * 60_000;
// Epoch values at or above this are milliseconds, below it seconds (1e12 ms is September 2001).
const EPOCH_MS_THRESHOLD = 1e12;
const DAY_MS = 86_400_000;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

// Words that say a usage or rate limit (not some other failure) stopped the CLI.
const USAGE_LIMIT_WORDS = [
  /usage limit/i,
  /\bhit your\b.*\blimit\b/i, // Claude: "You've hit your 5-hour limit", "your weekly limit"
  /rate[ _-]?limit/i,
  /\b429\b/,
  /too many requests/i,
  /out of (?:extra usage|usage|credits)/i,
  /\bquota\b/i,
];

// "resets 9pm (America/New_York)", "resets 5:07am (UTC)", "resets Dec 2, 1:09am (America/New_York)",
// "resets Mar 6, 2028, 10:16pm (America/New_York)" (Claude Code); "try again at 5:08 AM", "try again at
// Dec 2nd, 2026 1:09 AM" (Codex).
const RESET_AT =
  /\b(?:resets?|reset at|resets at|try again at|retry at|available again at)\s+(?:(?<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(?<year>\d{4}),?\s+)?(?:at\s+)?)?(?<hour>\d{1,2})(?::(?<minute>\d{2}))?\s*(?<ampm>am|pm|a\.m\.|p\.m\.)(?:\s*\((?<zone>[A-Za-z_+\-/0-9]+)\))?/i;
// "Claude AI usage limit reached|1750000000" (older Claude Code versions put the epoch after a bar).
const RESET_EPOCH = /usage limit reached\|(?<epoch>\d{10,13})\b/i;
// "Please try again in 20s", "try again in 1m30s", "resets in 2 hours", "retry after 30 seconds".
const RESET_IN = /\b(?:try again|retry|resets?)\s+(?:in|after)\s+(?<span>(?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\s*)+)/i;
const SPAN_PART = /(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)/gi;

/** Whether a line the CLI wrote about its own failure says a usage or rate limit stopped it. */
export function saysUsageLimit(text: string): boolean {
  return USAGE_LIMIT_WORDS.some((pattern) => pattern.test(text));
}

/** A reset timestamp as the CLIs send it (epoch seconds, or ms) in ms; null for anything else. */
export function resetAtFromEpoch(value: unknown): number | null {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number <= 0) return null;
  return Math.round(number >= EPOCH_MS_THRESHOLD ? number : number * 1000);
}

/** When the limit a CLI's message describes resets (ms since epoch); null when the message names no time. */
export function parseResetTime(text: string, options: ResetTimeOptions): number | null {
  const epoch = RESET_EPOCH.exec(text)?.groups?.epoch;
  if (epoch !== undefined) return resetAtFromEpoch(Number(epoch));

  const at = RESET_AT.exec(text)?.groups;
  if (at !== undefined) return resolveWallTime(at, options);

  const span = RESET_IN.exec(text)?.groups?.span;
  if (span !== undefined) {
    const ms = parseSpan(span);
    if (ms > 0) return options.now + ms;
  }
  return null;
}

/**
 * Reads a usage limit from one of the CLI's own error or result messages: null when the message is about
 * something else, else the limit with its reset time when the message names one.
 */
export function readUsageLimitMessage(text: string, options: ResetTimeOptions): UsageLimitInfo | null {
  if (!saysUsageLimit(text)) return null;
  return { resetAt: parseResetTime(text, options), message: text.trim() };
}

// The instant a wall-clock time from the message stands for, in its zone (or the CLI's).
function resolveWallTime(groups: Record<string, string | undefined>, options: ResetTimeOptions): number | null {
  const zone = validZone(groups.zone) ?? validZone(options.timeZone) ?? localZone();
  let hour = Number(groups.hour);
  const minute = groups.minute === undefined ? 0 : Number(groups.minute);
  if (hour < 1 || hour > 12 || minute > 59) return null;
  const pm = (groups.ampm ?? '').toLowerCase().startsWith('p');
  hour = (hour % 12) + (pm ? 12 : 0);

  const today = wallDate(options.now, zone);
  if (groups.month === undefined) {
    // A time alone: today's, unless that is well past (then tomorrow's).
    let at = zonedTimeToEpoch({ ...today, hour, minute }, zone);
    if (at < options.now - PAST_TOLERANCE_MS) {
      const tomorrow = wallDate(Date.UTC(today.year, today.month - 1, today.day) + DAY_MS, 'UTC');
      at = zonedTimeToEpoch({ ...tomorrow, hour, minute }, zone);
    }
    return at + DISPLAYED_MINUTE_MS;
  }

  const month = MONTHS.indexOf(groups.month.slice(0, 3).toLowerCase()) + 1;
  const day = Number(groups.day);
  if (month === 0 || day < 1 || day > 31) return null;
  if (groups.year !== undefined) {
    return zonedTimeToEpoch({ year: Number(groups.year), month, day, hour, minute }, zone) + DISPLAYED_MINUTE_MS;
  }
  // A date without a year: this year's, unless that is well past (then next year's, "Jan 2" read on Dec 31).
  let at = zonedTimeToEpoch({ year: today.year, month, day, hour, minute }, zone);
  if (at < options.now - DAY_MS) at = zonedTimeToEpoch({ year: today.year + 1, month, day, hour, minute }, zone);
  return at + DISPLAYED_MINUTE_MS;
}

interface WallTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
}

// The instant at which clocks in `zone` show the given wall time. The zone's offset is looked up at a first
// guess and again at the result, which settles it across a DST change.
function zonedTimeToEpoch(wall: WallTime, zone: string): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  let epoch = asUtc - zoneOffsetMs(asUtc, zone);
  const settled = asUtc - zoneOffsetMs(epoch, zone);
  if (settled !== epoch) epoch = settled;
  return epoch;
}

// How far the zone's wall clock is ahead of UTC at an instant.
function zoneOffsetMs(epoch: number, zone: string): number {
  const parts = wallParts(epoch, zone);
  const wallAsUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wallAsUtc - Math.floor(epoch / 1000) * 1000;
}

function wallDate(epoch: number, zone: string): { year: number; month: number; day: number } {
  const { year, month, day } = wallParts(epoch, zone);
  return { year, month, day };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallParts(epoch: number, zone: string): WallTime & { second: number } {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  const values: Record<string, number> = {};
  for (const part of formatter.formatToParts(new Date(epoch))) {
    if (part.type !== 'literal') values[part.type] = Number(part.value);
  }
  return {
    year: values.year ?? 1970,
    month: values.month ?? 1,
    day: values.day ?? 1,
    hour: (values.hour ?? 0) % 24,
    minute: values.minute ?? 0,
    second: values.second ?? 0,
  };
}

// A zone name Intl knows, or undefined ("UTC", "America/New_York"; not a made-up "(Mars/Base)").
function validZone(zone: string | undefined): string | undefined {
  if (zone === undefined || zone === '') return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

// "1m30s" → 90 000; "2 hours" → 7 200 000.
function parseSpan(span: string): number {
  let ms = 0;
  for (const match of span.matchAll(SPAN_PART)) {
    const value = Number(match[1]);
    const unit = (match[2] ?? '').toLowerCase();
    if (unit === 'ms' || unit.startsWith('milli')) ms += value;
    else if (unit.startsWith('s')) ms += value * 1_000;
    else if (unit.startsWith('m')) ms += value * 60_000;
    else if (unit.startsWith('h')) ms += value * 3_600_000;
    else if (unit.startsWith('d')) ms += value * DAY_MS;
  }
  return Math.round(ms);
}
