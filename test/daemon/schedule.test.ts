import { describe, expect, it } from 'vitest';
import { missedRuns, nextRunAfter, parseSchedule, type Schedule } from '../../src/daemon/schedule.js';
import { GoaldError } from '../../src/errors.js';

const at = (iso: string): Date => new Date(iso);

/** The GoaldError `run` throws. */
function errorOf(run: () => unknown): GoaldError {
  try {
    run();
  } catch (error) {
    if (error instanceof GoaldError) return error;
    throw error;
  }
  throw new Error('expected a GoaldError');
}

/** `count` successive runs, each computed from the previous one. */
function runsFrom(schedule: Schedule, after: Date, count: number, options: { anchor?: Date; timezone?: string } = {}): string[] {
  const runs: string[] = [];
  let cursor = after;
  for (let index = 0; index < count; index += 1) {
    cursor = nextRunAfter(schedule, cursor, options);
    runs.push(cursor.toISOString());
  }
  return runs;
}

const HINT = 'use a duration such as 30m, 2h or 1d, or a 5-field cron expression such as "0 9 * * 1-5"';

describe('parseSchedule', () => {
  it.each([
    ['90s', 90_000],
    ['1s', 1_000],
    ['30m', 1_800_000],
    ['45m', 2_700_000],
    ['2h', 7_200_000],
    ['1.5h', 5_400_000],
    ['1d', 86_400_000],
    ['  30m ', 1_800_000],
  ])('reads the duration %j as an exact interval', (text, everyMs) => {
    expect(parseSchedule(text)).toEqual({ kind: 'interval', everyMs, text: text.trim() });
  });

  it.each([
    ['0 9 * * 1-5', '0 9 * * 1-5'],
    ['*/15 * * * *', '*/15 * * * *'],
    ['0  9 * *\t1-5', '0 9 * * 1-5'],
    ['0 9 * * mon-fri', '0 9 * * mon-fri'],
    ['0 0 29 2 *', '0 0 29 2 *'],
    ['0 12 L * *', '0 12 L * *'],
  ])('reads %j as a cron expression', (text, expression) => {
    expect(parseSchedule(text)).toEqual({ kind: 'cron', expression, text: text.trim() });
  });

  it.each([
    ['500ms', 'the schedule "500ms" is shorter than 1s', 'use 1s or more, such as 30m'],
    ['999ms', 'the schedule "999ms" is shorter than 1s', 'use 1s or more, such as 30m'],
    ['0', 'the schedule "0" is shorter than 1s', 'use 1s or more, such as 30m'],
    ['soon', '"soon" is not a schedule', HINT],
    ['', '"" is not a schedule', HINT],
    ['-5m', '"-5m" is not a schedule', HINT],
    ['30 minutes', '"30 minutes" is not a schedule', HINT],
    ['@daily', '"@daily" is not a schedule', HINT],
    ['0 9 * *', '"0 9 * *" is not a schedule', HINT],
    ['61 * * * *', '"61 * * * *" is not a schedule: the minute field "61" is not valid', HINT],
    ['0 25 * * *', '"0 25 * * *" is not a schedule: the hour field "25" is not valid', HINT],
    ['0 9 * * 1-9', '"0 9 * * 1-9" is not a schedule: the weekday field "1-9" is not valid', HINT],
    ['0 0 30 2 *', '"0 0 30 2 *" is not a schedule: day "30" never occurs in those months', HINT],
    ['0 0 L-30 2 *', '"0 0 L-30 2 *" is not a schedule: it never fires', HINT],
    [
      '0 */5 * * * *',
      '"0 */5 * * * *" is not a schedule: it has 6 fields, and goald does not take a seconds field',
      'use 5 fields (minute hour day month weekday), such as "0 9 * * 1-5", or a duration such as 90s',
    ],
    ['every\nhour', '"every hour" is not a schedule', HINT],
  ])('refuses %j with a one-line usage error', (text, message, hint) => {
    const error = errorOf(() => parseSchedule(text));
    expect(error.code).toBe('usage');
    expect(error.message).toBe(message);
    expect(error.hint).toBe(hint);
    expect(error.message).not.toMatch(/\n/);
  });

  it('bounds a pasted paragraph in the message', () => {
    const error = errorOf(() => parseSchedule('x'.repeat(500)));
    expect(error.message.length).toBeLessThan(100);
  });
});

