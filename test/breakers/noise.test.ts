import { describe, expect, it } from 'vitest';
import { DEFAULT_NOISE_PATHS, isNoisePath } from '../../src/breakers/index.js';

describe('isNoisePath', () => {
  it.each([
    // basename patterns match at any depth
    ['app.log', ['*.log'], true],
    ['logs/deep/app.log', ['*.log'], true],
    ['app.log.txt', ['*.log'], false],
    ['catalog', ['*.log'], false],
    ['package-lock.json', ['package-lock.json'], true],
    ['packages/web/package-lock.json', ['package-lock.json'], true],
    ['my-package-lock.json', ['package-lock.json'], false],
    ['package-lock.jsonx', ['package-lock.json'], false],
    // `.` is literal, not "any character"
    ['packageXlock.json', ['package.lock.json'], false],
    // `*` stays inside a segment
    ['src/a.ts', ['src/*.ts'], true],
    ['src/deep/a.ts', ['src/*.ts'], false],
    // `**` crosses segments
    ['src/deep/a.ts', ['src/**'], true],
    ['src/deep/a.ts', ['src/**/a.ts'], true],
    ['src/a.ts', ['src/**/a.ts'], true],
    ['src/deep/b.ts', ['src/**/a.ts'], false],
    ['node_modules/x/index.js', ['node_modules/**'], true],
    ['web/node_modules/x/index.js', ['node_modules/**'], true],
    ['node_modules_backup/x.js', ['node_modules/**'], false],
    ['a/b/__pycache__/m.cpython-312.pyc', ['__pycache__/**'], true],
    ['x/y.txt', ['**/y.txt'], true],
    ['y.txt', ['**/y.txt'], true],
    // `?` is one character within a segment
    ['a1.txt', ['a?.txt'], true],
    ['a12.txt', ['a?.txt'], false],
    ['a/.txt', ['a?.txt'], false],
    // a leading `/` anchors at the root
    ['build.log', ['/build.log'], true],
    ['sub/build.log', ['/build.log'], false],
    // a leading ./ in the path is ignored
    ['./yarn.lock', ['yarn.lock'], true],
    // several patterns, none, empty list
    ['src/index.ts', ['*.log', 'yarn.lock'], false],
    ['yarn.lock', ['*.log', 'yarn.lock'], true],
    ['yarn.lock', [], false],
  ])('%s against %j -> %s', (path, patterns, expected) => {
    expect(isNoisePath(path, patterns)).toBe(expected);
  });

  it.each([
    ['package-lock.json', true],
    ['yarn.lock', true],
    ['pnpm-lock.yaml', true],
    ['crates/core/Cargo.lock', true],
    ['poetry.lock', true],
    ['go.sum', true],
    ['go.mod', false],
    ['debug.log', true],
    ['.DS_Store', true],
    ['assets/.DS_Store', true],
    ['pkg/__pycache__/mod.cpython-312.pyc', true],
    ['node_modules/.package-lock.json', true],
    ['package.json', false],
    ['src/index.ts', false],
    ['README.md', false],
    ['Cargo.toml', false],
    ['logs.md', false],
  ])('DEFAULT_NOISE_PATHS: %s -> %s', (path, expected) => {
    expect(isNoisePath(path, DEFAULT_NOISE_PATHS)).toBe(expected);
  });
});
