// Crash recovery: adopting the goals a previous daemon left active. Their leftover agent and check groups
// are killed (with the processes that left those groups, found by their GOALD_TURN_TOKEN), the turn each was
// in is recorded as interrupted, and each is relaunched from its stored machine snapshot;
// goals of a foreground process that died are failed.

import { appendTurnRecord, readTurnRecords, turnOfSnapshot } from '../../state/index.js';
import { clearRunningChecks, readRunningChecks } from '../../state/running-checks.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { Clock } from '../clock.js';
import { killMarkedProcesses } from '../process/escaped-processes.js';
import { signalGroup } from '../process/process-group.js';
import { isProcessAlive, isSameProcess } from '../process/process-identity.js';
import { SIGKILL_GRACE_MS, terminateGroup } from '../process/terminate-group.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import type { RestoredGoal } from '../supervisor/supervisor.js';
import { withRecordedTurns } from '../supervisor/goal-summary.js';
import { buildTurnRecord, lostAgentRecord } from '../supervisor/turn-record.js';
import type { TurnRecord } from '../supervisor/types.js';
import { markGoalFailed } from './mark-goal-failed.js';
import { loadGoalRuntime } from './load-goal-runtime.js';
import { isLiveGoal } from './resolve-goal.js';
import { isForeignLive, QUEUED_PHASE } from './workspace-queue.js';

export interface RecoveryOptions {
  store: Store;
  clock: Clock;
  log: (line: string) => void;
  /** Rebuilds a goal's collaborators from its stored settings. */
  materialize(goal: GoalRecord): Promise<PreparedGoal>;
  /** Runs a recovered goal under this daemon. */
  launch(goal: GoalRecord, prepared: PreparedGoal, restored: RestoredGoal | undefined): Promise<void>;
}

/** A live goal recovery left as it was stored, and why (its settings or its machine would not load). */
export interface UnrecoverableGoal {
  goalId: string;
  problem: string;
}

/**
 * Adopts the live goals a previous daemon left (a live foreground process keeps its own): kills their
 * leftover agent groups, fails orphaned foreground goals and relaunches the rest. Queued goals are left
 * for the workspace queue; a goal that cannot be recovered is logged, left as it is, and returned.
 */
export async function recoverGoals(goals: readonly GoalRecord[], options: RecoveryOptions): Promise<UnrecoverableGoal[]> {
  const adopted = goals.filter((goal) => isLiveGoal(goal) && !isForeignLive(goal));
  // Every leftover group at once: each may take the whole SIGTERM grace to die.
  const leftovers = (await Promise.all(adopted.map((goal) => leftoverGroupsOf(goal, options.store)))).flat();
  await Promise.all(
    leftovers.map(async ({ goalId, what, group }) => {
      const killed = await killLeftoverGroup(group.pid, group.startTime);
      if (killed) options.log(`goal ${goalId}: killed the leftover ${what} group ${group.pid}`);
      // The token is random per group: whatever still carries it was started by that agent or check.
      const escaped = group.token === undefined ? 0 : await killMarkedProcesses(group.token);
      if (escaped > 0) options.log(`goal ${goalId}: killed ${escaped} processes that had left the ${what} group ${group.pid}`);
    }),
  );
  for (const goal of adopted) clearRunningChecks(options.store.goalDir(goal.id));
  const unrecoverable: UnrecoverableGoal[] = [];
  for (const goal of adopted) {
    if (goal.owner?.kind === 'foreground') {
      const pid = goal.owner.pid;
      const now = new Date(options.clock.now());
      await markGoalFailed(options.store, goal.id, 'stopped', `its foreground process (pid ${pid}) exited without finishing it`, now);
      continue;
    }
    if (goal.phase === QUEUED_PHASE) continue;
    try {
      await resumeAfterCrash(goal, options);
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      options.log(`goal ${goal.id}: could not be recovered: ${problem}`);
      unrecoverable.push({ goalId: goal.id, problem });
      await noteNotRecovered(goal.id, problem, options);
    }
  }
  return unrecoverable;
}

interface LeftoverGroup {
  goalId: string;
  what: 'agent' | 'check';
  group: { pid: number; startTime: string | null; token?: string };
}

// The groups a goal's previous process recorded: its agent's (in state.json) and its checks'.
async function leftoverGroupsOf(goal: GoalRecord, store: Store): Promise<LeftoverGroup[]> {
  const checks = await readRunningChecks(store.goalDir(goal.id));
  return [
    ...(goal.runningAgent ? [{ goalId: goal.id, what: 'agent' as const, group: goal.runningAgent }] : []),
    ...checks.map((group) => ({ goalId: goal.id, what: 'check' as const, group })),
  ];
}

