import { describe, expect, test } from 'vitest';
import { createLineSplitter } from '../../src/process/line-splitter.js';

// Feeds the chunks, flushes, and returns the delivered lines.
function split(chunks: string[], maxLineChars?: number): string[] {
  const lines: string[] = [];
  const splitter = createLineSplitter((line) => lines.push(line), maxLineChars);
  for (const chunk of chunks) splitter.push(chunk);
  splitter.flush();
  return lines;
}

describe('createLineSplitter', () => {
  test.each<[string, string[], string[]]>([
    ['whole lines', ['a\nb\n'], ['a', 'b']],
    ['a line split across chunks', ['he', 'llo\nwor', 'ld\n'], ['hello', 'world']],
    ['an unterminated last line on flush', ['a\nb'], ['a', 'b']],
    ['CRLF endings', ['a\r\nb\r\n'], ['a', 'b']],
    ['empty lines', ['\n\na\n'], ['', '', 'a']],
    ['nothing', [], []],
  ])('%s', (_name, chunks, lines) => {
    expect(split(chunks)).toEqual(lines);
  });

  test('a line over the limit is delivered cut and its rest is dropped up to the newline', () => {
    expect(split(['abcdefgh', 'ijkl', 'mn\nok\n'], 5)).toEqual(['abcde', 'ok']);
  });

  test('a long line that ends within the chunk is cut too', () => {
    expect(split(['abcdefgh\nok'], 5)).toEqual(['abcde', 'ok']);
  });

  test('memory stays bounded: a long run without newlines is never held whole', () => {
    const lines: string[] = [];
    const splitter = createLineSplitter((line) => lines.push(line), 10);
    for (let index = 0; index < 1_000; index += 1) splitter.push('x'.repeat(1_000));
    splitter.push('\nend');
    splitter.flush();
    expect(lines).toEqual(['x'.repeat(10), 'end']);
  });
});
