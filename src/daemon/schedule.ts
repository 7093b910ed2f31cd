// Loop schedules: what `goald loop <every>` accepts and when each run falls due. Pure: no timers, no I/O.
//
// A duration (`30m`, `45m`, `2h`, `1d`) is an exact cadence kept as absolute deadlines on a grid
// anchor + k × every, so a 45-minute loop runs at :00, :45, :30, ... and never drifts or rounds to cron's
// `*/45` (which means "minutes 0 and 45 of every hour"). A 5-field cron expression (minute hour day month
// weekday) fires at each matching minute; node-cron parses it and decides which calendar days match, so
// its extensions (`L`, `15W`, `L-3`, `5L`, `1#2`, month and weekday names) mean what node-cron says, and
// when both day-of-month and weekday are restricted a day must match both (node-cron's rule, not the
// either-or of Vixie cron). Cron slots are computed in UTC unless a `timezone` (IANA name) is given:
// a wall time skipped by a daylight-saving jump runs once, one gap-length later; a repeated one runs once,
// at its first occurrence. A duration is exact elapsed time: `1d` is 24 hours after the last slot, not
// "the same wall time tomorrow" (use cron, `0 9 * * *`, for that).

import { createTask, validateDetailed, type CronFieldError, type ScheduledTask } from 'node-cron';
import { DURATION_PATTERN, parseDuration } from '../config/duration.js';
import { ellipsize } from '../cut-text.js';
import { GoaldError } from '../errors.js';

export type Schedule =
  | { kind: 'interval'; everyMs: number; text: string }
  | { kind: 'cron'; expression: string; text: string };

export interface NextRunOptions {
  /** Interval schedules only: a point of the cadence grid (default: `after`, i.e. one period later). */
  anchor?: Date;
  /** Cron schedules only: the IANA time zone the fields are read in. Default `UTC`. */
  timezone?: string;
}

const MIN_SCHEDULE_MS = 1_000;
const SCHEDULE_HINT = 'use a duration such as 30m, 2h or 1d, or a 5-field cron expression such as "0 9 * * 1-5"';
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
// node-cron's own search horizon (MAX_DAYS = 366 * 100). `0 0 29 2 1` (29 February on a Monday) recurs
// only every 28 years or so, so anything much shorter would call a valid expression "never".
const CRON_HORIZON_DAYS = 366 * 100;
// Daylight-saving shifts are at most 2 hours; candidates this far before `after` in wall time can be
// dropped without converting them to instants.
const WALL_SLACK_MS = 3 * HOUR_MS;
const CRON_FIELD_NAMES: Record<string, string> = {
  minute: 'minute',
  hour: 'hour',
  dayOfMonth: 'day-of-month',
  month: 'month',
  dayOfWeek: 'weekday',
};

/** Parses what the user typed after `goald loop` (or a config loop's `every`) into a Schedule. */
export function parseSchedule(every: string): Schedule {
  const text = every.trim();
  if (DURATION_PATTERN.test(text)) {
    const everyMs = parseDuration(text, 'the schedule');
    if (everyMs < MIN_SCHEDULE_MS) {
      throw new GoaldError('usage', `the schedule ${quote(text)} is shorter than 1s`, 'use 1s or more, such as 30m');
    }
    return { kind: 'interval', everyMs, text };
  }
  const fields = text.split(/\s+/);
  if (fields.length === 6) {
    throw new GoaldError(
      'usage',
      `${quote(text)} is not a schedule: it has 6 fields, and goald does not take a seconds field`,
      'use 5 fields (minute hour day month weekday), such as "0 9 * * 1-5", or a duration such as 90s',
    );
  }
  if (fields.length !== 5) throw notASchedule(text);
  const expression = fields.join(' ');
  const validation = validateDetailed(expression);
  if (!validation.valid) throw notASchedule(text, validation.errors[0]);
  const schedule: Schedule = { kind: 'cron', expression, text };
  // Valid fields can still describe a day that never comes (`0 0 L-30 2 *`: 30 days before the end of
  // February); refuse it now rather than arm a loop that never fires.
  if (firstCronSlot(schedule, Date.UTC(2000, 0, 1), UTC_ZONE) === null) {
    throw new GoaldError('usage', `${quote(text)} is not a schedule: it never fires`, SCHEDULE_HINT);
  }
  return schedule;
}