describe('nextRunAfter: intervals keep an exact cadence', () => {
  const every45m = parseSchedule('45m');

  it('steps 45 minutes from the anchor over several hours, never rounding to the hour', () => {
    const anchor = at('2024-01-01T00:00:00Z');
    expect(runsFrom(every45m, anchor, 9, { anchor })).toEqual([
      '2024-01-01T00:45:00.000Z',
      '2024-01-01T01:30:00.000Z',
      '2024-01-01T02:15:00.000Z',
      '2024-01-01T03:00:00.000Z',
      '2024-01-01T03:45:00.000Z',
      '2024-01-01T04:30:00.000Z',
      '2024-01-01T05:15:00.000Z',
      '2024-01-01T06:00:00.000Z',
      '2024-01-01T06:45:00.000Z',
    ]);
  });

  it.each([
    ['between two slots', '2024-01-01T01:10:00Z', '2024-01-01T01:30:00.000Z'],
    ['exactly on a slot (strictly after)', '2024-01-01T01:30:00Z', '2024-01-01T02:15:00.000Z'],
    ['a few ms late (a late timer keeps the grid)', '2024-01-01T01:30:00.250Z', '2024-01-01T02:15:00.000Z'],
    ['hours later (after downtime)', '2024-01-01T10:01:00Z', '2024-01-01T10:30:00.000Z'],
    ['before a future anchor', '2023-12-31T22:00:00Z', '2023-12-31T22:30:00.000Z'],
  ])('finds the grid point %s', (_, after, expected) => {
    expect(nextRunAfter(every45m, at(after), { anchor: at('2024-01-01T00:00:00Z') }).toISOString()).toBe(expected);
  });

  it('runs one period after `after` without an anchor', () => {
    expect(nextRunAfter(every45m, at('2024-01-01T10:07:13.500Z')).toISOString()).toBe('2024-01-01T10:52:13.500Z');
  });

  it('keeps 1d as 24 hours from the anchor, across 29 February', () => {
    const anchor = at('2024-02-27T09:30:00Z');
    expect(runsFrom(parseSchedule('1d'), at('2024-02-28T10:00:00Z'), 3, { anchor })).toEqual([
      '2024-02-29T09:30:00.000Z',
      '2024-03-01T09:30:00.000Z',
      '2024-03-02T09:30:00.000Z',
    ]);
  });
});

