import { describe, expect, it } from 'vitest';
import {
  formatDuration,
  parseDuration,
  parseNonNegativeNumber,
  parsePositiveInt,
  toDurationText,
} from '../../src/config/duration.js';
import { GoaldError } from '../../src/errors.js';

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

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['0s', 0],
    ['500ms', 500],
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['1.5h', 5_400_000],
    ['2d', 172_800_000],
    ['0.5s', 500],
    ['1.0005s', 1_001],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text, '--turn-timeout')).toBe(ms);
  });

  it.each(['abc', '', '30', '-5m', '5 m', ' 5m', '5m ', '5M', '1h30m', '.5s', '5.s', '1e3s', 'Infinity', '5min', '0x10s'])(
    'rejects %j with the flag, the value and the fix',
    (text) => {
      const error = errorOf(() => parseDuration(text, '--turn-timeout'));
      expect(error.code).toBe('usage');
      expect(error.message).toBe(`--turn-timeout: ${JSON.stringify(text)} is not a duration`);
      expect(error.hint).toBe('use a number with ms, s, m, h or d, e.g. 90s or 30m');
    },
  );

  it('rejects durations too long to be exact milliseconds', () => {
    expect(errorOf(() => parseDuration('99999999999999d', '--wall-clock')).message).toBe(
      '--wall-clock: "99999999999999d" is too long',
    );
  });

  it('keeps a pasted paragraph out of the message', () => {
    const error = errorOf(() => parseDuration(`a\nb ${'x'.repeat(200)}`, '--cooldown'));
    expect(error.message).not.toContain('\n');
    expect(error.message.length).toBeLessThan(80);
  });
});

describe('parsePositiveInt', () => {
  it.each([
    ['1', 1],
    ['20', 20],
    ['500000', 500_000],
    ['500_000', 500_000],
    ['007', 7],
  ])('%s → %d', (text, value) => {
    expect(parsePositiveInt(text, '--max-turns')).toBe(value);
  });

  it.each(['abc', '12abc', '', '0', '-1', '1.5', '1e3', '1e999', '+5', ' 5', '0x10', '_5', '5_', '99999999999999999999'])(
    'rejects %j',
    (text) => {
      const error = errorOf(() => parsePositiveInt(text, '--max-turns'));
      expect(error.code).toBe('usage');
      expect(error.message).toBe(`--max-turns: ${JSON.stringify(text)} is not a positive whole number`);
      expect(error.hint).toBe('use a whole number greater than 0, e.g. 20');
    },
  );
});

describe('parseNonNegativeNumber', () => {
  it.each([
    ['0', 0],
    ['5', 5],
    ['2.50', 2.5],
    ['0.01', 0.01],
  ])('%s → %d', (text, value) => {
    expect(parseNonNegativeNumber(text, '--cost-budget')).toBe(value);
  });

  it.each(['abc', '12abc', '', '-1', '1e999', '1e3', '.5', '5.', 'NaN', 'Infinity', '$5', '1,5'])('rejects %j', (text) => {
    const error = errorOf(() => parseNonNegativeNumber(text, '--cost-budget'));
    expect(error.code).toBe('usage');
    expect(error.message).toBe(`--cost-budget: ${JSON.stringify(text)} is not a number of 0 or more`);
    expect(error.hint).toBe('use a number such as 5 or 2.50');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [450, '450ms'],
    [999.4, '999ms'],
    [999.6, '1s'],
    [2_300, '2.3s'],
    [2_000, '2s'],
    [59_949, '59.9s'],
    [59_960, '1m 00s'],
    [65_000, '1m 05s'],
    [3_599_400, '59m 59s'],
    [3_599_999, '1h 00m'],
    [3_600_000, '1h 00m'],
    [7_380_000, '2h 03m'],
    [86_400_000 * 3 + 3_600_000 * 4, '3d 04h'],
    [-1_500, '-1.5s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('toDurationText', () => {
  it.each([
    [0, '0'],
    [300, '300ms'],
    [500, '500ms'],
    [1_000, '1s'],
    [1_500, '1500ms'],
    [2_000, '2s'],
    [30_000, '30s'],
    [90_000, '90s'],
    [120_000, '2m'],
    [1_800_000, '30m'],
    [5_400_000, '90m'],
    [7_200_000, '2h'],
    [86_400_000, '1d'],
  ])('%d ms → %s, which parses back', (ms, text) => {
    expect(toDurationText(ms)).toBe(text);
    expect(parseDuration(text, 'x')).toBe(ms);
  });
});