/** The first run strictly after `after`: the next grid point of an interval, the next matching cron minute. */
export function nextRunAfter(schedule: Schedule, after: Date, options: NextRunOptions = {}): Date {
  const afterMs = timeOf(after, 'after');
  if (schedule.kind === 'interval') {
    const anchorMs = options.anchor === undefined ? afterMs : timeOf(options.anchor, 'anchor');
    const periods = Math.floor((afterMs - anchorMs) / schedule.everyMs) + 1;
    return new Date(anchorMs + periods * schedule.everyMs);
  }
  const slot = firstCronSlot(schedule, afterMs, zoneFor(options.timezone));
  if (slot === null) {
    throw new GoaldError('usage', `${quote(schedule.text)} has no run in the next 100 years`, SCHEDULE_HINT);
  }
  return new Date(slot);
}

/**
 * How many runs fell due from the persisted deadline `nextRunAt` up to `now`, both included: 0 when
 * `nextRunAt` is still ahead, 1 when only it has passed, more when the process was down (or asleep) for
 * longer than a period. `nextRunAt` itself counts as one slot even if it is not on the schedule.
 */
export function missedRuns(
  schedule: Schedule,
  nextRunAt: Date,
  now: Date,
  options: Pick<NextRunOptions, 'timezone'> = {},
): number {
  const dueMs = timeOf(nextRunAt, 'nextRunAt');
  const nowMs = timeOf(now, 'now');
  if (nowMs < dueMs) return 0;
  if (schedule.kind === 'interval') return 1 + Math.floor((nowMs - dueMs) / schedule.everyMs);
  let count = 1;
  for (const slot of cronSlotsAfter(schedule, dueMs, zoneFor(options.timezone))) {
    if (slot > nowMs) break;
    count += 1;
  }
  return count;
}

/** Refuses an unknown time zone up front (the scheduler calls this once when it is created). */
export function assertTimezone(timezone: string): void {
  zoneFor(timezone);
}

function notASchedule(text: string, fieldError?: CronFieldError): GoaldError {
  const field = fieldError === undefined ? undefined : CRON_FIELD_NAMES[fieldError.field];
  const detail =
    fieldError === undefined || field === undefined
      ? ''
      : fieldError.message.includes('impossible')
        ? `: day ${quote(fieldError.value ?? '')} never occurs in those months`
        : `: the ${field} field ${quote(fieldError.value ?? '')} is not valid`;
  return new GoaldError('usage', `${quote(text)} is not a schedule${detail}`, SCHEDULE_HINT);
}

/** Shows a value the user typed, quoted, on one line and bounded. */
function quote(text: string): string {
  return JSON.stringify(ellipsize(text.replace(/\s+/g, ' '), 63, '...'));
}

function timeOf(date: Date, what: string): number {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new GoaldError('internal', `schedule: ${what} is an invalid date`);
  return ms;
}

function firstCronSlot(schedule: Extract<Schedule, { kind: 'cron' }>, afterMs: number, zone: Zone): number | null {
  for (const slot of cronSlotsAfter(schedule, afterMs, zone)) return slot;
  return null;
}

/**
 * The cron slots strictly after `afterMs`, ascending, up to the horizon. Walks local calendar days: a day
 * is skipped on the parsed month/day/weekday sets, then confirmed by node-cron's own matcher (which knows
 * `L`, `W` and `#`), and only matching days expand into their hour × minute candidates.
 */
