import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { clearRunningChecks, readRunningChecks, recordRunningChecks } from '../../state/running-checks.js';

describe('running-checks', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'goald-running-checks-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads back the groups last recorded, and none once cleared', async () => {
    expect(await readRunningChecks(dir)).toEqual([]);
    recordRunningChecks(dir, [{ pid: 41, startTime: '123', token: 'a' }]);
    const both = [{ pid: 41, startTime: '123', token: 'a' }, { pid: 42, startTime: null, token: 'b' }];
    recordRunningChecks(dir, both);
    expect(await readRunningChecks(dir)).toEqual(both);
    // Only the owner can read it (tokens find processes), and no temp file is left behind.
    expect((await stat(path.join(dir, 'running-checks.json'))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['running-checks.json']);
    clearRunningChecks(dir);
    clearRunningChecks(dir); // nothing left to clear is fine
    expect(await readRunningChecks(dir)).toEqual([]);
  });

  it('rewrites the file in place, a shorter list padded to the longer one, and replaces it beyond a page', async () => {
    const file = path.join(dir, 'running-checks.json');
    const group = (pid: number): { pid: number; startTime: string; token: string } => ({ pid, startTime: '123', token: `token-${pid}` });
    const three = [group(41), group(42), group(43)];
    recordRunningChecks(dir, three);
    const { ino } = await stat(file);
    recordRunningChecks(dir, [group(44)]);
    expect(await readRunningChecks(dir)).toEqual([group(44)]);
    // The same file, as long as the longer list was: one write at its start, no new file and no rename.
    expect((await stat(file)).ino).toBe(ino);
    expect((await readFile(file, 'utf8')).length).toBe(`${JSON.stringify(three)}\n`.length);
    // More than a page (dozens of checks): a whole file renamed into place, so a crash cannot tear it.
    const many = Array.from({ length: 120 }, (_, index) => group(100 + index));
    expect(JSON.stringify(many).length).toBeGreaterThan(4_096);
    recordRunningChecks(dir, many);
    expect(await readRunningChecks(dir)).toEqual(many);
    expect((await stat(file)).ino).not.toBe(ino);
    // And back to one group: the file is longer than a page, so it is replaced again, not padded.
    recordRunningChecks(dir, [group(45)]);
    expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify([group(45)])}\n`);
    expect(await readdir(dir)).toEqual(['running-checks.json']);
  });

  it.each([
    ['a torn write', '[{"pid":41,"sta'],
    ['an empty file', ''],
    ['a record of the wrong shape', '[{"pid":"41","startTime":null,"token":"a"}]'],
    ['a pid that names no process group', '[{"pid":-1,"startTime":null,"token":"a"}]'],
  ])('reads %s as no groups (nothing is killed on its word)', async (_what, text) => {
    await writeFile(path.join(dir, 'running-checks.json'), text);
    expect(await readRunningChecks(dir)).toEqual([]);
  });

  it('says why when the goal directory is gone', () => {
    expect(() => recordRunningChecks(path.join(dir, 'missing'), [{ pid: 41, startTime: null, token: 'a' }])).toThrow(/ENOENT/);
  });
});
