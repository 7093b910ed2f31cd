import { describe, expect, it } from 'vitest';
import { isInside, isInsideResolved } from '../src/path-inside.js';

describe('isInsideResolved', () => {
  it('answers as isInside does for resolved paths: the directory itself and below, never a sibling sharing its prefix', () => {
    const cases: Array<[string, string]> = [
      ['/a/b', '/a/b'],
      ['/a/b/c', '/a/b'],
      ['/a/bc', '/a/b'],
      ['/a', '/a/b'],
      ['/usr/bin', '/'],
      ['/home/u/.npm/_npx/bin', '/home/u/.npm'],
      ['/home/u/.npmrc', '/home/u/.npm'],
    ];
    for (const [file, dir] of cases) expect(isInsideResolved(file, dir), `${file} in ${dir}`).toBe(isInside(file, dir));
    expect(cases.map(([file, dir]) => isInsideResolved(file, dir))).toEqual([true, true, false, false, true, true, false]);
  });
});
