import { describe, expect, test } from 'vitest';
import { createBoundedTail } from '../../src/process/bounded-tail.js';

describe('createBoundedTail', () => {
  test('keeps everything under the bound', () => {
    const tail = createBoundedTail(10);
    tail.append(Buffer.from('abc'));
    tail.append(Buffer.from('def'));
    expect(tail.text()).toBe('abcdef');
    expect(tail.totalBytes).toBe(6);
  });

  test('keeps only the last bytes across many chunks', () => {
    const tail = createBoundedTail(5);
    for (const chunk of ['abc', 'defg', 'h', 'ijklmnop', 'q']) tail.append(Buffer.from(chunk));
    expect(tail.text()).toBe('mnopq');
    expect(tail.totalBytes).toBe(17);
  });

  test('a single chunk larger than the bound keeps its end', () => {
    const tail = createBoundedTail(4);
    tail.append(Buffer.from('0123456789'));
    expect(tail.text()).toBe('6789');
  });

  test('a multi-byte character cut at the start is dropped, not shown as garbage', () => {
    const tail = createBoundedTail(5);
    tail.append(Buffer.from('aé€b'));
    // 'é' is 2 bytes, '€' 3: the last 5 bytes are the second byte of 'é', '€' and 'b'.
    expect(tail.text()).toBe('€b');
  });
});
