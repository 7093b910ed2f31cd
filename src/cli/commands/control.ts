// `goald status | pause | resume | stop`: talk to the daemon; `status` (and `stop` of a foreground goal)
// also work without one.

import { resolveGoaldHome } from '../../../state/paths.js';
import type { GoalRecord } from '../../../state/types.js';
import { runningRaceTexts } from '../../race/race-files.js';
import type { RaceRecord } from '../../race/race-record.js';
import { connectIfRunning, daemonSocketPath } from '../../daemon/auto-start.js';
import { createDaemonClient, type DaemonClient } from '../../daemon/client.js';
import type { ClusterHealth } from '../../daemon/types.js';
import { goalFilterFor, isLiveGoal } from '../../daemon/resolve-goal.js';
import { readStatusSnapshot } from '../../daemon/status-snapshot.js';
import { EXIT, GoaldError, isGoaldError } from '../../errors.js';
import type { CliIO } from '../io.js';
import { renderGoalBox, renderGoalLine } from '../render-status.js';

// The state layer (lowdb, its zod schema, the goal machine) loads only when no daemon answers: with one
// running, `goald status` stays a small client (bench/daemon.bench.ts measures it).
async function readGoalsWithoutDaemon(env: NodeJS.ProcessEnv): Promise<GoalRecord[]> {
  const { openStore } = await import('../../../state/store.js');
  const store = await openStore(resolveGoaldHome(env));
  return (await store.read()).goals;
}

// A daemon that does not answer `goald status` within this long counts as not running (as for the ping
// auto-start uses), so status still shows the stored state.
const STATUS_TIMEOUT_MS = 5_000;

// Goals from the daemon's status snapshot when it is certainly current (status-snapshot.ts), else in one
// round trip (no ping first), or from the store when no daemon answers. Without a goal named, the daemon
// sends the live goals only; with one, the goals whose id starts with it (the snapshot holds no finished
// goal a prefix could also name): either way the reply does not grow with the home's history.
async function listGoalsForStatus(env: NodeJS.ProcessEnv, ref: string | undefined): Promise<{ goals: GoalRecord[]; daemon: boolean; cluster?: ClusterHealth }> {
  const socketPath = daemonSocketPath(env);
  const snapshot = ref === undefined ? readStatusSnapshot(resolveGoaldHome(env), socketPath) : null;
  if (snapshot !== null) return { goals: snapshot, daemon: true };
  try {
    const client = createDaemonClient(socketPath, { timeoutMs: STATUS_TIMEOUT_MS });
    return { ...(await client.listGoalsWithHealth(goalFilterFor(ref))), daemon: true };
  } catch (error) {
    if (!isGoaldError(error) || error.code !== 'daemon-unreachable') throw error;
    return { goals: await readGoalsWithoutDaemon(env), daemon: false };
  }
}

// The goal a command names, or the workspace's one live goal; loaded on use (it may ask git for the
// workspace), so a plain `goald status` does not pay for it.
async function lookupGoal(goals: readonly GoalRecord[], ref: string | undefined, cwd: string): Promise<GoalRecord> {
  const { lookupGoal: lookup } = await import('../goal-lookup.js');
  return lookup(goals, ref, cwd);
}

// Races are rare and their schema is zod: loaded only when a race file says it is running (race-files.ts).
async function readRunningRaces(home: string): Promise<RaceRecord[]> {
  const texts = runningRaceTexts(home);
  if (texts.length === 0) return [];
  const { parseRunningRaces } = await import('../../race/race-record.js');
  return parseRunningRaces(texts);
}

async function requireDaemon(io: CliIO): Promise<DaemonClient> {
  const client = await connectIfRunning(io.env);
  if (!client) {
    throw new GoaldError('daemon-unreachable', 'the goald daemon is not running', 'start goals with `goald start` (it starts the daemon), or `goald daemon`');
  }
  return client;
}