function* cronSlotsAfter(
  schedule: Extract<Schedule, { kind: 'cron' }>,
  afterMs: number,
  zone: Zone,
): Generator<number> {
  const validation = validateDetailed(schedule.expression);
  const fields = validation.fields;
  if (fields === undefined) return;
  const minutes = [...fields.minute].sort((a, b) => a - b);
  const hours = [...fields.hour].sort((a, b) => a - b);
  const months = new Set(fields.month);
  const plainDays = numericSet(fields.dayOfMonth);
  const plainWeekdays = numericSet(fields.dayOfWeek);
  const [firstHour = 0] = hours;
  const [firstMinute = 0] = minutes;
  // The task only answers "does this calendar day match": it is asked about the day's first candidate
  // minute written as a UTC date, so the time zone never enters node-cron. It is never started.
  const dayMatcher: ScheduledTask = createTask(schedule.expression, () => undefined, { timezone: 'UTC' });
  try {
    const afterWall = zone.wallOf(afterMs);
    const firstDay = Math.floor((afterWall - WALL_SLACK_MS) / DAY_MS) * DAY_MS;
    let last = afterMs;
    for (let index = 0; index < CRON_HORIZON_DAYS; index += 1) {
      const dayWall = firstDay + index * DAY_MS;
      const day = new Date(dayWall);
      if (!months.has(day.getUTCMonth() + 1)) continue;
      if (plainDays !== null && !plainDays.has(day.getUTCDate())) continue;
      if (plainWeekdays !== null && !plainWeekdays.has(day.getUTCDay())) continue;
      if (!dayMatcher.match(new Date(dayWall + firstHour * HOUR_MS + firstMinute * MINUTE_MS))) continue;
      const fixedOffset = zone.fixedOffsetOn(dayWall);
      for (const hour of hours) {
        for (const minute of minutes) {
          const wall = dayWall + hour * HOUR_MS + minute * MINUTE_MS;
          if (wall < afterWall - WALL_SLACK_MS) continue;
          const slot = fixedOffset === null ? zone.instantOf(wall) : wall - fixedOffset;
          // `> last` also drops the duplicate a daylight-saving gap produces (02:30 shifted onto 03:30).
          if (slot > last) {
            last = slot;
            yield slot;
          }
        }
      }
    }
  } finally {
    void dayMatcher.destroy();
  }
}

/** The set of a parsed cron field when it holds only plain numbers (no `L`, `W`, `#` tokens). */
function numericSet(values: (number | string)[]): Set<number> | null {
  return values.every((value): value is number => typeof value === 'number') ? new Set(values) : null;
}

/** Wall time ("local time written as if it were UTC") and its conversion to instants, for one zone. */
interface Zone {
  wallOf(instant: number): number;
  /** The instant of a wall time; a skipped one lands one gap later, a repeated one at its first occurrence. */
  instantOf(wall: number): number;
  /** The zone's offset on that local day when it does not change during the day, else null. */
  fixedOffsetOn(dayWall: number): number | null;
}

const UTC_ZONE: Zone = { wallOf: (instant) => instant, instantOf: (wall) => wall, fixedOffsetOn: () => 0 };

function zoneFor(timezone: string | undefined): Zone {
  if (timezone === undefined || timezone === 'UTC' || timezone === 'Etc/UTC') return UTC_ZONE;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch (error) {
    throw new GoaldError('usage', `${quote(timezone)} is not a time zone`, 'use an IANA name such as Europe/Berlin, or UTC', {
      cause: error,
    });
  }
  const wallOf = (instant: number): number => {
    const parts: Record<string, number> = {};
    for (const part of format.formatToParts(new Date(instant))) {
      if (part.type !== 'literal') parts[part.type] = Number(part.value);
    }
    const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
    const ms = ((instant % 1_000) + 1_000) % 1_000;
    return Date.UTC(year, month - 1, day, hour, minute, second, ms);
  };
  const offsetAt = (instant: number): number => wallOf(instant) - instant;
  const instantOf = (wall: number): number => {
    // The offsets a few hours either side cover both sides of any transition near this wall time.
    const near = wall - offsetAt(wall);
    const candidates = [wall - offsetAt(near - WALL_SLACK_MS), wall - offsetAt(near + WALL_SLACK_MS)].sort(
      (a, b) => a - b,
    );
    const exact = candidates.find((candidate) => wallOf(candidate) === wall);
    return exact ?? Math.max(...candidates);
  };
  return {
    wallOf,
    instantOf,
    fixedOffsetOn: (dayWall) => {
      const start = offsetAt(instantOf(dayWall));
      return offsetAt(instantOf(dayWall + DAY_MS)) === start ? start : null;
    },
  };
}
