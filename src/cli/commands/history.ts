// `goald history`, `goald show` and `goald logs`: read-only views that work with or without a daemon.

import { openStore, readTurnRecords, resolveGoaldHome } from '../../../state/index.js';
import type { GoalRecord, Store } from '../../../state/types.js';
import { connectIfRunning } from '../../daemon/auto-start.js';
import { goalFilterFor, isLiveGoal } from '../../daemon/resolve-goal.js';
import { finishedEventOf } from '../../daemon/unstored-endings.js';
import { EXIT, GoaldError } from '../../errors.js';
import { readEventLog } from '../../supervisor/event-log.js';
import { clusterDaemon } from '../cluster-daemon.js';
import { lookupGoal } from '../goal-lookup.js';
import type { CliIO } from '../io.js';
import { renderEditHistory } from '../render-edits.js';
import { renderProgressLine } from '../render-progress.js';
import { renderGoalBox, renderGoalLine, renderTurnRow, TURN_TABLE_HEADER } from '../render-status.js';
import { followGoalEvents } from './follow.js';

async function openReadOnly(env: NodeJS.ProcessEnv): Promise<Store> {
  return openStore(resolveGoaldHome(env));
}

/** `goald history [--json] [--loop <id>]`. */
export async function runHistory(options: { json?: boolean; loop?: string }, io: CliIO): Promise<number> {
  let goals: GoalRecord[] = (await clusterDaemon(io.env))?.goals ?? (await (await openReadOnly(io.env)).read()).goals;
  if (options.loop !== undefined) {
    const loop = options.loop;
    goals = goals.filter((goal) => goal.loopId !== null && goal.loopId.startsWith(loop));
  }
  goals = [...goals].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  if (options.json) {
    io.out(JSON.stringify({ goals }));
    return EXIT.ok;
  }
  if (goals.length === 0) io.out('no goals yet');
  for (const goal of goals) io.out(`${goal.createdAt.slice(0, 16).replace('T', ' ')}  ${renderGoalLine(goal)}`);
  return EXIT.ok;
}

/** `goald show <goal> [--json] [--receipt [--format md|json]]`: the goal and one row per turn (a race: its members). */
export async function runShow(ref: string, options: { json?: boolean; receipt?: boolean; format?: 'md' | 'json' }, io: CliIO): Promise<number> {
  if (ref.startsWith('r')) {
    const { findRace, readRaces } = await import('../../race/race-record.js');
    const race = findRace(await readRaces(resolveGoaldHome(io.env)), ref);
    if (race !== null) {
      const { renderRaceDetail } = await import('../render-race.js');
      if (options.json) io.out(JSON.stringify({ race }));
      else for (const line of renderRaceDetail(race)) io.out(line);
      return EXIT.ok;
    }
  }
  if (options.format !== undefined && options.receipt !== true) {
    throw new GoaldError('usage', '--format applies to --receipt only', `goald show ${ref} --receipt --format ${options.format}`);
  }
  const store = await openReadOnly(io.env);
  const goal = await lookupGoal((await store.read()).goals, ref, io.cwd);
  const turns = await readTurnRecords(store.goalDir(goal.id));
  if (options.receipt === true) {
    const { buildReceipt, renderReceiptMarkdown } = await import('../receipt.js');
    const receipt = buildReceipt(goal, turns);
    io.out((options.format ?? (options.json === true ? 'json' : 'md')) === 'json' ? JSON.stringify(receipt, null, 2) : renderReceiptMarkdown(receipt));
    return EXIT.ok;
  }
  if (options.json) {
    io.out(JSON.stringify({ goal, turns }));
    return EXIT.ok;
  }
  io.out(renderGoalBox(goal));
  io.out(TURN_TABLE_HEADER);
  for (const turn of turns) io.out(renderTurnRow(turn));
  for (const line of renderEditHistory(goal)) io.out(line);
  return EXIT.ok;
}

/** `goald logs [goal] [-f] [--json]`: the goal's progress events; -f follows live ones via the daemon. */
export async function runLogs(ref: string | undefined, options: { follow?: boolean; json?: boolean }, io: CliIO): Promise<number> {
  const client = await connectIfRunning(io.env);
  const store = await openReadOnly(io.env);
  const goals = client ? await client.listGoals(goalFilterFor(ref)) : (await store.read()).goals;
  const goal = await lookupGoal(goals, ref, io.cwd);
  if (client && options.follow && isLiveGoal(goal)) {
    const controller = new AbortController();
    const onSignal = (): void => controller.abort();
    process.once('SIGINT', onSignal);
    try {
      await followGoalEvents(client, goal.id, { json: options.json === true, io, signal: controller.signal });
    } finally {
      process.off('SIGINT', onSignal);
    }
    return EXIT.ok;
  }
  // From the daemon when one runs (a cluster's goals have their events in Redis, not in this home).
  const events = client ? await client.pastEvents(goal.id) : await readEventLog(store.goalDir(goal.id));
  // A goal that ended while its event log could not be written (disk full): its record tells the end.
  if (!isLiveGoal(goal) && !events.some((event) => event.type === 'goal.finished')) events.push(finishedEventOf(goal));
  for (const event of events) {
    if (options.json) io.out(JSON.stringify(event));
    else {
      const line = renderProgressLine(event);
      if (line !== null) io.out(line);
      if (event.type === 'goal.finished') io.out(`finished: ${event.status}${event.reason ? ` (${event.reason})` : ''}`);
    }
  }
  if (options.follow && isLiveGoal(goal) && !client) io.err('goald: the daemon is not running, so there is nothing live to follow');
  return EXIT.ok;
}
