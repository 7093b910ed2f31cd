// Where race records are stored, and the one read `goald status` makes of them: the races that may still be
// running, told apart without the race schema. Status is polled by shell prompts and scripts, and loading
// zod to read the records of every race ever run would double its time; so a file is read as plain JSON
// first, and only one that says `"status": "running"` is read again through the schema (race-record.ts).

import path from 'node:path';

import { isErrnoCode } from '../errno.js';

// Synchronous reads through node:fs, not node:fs/promises: a few small local files, and fs/promises as a
// module also loads readline, a fifth of a bare `goald status`.
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');

/** GOALD_HOME/races/, one `<id>.json` per race. */
export function racesDir(home: string): string {
  return path.join(home, 'races');
}

/** The file names of every stored race (none when no race was ever run). */
export function raceFileNames(home: string): string[] {
  try {
    return fs().readdirSync(racesDir(home)).filter((entry) => /^r[a-z0-9]+\.json$/.test(entry));
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return [];
    throw error;
  }
}

/** The text of every stored race file (a file being replaced, or unreadable, is left out). */
export function raceTexts(home: string): string[] {
  const texts: string[] = [];
  for (const name of raceFileNames(home)) {
    try {
      texts.push(fs().readFileSync(path.join(racesDir(home), name), 'utf8'));
    } catch {
      // a file being replaced: not shown
    }
  }
  return texts;
}

/** The texts of the race files that say they are running (not yet validated: read them through the schema). */
export function runningRaceTexts(home: string): string[] {
  return raceTexts(home).filter((text) => {
    try {
      const value: unknown = JSON.parse(text);
      return typeof value === 'object' && value !== null && 'status' in value && value.status === 'running';
    } catch {
      return false; // not a race: not shown
    }
  });
}
