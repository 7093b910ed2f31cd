// The race files `goald status` reads without the race schema: only a file that says it is running is a
// candidate, and every candidate is still checked against the schema before it is shown.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, test } from 'vitest';

import { raceFileNames, racesDir, runningRaceTexts } from '../../src/race/race-files.js';
import { parseRunningRaces, type RaceRecord } from '../../src/race/race-record.js';

const homes: string[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
});

function race(id: string, status: RaceRecord['status'], createdAt: string): RaceRecord {
  return { id, condition: 'c', repo: '/r', pick: 'first', concurrency: 2, members: [], status, winner: null, reason: null, createdAt, finishedAt: null };
}

describe('race files', () => {
  test('no races directory: no names, no candidates', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'grf-'));
    homes.push(home);
    expect(raceFileNames(home)).toEqual([]);
    expect(runningRaceTexts(home)).toEqual([]);
  });

  test('only running races are candidates; a forged "running" file is still refused by the schema', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'grf-'));
    homes.push(home);
    await mkdir(racesDir(home));
    const files: Record<string, string> = {
      'rb.json': JSON.stringify(race('rb', 'running', '2026-12-02T02:00:00Z')),
      'ra.json': JSON.stringify(race('ra', 'running', '2026-12-02T01:00:00Z')),
      'rc.json': JSON.stringify(race('rc', 'picked', '2026-12-02T00:00:00Z')),
      'rd.json': JSON.stringify({ status: 'running', id: 7 }),
      're.json': '{ not json',
      'notes.txt': JSON.stringify(race('notes', 'running', '2026-12-02T00:00:00Z')),
    };
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(racesDir(home), name), text);
    expect(raceFileNames(home).sort()).toEqual(['ra.json', 'rb.json', 'rc.json', 'rd.json', 're.json']);
    const texts = runningRaceTexts(home);
    expect(texts).toHaveLength(3);
    expect(parseRunningRaces(texts).map((entry) => entry.id)).toEqual(['ra', 'rb']);
  });
});
