import { appendFile, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileDurable } from '../../state/durable-file.js';
import { appendTurnRecord, readTurnLog, readTurnRecords, turnLogPath } from '../../state/turn-log.js';
import { makeTurn } from './fixtures.js';
import { tempDirPerTest } from './helpers.js';

let dir: string;
tempDirPerTest((made) => (dir = made));

describe('turn log', () => {
  it('appends one JSON line per record and reads them back in order', async () => {
    const goalDir = join(dir, 'goals', 'g1');
    const first = makeTurn({ turn: 1 });
    const second = makeTurn({ turn: 2, status: 'paused', evaluation: { kind: 'skipped', reason: 'line\nbreak' } });
    await appendTurnRecord(goalDir, first);
    await appendTurnRecord(goalDir, second);
    expect(await readFile(turnLogPath(goalDir), 'utf8')).toBe(`${JSON.stringify(first)}\n${JSON.stringify(second)}\n`);
    expect(await readFile(turnLogPath(goalDir), 'utf8')).toContain('"reason":"line\\nbreak"');
    expect((await stat(turnLogPath(goalDir))).mode & 0o777).toBe(0o600);
    expect(await readTurnRecords(goalDir)).toEqual([first, second]);
  });

  it('reads a missing log as empty', async () => {
    expect(await readTurnLog(join(dir, 'nope'))).toEqual({ records: [], skipped: [] });
  });

  it('ignores and reports a torn last line (a crash mid-append)', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, makeTurn({ turn: 1 }));
    await appendFile(turnLogPath(goalDir), '{"turn":2,"outc');
    const skipped: unknown[] = [];
    expect(await readTurnRecords(goalDir, (line) => skipped.push(line))).toEqual([makeTurn({ turn: 1 })]);
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
    await appendTurnRecord(goalDir, makeTurn({ turn: 1 }));
    await appendFile(turnLogPath(goalDir), '{"turn":2,"outc');
    await appendTurnRecord(goalDir, makeTurn({ turn: 3 }));
    const log = await readTurnLog(goalDir);
    expect(log.records).toEqual([makeTurn({ turn: 1 }), makeTurn({ turn: 3 })]);
    expect(log.skipped.map(({ line, kind }) => ({ line, kind }))).toEqual([{ line: 2, kind: 'invalid' }]);
    expect(log.skipped[0]?.message).not.toContain('\n');
  });

  it('keeps a complete last record that only lacks its newline', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, makeTurn({ turn: 1 }));
    await appendFile(turnLogPath(goalDir), JSON.stringify(makeTurn({ turn: 2 })));
    expect(await readTurnLog(goalDir)).toEqual({ records: [makeTurn({ turn: 1 }), makeTurn({ turn: 2 })], skipped: [] });
  });

  it('checks every record against the schema: a JSON line of the wrong shape is skipped and reported', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, makeTurn({ turn: 1 }));
    await appendFile(turnLogPath(goalDir), `${JSON.stringify({ ...makeTurn({ turn: 2 }), status: 'done' })}\n`);
    await appendTurnRecord(goalDir, makeTurn({ turn: 3 }));
    const log = await readTurnLog(goalDir);
    expect(log.records.map((record) => record.turn)).toEqual([1, 3]);
    expect(log.skipped).toHaveLength(1);
    expect(log.skipped[0]).toMatchObject({ line: 2, kind: 'invalid' });
    expect(log.skipped[0]?.message).toMatch(/^.*turns\.jsonl:2: not a turn record \(status: .*\); ignored$/);
  });

  it('keeps a record with keys it does not know (a newer goald wrote it), without those keys', async () => {
    const goalDir = join(dir, 'g');
    await appendTurnRecord(goalDir, makeTurn({ turn: 1 }));
    await appendFile(turnLogPath(goalDir), `${JSON.stringify({ ...makeTurn({ turn: 2 }), fromTheFuture: 1 })}\n`);
    expect(await readTurnLog(goalDir)).toEqual({ records: [makeTurn({ turn: 1 }), makeTurn({ turn: 2 })], skipped: [] });
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
