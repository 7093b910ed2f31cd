import { describe, expect, it } from 'vitest';

import { formatCount, pluralize } from '../../src/breakers/format-quantity.js';

describe('formatCount', () => {
  // The output users saw when it was toLocaleString('en-US'), kept exactly.
  it.each([0, 7, 999, 1000, 12_345, 512_345, 1_234_567.6, 999_999.5, -1234, -12, 1e21, NaN, Infinity, -Infinity])(
    'groups %d like en-US',
    (value) => {
      expect(formatCount(value)).toBe(Math.round(value).toLocaleString('en-US'));
    },
  );

  it('never prints a negative zero', () => {
    expect(formatCount(-0.4)).toBe('0');
  });
});

describe('pluralize', () => {
  it('counts with the noun in the right number', () => {
    expect(pluralize(1, 'turn')).toBe('1 turn');
    expect(pluralize(12_000, 'token')).toBe('12,000 tokens');
  });
});
