import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDaemonLog } from '../../src/daemon/daemon-log.js';

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gd-log-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const read = (file: string): string => readFileSync(file, 'utf8');

describe('openDaemonLog', () => {
  it('appends lines to a 0600 file', async () => {
    const file = path.join(await tempDir(), 'daemon.log');
    const log = openDaemonLog(file);
    log('one');
    log('two\n');
    expect(read(file)).toBe('one\ntwo\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('rotates by size into .1 and .2 and drops the oldest, never passing the bound', async () => {
    const file = path.join(await tempDir(), 'daemon.log');
    const log = openDaemonLog(file, { maxBytes: 100, keep: 2 });
    const line = (n: number): string => `line ${String(n).padStart(3, '0')} ${'x'.repeat(30)}`; // 40 bytes + \n
    for (let n = 1; n <= 10; n += 1) log(line(n));
    // Two lines fit in 100 bytes: 9-10 in the log, 7-8 in .1, 5-6 in .2, older ones gone.
    expect(read(file)).toBe(`${line(9)}\n${line(10)}\n`);
    expect(read(`${file}.1`)).toBe(`${line(7)}\n${line(8)}\n`);
    expect(read(`${file}.2`)).toBe(`${line(5)}\n${line(6)}\n`);
    expect(existsSync(`${file}.3`)).toBe(false);
    for (const name of [file, `${file}.1`, `${file}.2`]) expect(statSync(name).size).toBeLessThanOrEqual(100);
  });

  it('counts what others appended to the same file (stderr shares it) before rotating', async () => {
    const file = path.join(await tempDir(), 'daemon.log');
    await writeFile(file, 'y'.repeat(90));
    const log = openDaemonLog(file, { maxBytes: 100 });
    log('a line of twenty b');
    expect(read(`${file}.1`)).toBe('y'.repeat(90));
    expect(read(file)).toBe('a line of twenty b\n');
  });

  it('never throws when it cannot write, and says how many lines it lost once it can again', async () => {
    const dir = path.join(await tempDir(), 'gone'); // a missing directory fails the write, for root too
    const file = path.join(dir, 'daemon.log');
    const log = openDaemonLog(file);
    expect(() => log('lost 1')).not.toThrow();
    log('lost 2');
    await mkdir(dir);
    log('back');
    expect(read(file)).toMatch(/^\S+ \(2 log lines could not be written: ENOENT[^\n]*\)\nback\n$/);
  });
});
