import { describe, expect, test } from 'vitest';
import { cutText, formatDuration } from '../../src/agents/message-text.js';

describe('formatDuration', () => {
  test.each([
    [300, '300ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [30_000, '30s'],
    [90_000, '90s'],
    [120_000, '2m'],
    [1_800_000, '30m'],
    [7_200_000, '2h'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('cutText', () => {
  test('keeps a text within the bound and cuts a longer one to exactly the bound, ending in …', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd', 3)).toBe('ab…');
    expect(cutText('abcd', 3)).toHaveLength(3);
  });
});