// A group a previous daemon recorded is ours while its leader is still the recorded process (start time
// checked against pid reuse), or, once the leader is gone, while the group itself still exists: Linux
// never hands out a pid that is still in use as a process group id.
function ownsLeftoverGroup(pid: number, startTime: string | null): boolean {
  if (isSameProcess(pid, startTime)) return true;
  return !isProcessAlive(pid) && signalGroup(pid, 0);
}

// Kills a recorded agent group (also one left SIGSTOPped by `pause --now`); false when it is not ours.
async function killLeftoverGroup(pid: number, startTime: string | null): Promise<boolean> {
  if (!ownsLeftoverGroup(pid, startTime)) return false;
  await terminateGroup(pid, { graceMs: SIGKILL_GRACE_MS });
  return true;
}

// The goal's record says why it does not run (`goald status`, watch, the dashboard); nothing else of it changes.
async function noteNotRecovered(goalId: string, problem: string, options: RecoveryOptions): Promise<void> {
  try {
    await options.store.update((state) => {
      const record = state.goals.find((other) => other.id === goalId);
      if (record) record.notRecovered = problem;
    });
  } catch (error) {
    options.log(`goal ${goalId}: could not note why it was not recovered: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function resumeAfterCrash(goal: GoalRecord, options: RecoveryOptions): Promise<void> {
  const prepared = await options.materialize(goal);
  // Before anything of the goal is changed: one whose machine would not load is left as it was stored.
  if (goal.machine !== null) (await loadGoalRuntime()).restoreGoalMachine(goal.id, goal.machine);
  const goalDir = options.store.goalDir(goal.id);
  const turns = await readTurnRecords(goalDir);
  let lastTurn = turns.at(-1) ?? null;
  // The turn in flight when the daemon died: its agent (also when paused with --now), or its snapshot,
  // checks or evaluator call — unless its record was written just before the crash.
  const midTurn = ['running', 'checking', 'evaluating'].includes(goal.phase);
  const inFlight = goal.runningAgent?.turn ?? (midTurn ? turnOfSnapshot(goal.machine) : null);
  if (inFlight !== null && lastTurn && lastTurn.turn < inFlight) {
    // Recorded as interrupted so history shows it.
    const interrupted = interruptedTurnRecord(goal, lastTurn, inFlight, new Date(options.clock.now()));
    await appendTurnRecord(goalDir, interrupted);
    lastTurn = interrupted;
  }
  const owner = { kind: 'daemon' as const, pid: process.pid };
  // The turn recorded just before the crash, when state.json did not say so yet.
  const summary = withRecordedTurns(goal.summary, turns);
  await options.store.update((state) => {
    const record = state.goals.find((other) => other.id === goal.id);
    if (record) {
      record.owner = owner;
      record.runningAgent = null;
      record.summary = summary;
      delete record.notRecovered; // an earlier daemon could not; this one can
    }
  });
  options.log(`goal ${goal.id}: recovered (${goal.status}, was ${goal.phase})`);
  const restored: RestoredGoal | undefined =
    goal.machine === null ? undefined : { machine: goal.machine, lastTurn, initialTree: turns[0]?.tree ?? null };
  await options.launch({ ...goal, owner, runningAgent: null, summary }, prepared, restored);
}

/**
 * The record of turn `turn`, which the daemon died in: nothing of it is known beyond its number, so it
 * carries the last recorded turn's tree, checks, drift and breakers (the restored supervisor reads them).
 */
function interruptedTurnRecord(goal: GoalRecord, lastTurn: TurnRecord, turn: number, finishedAt: Date): TurnRecord {
  return buildTurnRecord({
    goalId: lastTurn.goalId,
    turn,
    // The goal's last update is when the turn was last heard of; an unreadable time falls back to now.
    startedAt: Date.parse(goal.updatedAt) || finishedAt.getTime(),
    finishedAt: finishedAt.getTime(),
    agent: lostAgentRecord('interrupted: the daemon stopped during the turn'),
    tree: lastTurn.tree,
    checks: lastTurn.checks,
    drift: lastTurn.drift ?? null,
    evaluation: { kind: 'skipped', reason: 'interrupted' },
    tokens: 0,
    breakers: { ...lastTurn.breakers, turns: Math.max(lastTurn.breakers.turns, turn) },
    status: goal.status,
  });
}