/** `goald status [goal] [--json]`. */
export async function runStatus(ref: string | undefined, options: { json?: boolean }, io: CliIO): Promise<number> {
  // A goal named by a prefix is looked up among all goals; without one, only live goals are shown.
  const { goals, daemon, cluster } = await listGoalsForStatus(io.env, ref);
  let shown: GoalRecord[];
  if (ref !== undefined) shown = [await lookupGoal(goals, ref, io.cwd)];
  else shown = goals.filter(isLiveGoal);
  const races = ref === undefined ? await readRunningRaces(resolveGoaldHome(io.env)) : [];
  if (options.json) {
    io.out(JSON.stringify({ daemon, goals: shown, ...(races.length > 0 ? { races } : {}), ...(cluster === undefined ? {} : { cluster }) }));
    return EXIT.ok;
  }
  if (!daemon) io.err('goald: the daemon is not running; showing stored state');
  if (cluster?.degraded === true) {
    io.err(`goald: the cluster is degraded: its Redis (${cluster.redis}) cannot be reached; showing goals as last read${cluster.lastReadAt === null ? '' : ` at ${cluster.lastReadAt}`}`);
  }
  if (shown.length === 0) {
    io.out('no active goals (goald history lists finished ones)');
  } else if (shown.length === 1 && shown[0]) {
    io.out(renderGoalBox(shown[0]));
  } else {
    for (const goal of shown) io.out(renderGoalLine(goal));
  }
  if (races.length > 0) {
    const { renderRaceWithMembers } = await import('../render-race.js');
    for (const race of races) for (const line of renderRaceWithMembers(race)) io.out(line);
  }
  return EXIT.ok;
}

/** `goald pause [goal] [--now]`. */
export async function runPause(ref: string | undefined, options: { now?: boolean }, io: CliIO): Promise<number> {
  const client = await requireDaemon(io);
  const goal = await lookupGoal(await client.listGoals(goalFilterFor(ref)), ref, io.cwd);
  const updated = await client.pauseGoal(goal.id, options.now === true);
  io.out(
    updated.status === 'paused'
      ? `goal ${updated.id} paused${options.now ? ' (agent suspended)' : ''}`
      : `goal ${updated.id} will pause at the end of the current turn`,
  );
  return EXIT.ok;
}

/** `goald resume [goal]`. */
export async function runResume(ref: string | undefined, io: CliIO): Promise<number> {
  const client = await requireDaemon(io);
  const goal = await lookupGoal(await client.listGoals(goalFilterFor(ref)), ref, io.cwd);
  const updated = await client.resumeGoal(goal.id);
  // An active goal had a pause pending (asked for mid-turn): it is cancelled, the turn goes on.
  io.out(goal.status === 'paused' ? `goal ${updated.id} resumed` : `goal ${updated.id} will not pause: the pause asked for is cancelled`);
  return EXIT.ok;
}

/** `goald stop [goal]`: via the daemon, or SIGTERM to the foreground process running the goal. */
export async function runStop(ref: string | undefined, io: CliIO): Promise<number> {
  const client = await connectIfRunning(io.env);
  const goals = client ? await client.listGoals(goalFilterFor(ref)) : await readGoalsWithoutDaemon(io.env);
  const goal = await lookupGoal(goals, ref, io.cwd);
  if (goal.owner?.kind === 'foreground' && isLiveGoal(goal)) {
    try {
      process.kill(goal.owner.pid, 'SIGTERM'); // the foreground run treats SIGTERM as stop
    } catch {
      throw new GoaldError('conflict', `goal ${goal.id}'s foreground process (pid ${goal.owner.pid}) is gone`, 'goald status shows its last state');
    }
    io.out(`goal ${goal.id} is stopping (sent SIGTERM to its foreground process ${goal.owner.pid})`);
    return EXIT.ok;
  }
  if (!client) throw new GoaldError('daemon-unreachable', 'the goald daemon is not running', 'start it with `goald daemon`; it recovers goals left active');
  const updated = await client.stopGoal(goal.id);
  io.out(`goal ${updated.id} stopped`);
  return EXIT.ok;
}
