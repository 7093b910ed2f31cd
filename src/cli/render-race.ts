// How a race shows in `goald status` and `goald show`: one unit with its members.

import type { RaceRecord } from '../race/race-record.js';
import { clip } from '../cut-text.js';

/** One line: id, status, winner, condition. */
function renderRaceLine(race: RaceRecord): string {
  const state = race.status === 'running' ? `running (${race.members.filter((member) => member.status === 'running').length}/${race.members.length} members)` : race.status === 'picked' ? `picked ${race.winner ?? ''}` : 'none achieved';
  return `${race.id}  race ${race.pick.padEnd(5)}  ${state.padEnd(26)}  ${clip(race.condition, 50)}`;
}

/** The race's line and, under it, a line per member: the race reads as one unit in `goald status`. */
export function renderRaceWithMembers(race: RaceRecord): string[] {
  return [renderRaceLine(race), ...race.members.map((member, i) => `  ${memberLine(race, member, i)}`)];
}

/** The race and a line per member. */
export function renderRaceDetail(race: RaceRecord): string[] {
  const lines = [`race ${race.id} · pick ${race.pick} · ${race.status} · ${race.repo}`, `goal: ${clip(race.condition, 90)}`];
  race.members.forEach((member, i) => lines.push(`  ${memberLine(race, member, i)}`));
  if (race.reason !== null) lines.push(`${race.status === 'picked' ? 'why' : 'outcome'}: ${clip(race.reason, 100)}`);
  if (race.status === 'picked' && race.winner !== null) lines.push(`apply it: goald apply ${race.id}`);
  return lines;
}

// Member i: its goal (or that it has not started), status, agent, diff size and whether it was picked.
function memberLine(race: RaceRecord, member: RaceRecord['members'][number], i: number): string {
  const won = member.goalId !== null && member.goalId === race.winner ? '  ← picked' : '';
  const size = member.diffLines === undefined || member.diffLines === null ? '' : `  ${member.diffLines} lines`;
  return `${String(i + 1).padStart(2)}. ${(member.goalId ?? '(not started)').padEnd(14)} ${member.status.padEnd(8)} ${clip(member.agent, 40)}${size}${won}`;
}
