// How a race shows in `goald status` and `goald show`: one unit with its members.

import type { RaceRecord } from '../race/race-record.js';
import { clip } from '../cut-text.js';

/** One line: id, status, winner, condition. */
export function renderRaceLine(race: RaceRecord): string {
  const state = race.status === 'running' ? `running (${race.members.filter((member) => member.status === 'running').length}/${race.members.length} members)` : race.status === 'picked' ? `picked ${race.winner ?? ''}` : 'none achieved';
  return `${race.id}  race ${race.pick.padEnd(5)}  ${state.padEnd(26)}  ${clip(race.condition, 50)}`;
}

/** The race and a line per member. */
export function renderRaceDetail(race: RaceRecord): string[] {
  const lines = [`race ${race.id} · pick ${race.pick} · ${race.status} · ${race.repo}`, `goal: ${clip(race.condition, 90)}`];
  race.members.forEach((member, i) => {
    const won = member.goalId !== null && member.goalId === race.winner ? '  ← picked' : '';
    const size = member.diffLines === undefined || member.diffLines === null ? '' : `  ${member.diffLines} lines`;
    lines.push(`  ${String(i + 1).padStart(2)}. ${(member.goalId ?? '(not started)').padEnd(14)} ${member.status.padEnd(8)} ${clip(member.agent, 40)}${size}${won}`);
  });
  if (race.reason !== null) lines.push(`${race.status === 'picked' ? 'why' : 'outcome'}: ${clip(race.reason, 100)}`);
  if (race.status === 'picked' && race.winner !== null) lines.push(`apply it: goald apply ${race.id}`);
  return lines;
}
