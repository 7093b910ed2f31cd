// A race (issue 12, `goald race`): k worktree goals on one condition, one of which is picked. Its record
// lives in GOALD_HOME/races/<id>.json (written by the daemon, atomically; read by status/show/apply), and
// names its members' goal ids: each member is an ordinary worktree goal in state.json.

import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from '../zod.js';
import { writeFileDurable } from '../../state/durable-file.js';
import { GoaldError } from '../errors.js';
import { raceTexts, racesDir } from './race-files.js';

const memberSchema = z.looseObject({
  /** What the member runs: an adapter name or a shell command (as given to --agent). */
  agent: z.string(),
  /** Its goal, once started (members wait for a slot under race.concurrency). */
  goalId: z.string().nullable(),
  status: z.enum(['waiting', 'running', 'achieved', 'failed', 'skipped']),
  /** Lines added + deleted on its branch (for an achieved member; ties go to the smaller diff). */
  diffLines: z.number().nullable().optional(),
});

export const raceRecordSchema = z.looseObject({
  id: z.string(),
  condition: z.string(),
  /** The user's repository the members branch from. */
  repo: z.string(),
  pick: z.enum(['first', 'best']),
  concurrency: z.number(),
  members: z.array(memberSchema),
  status: z.enum(['running', 'picked', 'none']),
  /** The winning member's goal id. */
  winner: z.string().nullable(),
  /** Why the winner won (or why none did). */
  reason: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  /** A `goald race --foreground`: the process that runs it (a daemon leaves such a race alone). */
  owner: z.object({ kind: z.literal('foreground'), pid: z.number() }).nullable().optional(),
});

export type RaceRecord = z.infer<typeof raceRecordSchema>;

/** A new race id, e.g. `rmhx2k9q1a3f`. */
export function newRaceId(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** Stores a race's record (atomically; the directory is made on first use). */
export async function writeRace(home: string, race: RaceRecord): Promise<void> {
  await mkdir(racesDir(home), { recursive: true, mode: 0o700 });
  await writeFileDurable(path.join(racesDir(home), `${race.id}.json`), `${JSON.stringify(race, null, 2)}\n`, { syncDirectory: false });
}

/** Every stored race, oldest first; a file that does not parse is skipped. */
export function readRaces(home: string): Promise<RaceRecord[]> {
  return Promise.resolve(byCreation(raceTexts(home).map(parseRace).filter((race): race is RaceRecord => race !== null)));
}

/** The races still running among race-files.ts's candidates, validated, oldest first. */
export function parseRunningRaces(texts: readonly string[]): RaceRecord[] {
  return byCreation(texts.map(parseRace).filter((race): race is RaceRecord => race !== null && race.status === 'running'));
}

function parseRace(text: string): RaceRecord | null {
  try {
    const parsed = raceRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function byCreation(races: RaceRecord[]): RaceRecord[] {
  return races.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** The race `ref` names (an id or unique prefix) among those stored in `home`; `not-found` when none. */
export async function storedRace(home: string, ref: string): Promise<RaceRecord> {
  const race = findRace(await readRaces(home), ref);
  if (race === null) throw new GoaldError('not-found', `no race ${ref}`, 'list races with `goald status`');
  return race;
}

/** The race whose id is `ref` or starts with it; null when none does; `ambiguous` for several. */
export function findRace(races: readonly RaceRecord[], ref: string): RaceRecord | null {
  const matches = races.filter((race) => race.id === ref || race.id.startsWith(ref));
  const exact = matches.find((race) => race.id === ref);
  if (exact) return exact;
  if (matches.length > 1) throw new GoaldError('ambiguous', `"${ref}" names ${matches.length} races`, 'give more of the id');
  return matches[0] ?? null;
}
