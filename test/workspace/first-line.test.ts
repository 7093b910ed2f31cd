import { describe, expect, it } from 'vitest';
import { splitFirstLine } from '../../src/workspace/first-line.js';

describe('splitFirstLine', () => {
  it('holds bytes until the first line break, hands the line over once, then passes every later byte', () => {
    const lines: string[] = [];
    const rest: string[] = [];
    const onStdout = splitFirstLine((line) => {
      lines.push(line.toString());
      return (chunk) => rest.push(chunk.toString());
    });
    onStdout(Buffer.from('inde'));
    expect(lines).toEqual([]);
    onStdout(Buffer.from('xed\nab'));
    onStdout(Buffer.from('c\nd\n'));
    expect(lines).toEqual(['indexed']);
    expect(rest).toEqual(['ab', 'c\nd\n']);
  });

  it('passes nothing after a line whose reader returned a sink that drops it, and nothing at all without a break', () => {
    const rest: string[] = [];
    const dropping = splitFirstLine(() => () => undefined);
    dropping(Buffer.from('bad\nmore'));
    dropping(Buffer.from('and more'));
    let called = false;
    const never = splitFirstLine(() => {
      called = true;
      return (chunk) => rest.push(chunk.toString());
    });
    never(Buffer.from('no line break yet'));
    expect(called).toBe(false);
    expect(rest).toEqual([]);
  });
});
