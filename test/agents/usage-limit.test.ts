import { describe, expect, test } from 'vitest';
import { parseResetTime, readUsageLimitMessage, resetAtFromEpoch, saysUsageLimit } from '../../src/agents/usage-limit.js';

const MINUTE = 60_000;
// 2026-11-30 04:10 UTC = 2026-11-29 23:10 in New York (EST, UTC-5).
const NOW = Date.UTC(2026, 10, 30, 4, 10);

describe('parseResetTime: Claude Code messages', () => {
  test.each([
    // The end of the displayed minute: the limit lifts within it.
    ["You've hit your 5-hour limit · resets 5:07am (UTC)", Date.UTC(2026, 10, 30, 5, 7) + MINUTE],
    // 2am New York is later tonight's 2am: 07:00 UTC the same day.
    ["You've hit your 5-hour limit · resets 2am (America/New_York)", Date.UTC(2026, 10, 30, 7, 0) + MINUTE],
    ["You've hit your 5-hour limit · resets 9pm (America/New_York)", Date.UTC(2026, 10, 30, 2, 0) + 24 * 60 * MINUTE + MINUTE],
    ["You've hit your 5-hour limit · resets Dec 2, 1:09am (America/New_York)", Date.UTC(2026, 11, 2, 6, 9) + MINUTE],
    ["You've hit your weekly limit · resets Mar 6, 2028, 10:16pm (America/New_York)", Date.UTC(2028, 2, 7, 3, 16) + MINUTE],
    ['Claude AI usage limit reached|1796191850', 1_796_191_850_000],
  ])('%s', (text, expected) => {
    expect(parseResetTime(text, { now: NOW, timeZone: 'UTC' })).toBe(expected);
  });

  test('a time in summer time uses that offset (EDT, UTC-4)', () => {
    const june = Date.UTC(2026, 5, 10, 12, 0);
    expect(parseResetTime('resets 3pm (America/New_York)', { now: june })).toBe(Date.UTC(2026, 5, 10, 19, 0) + MINUTE);
  });

  test('a time that just passed is today (read late), one well past is tomorrow', () => {
    expect(parseResetTime('resets 4:05am (UTC)', { now: NOW })).toBe(Date.UTC(2026, 10, 30, 4, 5) + MINUTE);
    expect(parseResetTime('resets 1am (UTC)', { now: NOW })).toBe(Date.UTC(2026, 11, 1, 1, 0) + MINUTE);
  });

  test('a date without a year that is well past is next year', () => {
    expect(parseResetTime('resets Jan 2, 1am (UTC)', { now: NOW })).toBe(Date.UTC(2027, 0, 2, 1, 0) + MINUTE);
  });
});

describe('parseResetTime: Codex messages (local time, no zone named)', () => {
  test.each([
    ['… or try again at 5:08 AM.', 'UTC', Date.UTC(2026, 10, 30, 5, 8) + MINUTE],
    ['… or try again at 11:30 PM.', 'America/New_York', Date.UTC(2026, 10, 30, 4, 30) + MINUTE],
    ['… or try again at Dec 2nd, 2026 1:11 AM.', 'America/New_York', Date.UTC(2026, 11, 2, 6, 11) + MINUTE],
  ])('%s in %s', (text, timeZone, expected) => {
    expect(parseResetTime(text, { now: NOW, timeZone })).toBe(expected);
  });

  test('relative times', () => {
    expect(parseResetTime('Rate limit reached. Please try again in 20s.', { now: NOW })).toBe(NOW + 20_000);
    expect(parseResetTime('Please try again in 1m30s', { now: NOW })).toBe(NOW + 90_000);
    expect(parseResetTime('resets in 2 hours', { now: NOW })).toBe(NOW + 2 * 60 * MINUTE);
  });

  test('no time named', () => {
    expect(parseResetTime('exceeded retry limit, last status: 429 Too Many Requests', { now: NOW })).toBeNull();
    expect(parseResetTime('Please try again later.', { now: NOW })).toBeNull();
  });

  test('an unknown zone in the text falls back to the CLI zone', () => {
    expect(parseResetTime('resets 5:07am (Mars/Olympus)', { now: NOW, timeZone: 'UTC' })).toBe(
      Date.UTC(2026, 10, 30, 5, 7) + MINUTE,
    );
  });
});

describe('readUsageLimitMessage', () => {
  test.each([
    "You've hit your 5-hour limit · resets 5:07am (UTC)",
    'You’ve hit your usage limit. Upgrade to Pro … or try again at 5:08 AM.',
    'exceeded retry limit, last status: 429 Too Many Requests',
    "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
  ])('a limit: %s', (text) => {
    expect(readUsageLimitMessage(text, { now: NOW, timeZone: 'UTC' })).toMatchObject({ message: text });
  });

  test.each(['API Error: 500 Internal Server Error', 'exceeded retry limit, last status: 502 Bad Gateway', 'Reached maximum number of turns (3)'])(
    'not a limit: %s',
    (text) => {
      expect(saysUsageLimit(text)).toBe(false);
      expect(readUsageLimitMessage(text, { now: NOW })).toBeNull();
    },
  );
});

describe('resetAtFromEpoch', () => {
  test('seconds and milliseconds', () => {
    expect(resetAtFromEpoch(1_796_191_850)).toBe(1_796_191_850_000);
    expect(resetAtFromEpoch(1_796_191_850_123)).toBe(1_796_191_850_123);
    expect(resetAtFromEpoch('1796191850')).toBe(1_796_191_850_000);
  });

  test('anything else is null', () => {
    for (const value of [null, undefined, 0, -5, Number.NaN, 'soon', '', {}]) expect(resetAtFromEpoch(value)).toBeNull();
  });
});
