import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { goaldPathsIn } from '../src/guard/goald-paths.js';
import { isInside, isInsideResolved, realOrResolved } from '../src/path-inside.js';

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

describe('realOrResolved', () => {
  it('resolves a symlink to where it points, and a path that does not exist by its path alone', () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'goald-real-')));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(dir, path.join(dir, 'link'));
    expect(realOrResolved(path.join(dir, 'link'))).toBe(dir);
    expect(realOrResolved(`${dir}/missing/../x`)).toBe(path.join(dir, 'x'));
  });

  it("lets the guard find a GOALD_HOME named through a symlink inside the work tree (goaldPathsIn)", () => {
    const workspace = realpathSync(mkdtempSync(path.join(tmpdir(), 'goald-ws-')));
    const outside = mkdtempSync(path.join(tmpdir(), 'goald-link-'));
    onTestFinished(() => {
      rmSync(workspace, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    });
    symlinkSync(workspace, path.join(outside, 'ws'));
    mkdirSync(path.join(workspace, 'home'));
    const paths = goaldPathsIn(workspace, { home: path.join(outside, 'ws', 'home'), userConfig: '/elsewhere/config.json' });
    expect(paths.protect).toEqual(['/.goald/**', '/home/**']);
    expect(paths.ignore).toContain('/home/state.json');
  });
});