describe('nextRunAfter: cron (UTC)', () => {
  it.each([
    // 2024-01-05 is a Friday.
    ['0 9 * * 1-5', 'Friday before 9:00', '2024-01-05T08:59:00Z', '2024-01-05T09:00:00.000Z'],
    ['0 9 * * 1-5', 'Friday at 9:00 (strictly after)', '2024-01-05T09:00:00Z', '2024-01-08T09:00:00.000Z'],
    ['0 9 * * 1-5', 'Saturday noon', '2024-01-06T12:00:00Z', '2024-01-08T09:00:00.000Z'],
    ['0 9 * * mon-fri', 'Sunday night', '2024-01-07T23:59:59Z', '2024-01-08T09:00:00.000Z'],
    ['*/15 * * * *', 'mid-quarter', '2024-01-01T10:07:30Z', '2024-01-01T10:15:00.000Z'],
    ['*/15 * * * *', 'a millisecond before', '2024-01-01T10:14:59.999Z', '2024-01-01T10:15:00.000Z'],
    ['*/15 * * * *', 'on a slot', '2024-01-01T10:15:00Z', '2024-01-01T10:30:00.000Z'],
    ['*/15 * * * *', 'before midnight, at year end', '2024-12-31T23:50:00Z', '2025-01-01T00:00:00.000Z'],
    ['0 0 29 2 *', 'just after a leap day', '2024-03-01T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0 0 29 2 *', 'in a common year', '2023-01-01T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['0 0 29 2 *', 'before 2100 (not a leap year)', '2096-03-01T00:00:00Z', '2104-02-29T00:00:00.000Z'],
    ['0 0 31 * *', 'the 31st skips short months', '2024-01-31T00:00:00Z', '2024-03-31T00:00:00.000Z'],
    ['0 12 L * *', 'last day of a leap February', '2024-02-01T00:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['0 12 L * *', 'last day of a common February', '2023-02-01T00:00:00Z', '2023-02-28T12:00:00.000Z'],
    ['0 12 L * *', 'last day of April', '2024-04-29T13:00:00Z', '2024-04-30T12:00:00.000Z'],
    ['0 0 1 1 *', 'new year', '2024-06-01T00:00:00Z', '2025-01-01T00:00:00.000Z'],
    ['30 8 * * 1#2', 'second Monday', '2024-01-01T00:00:00Z', '2024-01-08T08:30:00.000Z'],
    ['0 0 29 2 1', '29 February on a Monday', '2000-01-01T00:00:00Z', '2016-02-29T00:00:00.000Z'],
  ])('%s from %s', (expression, _, after, expected) => {
    expect(nextRunAfter(parseSchedule(expression), at(after)).toISOString()).toBe(expected);
  });

  it('walks `0 9 * * 1-5` across a weekend', () => {
    expect(runsFrom(parseSchedule('0 9 * * 1-5'), at('2024-01-04T12:00:00Z'), 4)).toEqual([
      '2024-01-05T09:00:00.000Z',
      '2024-01-08T09:00:00.000Z',
      '2024-01-09T09:00:00.000Z',
      '2024-01-10T09:00:00.000Z',
    ]);
  });

  it('lists every month end of a year with `0 0 L * *`', () => {
    const runs = runsFrom(parseSchedule('0 0 L * *'), at('2023-01-01T00:00:00Z'), 12);
    expect(runs.map((run) => run.slice(0, 10))).toEqual([
      '2023-01-31', '2023-02-28', '2023-03-31', '2023-04-30', '2023-05-31', '2023-06-30',
      '2023-07-31', '2023-08-31', '2023-09-30', '2023-10-31', '2023-11-30', '2023-12-31',
    ]);
  });

  it('stays fast for a rare slot far away', () => {
    const started = performance.now();
    expect(nextRunAfter(parseSchedule('0 0 29 2 1'), at('2016-03-01T00:00:00Z')).toISOString()).toBe(
      '2044-02-29T00:00:00.000Z',
    );
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('nextRunAfter: cron in a time zone', () => {
  it.each([
    ['0 9 * * *', 'winter (CET, UTC+1)', '2024-01-10T00:00:00Z', '2024-01-10T08:00:00.000Z'],
    ['0 9 * * *', 'summer (CEST, UTC+2)', '2024-07-10T00:00:00Z', '2024-07-10T07:00:00.000Z'],
    ['30 2 * * *', 'a wall time skipped by the spring jump runs one hour later', '2024-03-30T12:00:00Z', '2024-03-31T01:30:00.000Z'],
    ['30 2 * * *', 'the day after the jump', '2024-03-31T01:30:00Z', '2024-04-01T00:30:00.000Z'],
    ['30 2 * * *', 'a repeated wall time runs at its first occurrence', '2024-10-26T12:00:00Z', '2024-10-27T00:30:00.000Z'],
    ['30 2 * * *', '...and only once', '2024-10-27T00:30:00Z', '2024-10-28T01:30:00.000Z'],
  ])('Europe/Berlin %s: %s', (expression, _, after, expected) => {
    expect(nextRunAfter(parseSchedule(expression), at(after), { timezone: 'Europe/Berlin' }).toISOString()).toBe(expected);
  });

  it('refuses an unknown time zone', () => {
    const error = errorOf(() => nextRunAfter(parseSchedule('0 9 * * *'), at('2024-01-01T00:00:00Z'), { timezone: 'Mars/Olympus' }));
    expect(error.code).toBe('usage');
    expect(error.message).toBe('"Mars/Olympus" is not a time zone');
  });
});

describe('missedRuns', () => {
  it.each([
    ['30m', '2024-01-01T10:00:00Z', '2024-01-01T09:59:59Z', 0],
    ['30m', '2024-01-01T10:00:00Z', '2024-01-01T10:00:00Z', 1],
    ['30m', '2024-01-01T10:00:00Z', '2024-01-01T10:29:59Z', 1],
    ['30m', '2024-01-01T10:00:00Z', '2024-01-01T10:30:00Z', 2],
    ['30m', '2024-01-01T10:00:00Z', '2024-01-01T13:10:00Z', 7],
    ['1d', '2024-01-01T10:00:00Z', '2024-01-08T09:00:00Z', 7],
    ['0 9 * * 1-5', '2024-01-05T09:00:00Z', '2024-01-05T08:00:00Z', 0],
    ['0 9 * * 1-5', '2024-01-05T09:00:00Z', '2024-01-08T08:59:00Z', 1],
    ['0 9 * * 1-5', '2024-01-05T09:00:00Z', '2024-01-08T09:00:00Z', 2],
    ['0 9 * * 1-5', '2024-01-05T09:00:00Z', '2024-01-12T09:00:00Z', 6],
    ['*/15 * * * *', '2024-01-01T10:00:00Z', '2024-01-01T11:00:00Z', 5],
    // A deadline off the grid counts as one slot, then the grid takes over.
    ['*/15 * * * *', '2024-01-01T10:07:00Z', '2024-01-01T10:31:00Z', 3],
  ])('%s due %s, now %s: %i', (every, nextRunAt, now, expected) => {
    expect(missedRuns(parseSchedule(every), at(nextRunAt), at(now))).toBe(expected);
  });

  it('counts a month of minute slots quickly', () => {
    const started = performance.now();
    expect(missedRuns(parseSchedule('* * * * *'), at('2024-01-01T00:00:00Z'), at('2024-01-31T00:00:00Z'))).toBe(
      30 * 24 * 60 + 1,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
