import { describe, expect, it } from 'vitest';
import { clip, cutHead, cutMiddle, cutTail, ellipsize, oneLine } from '../src/cut-text.js';

describe('oneLine', () => {
  it('collapses every whitespace run and trims', () => {
    expect(oneLine('  a\n\tb   c \r\n')).toBe('a b c');
  });
});

describe('ellipsize', () => {
  it('keeps a text within the bound and cuts a longer one to exactly the bound, ending in …', () => {
    expect(ellipsize('abc', 3)).toBe('abc');
    expect(ellipsize('abcd', 3)).toBe('ab…');
    expect(ellipsize('abcd', 3)).toHaveLength(3);
  });

  it('takes another ellipsis, still within the bound', () => {
    expect(ellipsize('abcdef', 6, '...')).toBe('abcdef');
    expect(ellipsize('abcdefg', 6, '...')).toBe('abc...');
  });

  it('keeps line breaks (a block cut at its end)', () => {
    expect(ellipsize('a\nb\nc\nd', 5)).toBe('a\nb\n…');
  });
});

describe('clip', () => {
  it('puts the value on one line, then cuts it', () => {
    expect(clip('  one\ntwo  ', 20)).toBe('one two');
    expect(clip('one\n\ntwo three', 8)).toBe('one two…');
    expect(clip('one two three', 8, '...')).toBe('one t...');
  });
});

describe('cut with a marker', () => {
  const text = 'abcdefghij'.repeat(10);
  for (const [name, cut] of [
    ['cutHead', cutHead],
    ['cutTail', cutTail],
    ['cutMiddle', cutMiddle],
  ] as const) {
    it(`${name} returns short text unchanged and long text within the limit`, () => {
      expect(cut('short', 10)).toBe('short');
      for (const max of [0, 5, 30, 60, 99]) expect(cut(text, max).length).toBeLessThanOrEqual(max);
      expect(cut(text, 60)).toMatch(/\[\.\.\. \d+ chars cut \.\.\.\]/);
    });
  }

  it('keeps the right ends', () => {
    expect(cutHead(text, 60).startsWith('abcdefghij')).toBe(true);
    expect(cutTail(text, 60).endsWith('abcdefghij')).toBe(true);
    const middle = cutMiddle(text, 60);
    expect(middle.startsWith('abcdefghij')).toBe(true);
    expect(middle.endsWith('hij')).toBe(true);
  });

  it('cutTail names how many chars it cut, and what it kept plus what it cut is the original', () => {
    expect(cutTail('0123456789', 10)).toBe('0123456789');
    const original = `${'x'.repeat(100)}0123456789`;
    const cut = cutTail(original, 40);
    expect(cut).toBe(`[... 94 chars cut ...]\n${'x'.repeat(6)}0123456789`);
    expect(cut.length).toBeLessThanOrEqual(40);
    expect(94 + cut.slice(cut.indexOf('\n') + 1).length).toBe(original.length);
  });
});
