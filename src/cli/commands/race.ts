// `goald race <condition> --agent <cmd|adapter> --agent ... [--n k] [--pick first|best]`: k worktree goals on
// one condition, run by the daemon (src/race/) or, with --foreground, in this process; one of them picked.
// Validated here first, each distinct member as a start of its own, so bad input exits 2 before anything runs.

import path from 'node:path';
import { z } from '../../zod.js';
import { readStartFlags } from '../../config/start-options.js';
import { ensureDaemon } from '../../daemon/auto-start.js';
import type { DaemonClient } from '../../daemon/client.js';
import { EXIT, GoaldError } from '../../errors.js';
import { memberFlags, raceMembers } from '../../race/race-host.js';
import type { RaceRecord } from '../../race/race-record.js';
import { prepareGoal } from '../../supervisor/launch.js';
import type { CliIO } from '../io.js';
import { renderRaceDetail } from '../render-race.js';
import { forwardedEnv } from './start-daemon.js';

const optionsSchema = z.object({
  dir: z.string().optional(),
  agent: z.array(z.string()).default([]),
  n: z.string().optional(),
  pick: z.enum(['first', 'best']).default('first'),
  json: z.boolean().default(false),
  wait: z.boolean().default(false),
  foreground: z.boolean().default(false),
});

// How often --wait asks the daemon whether the race is decided.
const WAIT_POLL_MS = 100;

function parseCount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new GoaldError('usage', `--n: ${JSON.stringify(text)} is not a whole number`, 'use e.g. --n 3');
  return Number(text);
}

/** `goald race` — resolves with the exit code (with --wait: 0 when a member was picked, 1 when none). */
export async function runRace(condition: string | undefined, rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const options = optionsSchema.parse(rawOptions);
  const n = parseCount(options.n);
  const members = raceMembers(options.agent, n);
  const dir = path.resolve(io.cwd, options.dir ?? '.');
  const flags = readStartFlags(rawOptions);
  for (const agent of new Set(members)) {
    const prepared = await prepareGoal({ condition, dir, flags: memberFlags(flags, agent), env: io.env });
    for (const warning of prepared.warnings) io.err(`goald: warning: ${warning}`);
  }
  const request = {
    ...(condition === undefined ? {} : { condition }),
    dir,
    flags,
    env: forwardedEnv(io.env),
    agents: options.agent,
    ...(n === undefined ? {} : { n }),
    pick: options.pick,
  };
  if (options.foreground) {
    const { runRaceInForeground } = await import('./race-foreground.js');
    return runRaceInForeground(request, options.json, io);
  }
  const client = await ensureDaemon(io.env);
  const race = await client.startRace(request);
  if (options.json) io.out(JSON.stringify({ type: 'race.submitted', id: race.id, repo: race.repo, pick: race.pick, members: race.members }));
  else io.out(`race ${race.id} started in ${race.repo}: ${race.members.length} members, pick ${race.pick}`);
  if (!options.wait) return EXIT.ok;
  const finished = await waitForRace(client, race.id);
  if (options.json) io.out(JSON.stringify({ type: 'race.finished', id: finished.id, status: finished.status, winner: finished.winner, reason: finished.reason, members: finished.members }));
  else for (const line of renderRaceDetail(finished)) io.out(line);
  return finished.status === 'picked' ? EXIT.ok : EXIT.goalFailed;
}

async function waitForRace(client: DaemonClient, id: string): Promise<RaceRecord> {
  for (;;) {
    const race = await client.getRace(id);
    if (race.status !== 'running') return race;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}
