import { appendFile, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileDurable } from '../../state/durable-file.js';
import { appendTurnRecord, readTurnLog, readTurnRecords, turnLogPath } from '../../state/turn-log.js';
import { makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
});
afterEach(async () => {
  await cleanup();
});

describe('turn log', () => {
  it('appends one JSON line per record and reads them back in order', async () => {
    const goalDir = join(dir, 'goals', 'g1');
    await appendTurnRecord(goalDir, { turn: 1, outcome: 'completed' });
    await appendTurnRecord(goalDir, { turn: 2, outcome: 'timed-out', note: 'line\nbreak' });
    expect(await readFile(turnLogPath(goalDir), 'utf8')).toBe(
      '{"turn":1,"outcome":"completed"}\n{"turn":2,"outcome":"timed-out","note":"line\\nbreak"}\n',
    );
    expect((await stat(turnLogPath(goalDir))).mode & 0o777).toBe(0o600);
    expect(await readTurnRecords(goalDir)).toEqual([
      { turn: 1, outcome: 'completed' },
      { turn: 2, outcome: 'timed-out', note: 'line\nbreak' },
    ]);
  });

  it('reads a missing log as empty', async () => {
    expect(await readTurnLog(join(dir, 'nope'))).toEqual({ records: [], skipped: [] });
  });

  it('ignores and reports a torn last line (a crash mid-append)', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, { turn: 1 });
    await appendFile(turnLogPath(goalDir), '{"turn":2,"outc');
    const skipped: unknown[] = [];
    expect(await readTurnRecords(goalDir, (line) => skipped.push(line))).toEqual([{ turn: 1 }]);
    expect(skipped).toEqual([
      {
        line: 2,
        kind: 'torn',
        message: `${turnLogPath(goalDir)}:2: incomplete last line (an append interrupted by a crash); ignored`,
      },
    ]);
  });

  it('starts the next append on a fresh line after a torn one', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, { turn: 1 });
    await appendFile(turnLogPath(goalDir), '{"turn":2,"outc');
    await appendTurnRecord(goalDir, { turn: 3 });
    const log = await readTurnLog(goalDir);
    expect(log.records).toEqual([{ turn: 1 }, { turn: 3 }]);
    expect(log.skipped.map(({ line, kind }) => ({ line, kind }))).toEqual([{ line: 2, kind: 'invalid' }]);
    expect(log.skipped[0]?.message).not.toContain('\n');
  });

  it('keeps a complete last record that only lacks its newline', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, { turn: 1 });
    await appendFile(turnLogPath(goalDir), '{"turn":2}');
    expect(await readTurnLog(goalDir)).toEqual({ records: [{ turn: 1 }, { turn: 2 }], skipped: [] });
  });
});

describe('writeFileDurable', () => {
  it('replaces a file whole, with mode 0600, leaving no temp file', async () => {
    const path = join(dir, 'turn-1.prompt.txt');
    await writeFileDurable(path, 'first');
    await writeFileDurable(path, 'second');
    expect(await readFile(path, 'utf8')).toBe('second');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['turn-1.prompt.txt']);
  });
});
