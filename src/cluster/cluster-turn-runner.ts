// A cluster worker's turn: one turn job becomes one step of a real goald supervisor. The goal is restored
// from its cluster state (cluster-goal-state.ts) into a goald home of the worker's own, in a fresh
// checkout at the turn's base commit (goal-branch.ts); the supervisor runs the pre-check or one turn there
// (`run({ oneTurn: true })`), with the agent, sandbox, snapshot, checks, evaluator and breakers of any
// goald goal. The snapshot's tree becomes a commit made in the mirror (never by git in the checkout, which
// the agent writes) and pushed to an attempt ref; the turn record and the goal's record go to the fence,
// and the branch moves to the commit only once the fence committed the turn.
//
// Settings, limits and credentials come only from the cluster state, which the control plane wrote: the
// turn's checkout (goal.config.json included) is never read for them, and the agent's environment never
// holds the cluster's Redis URL (secrets/child-env.ts).

import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';

import { openStore } from '../../state/store.js';
import type { TurnRecord } from '../../state/turn-record.js';
import { appendTurnRecord, readTurnRecords, turnLogPath } from '../../state/turn-log.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { Redis } from 'ioredis';
import type { GoalSettings } from '../config/types.js';
import { nextTurnAtOfSnapshot, resumeAtOfSnapshot } from '../../state/machine-snapshot.js';
import { toJson } from '../../state/json.js';
import { createAgent } from '../agents/registry.js';
import { parseStoredSettings } from '../config/settings-schema.js';
import { KeyedSerialQueue } from '../daemon/serial-queue.js';
import { buildSupervisor, createGoalEvaluator } from '../supervisor/launch.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import type { ClusterGoalState } from './cluster-goal-state.js';
import { clusterGoalStateOf } from './cluster-goal-state.js';
import { turnCommitSubject, turnReason } from '../worktree/goal-worktree.js';
import { attemptRef, checkoutTurn, commitTurnTree, deleteAttemptRefs, fetchTurnBase, promoteTurn, pushAttempt, removeTurnCheckout } from './goal-branch.js';
import { hideUrlCredentials } from './cluster-goals.js';
import { guidanceKey, readClusterGoal } from './turn-commit.js';
import type { RunTurn, TurnJob, TurnOutcome } from './turn-queue.js';

export interface ClusterTurnRunnerOptions {
  redis: Redis;
  /** The worker's own directory: its mirrors, the turns' checkouts and its goald home. */
  workDir: string;
  /** The worker's environment (agents and evaluators read their keys from it, as the daemon's do). */
  env: NodeJS.ProcessEnv;
  /** A name for this worker, in attempt refs and commit messages. */
  workerName: string;
  log: (line: string) => void;
}

/** A RunTurn (turn-queue.ts) that runs real goald turns. */
export function createClusterTurnRunner(options: ClusterTurnRunnerOptions): RunTurn {
  const { workDir } = options;
  const home = path.join(workDir, 'home');
  let store: Promise<Store> | null = null;
  // One fetch at a time per mirror (git locks the refs it updates).
  const mirrors = new KeyedSerialQueue<string>();
  return async (job: TurnJob, signal: AbortSignal): Promise<TurnOutcome> => {
    const stored = await readClusterGoal(options.redis, job.goalId);
    if (stored === null) throw new Error(`goal ${job.goalId} is not in the cluster`);
    const state = clusterGoalStateOf(job.goalId, stored);
    const mirror = path.join(workDir, 'mirrors', `${createHash('sha256').update(state.remote).digest('hex').slice(0, 16)}.git`);
    const tree = path.join(workDir, 'trees', job.goalId);
    await mirrors.run(mirror, () => fetchTurnBase(state.remote, mirror, job.goalId, state.base));
    await removeTurnCheckout(tree);
    await checkoutTurn(mirror, tree, state.base);
    store ??= mkdir(home, { recursive: true, mode: 0o700 }).then(() => openStore(home));
    const turnStore = await store;
    try {
      const events: ProgressEvent[] = [];
      // The owner's guidance (`goald say`) for this turn's prompt; used up only if the turn is committed.
      const guidance = await options.redis.lrange(guidanceKey(job.goalId), 0, -1);
      await runOneStep(turnStore, state, tree, { ...options, guidance }, signal, events);
      // Cancelled: the worker commits nothing of it (turn-queue.ts), so there is nothing to conclude.
      if (signal.aborted) return { record: null, state: null, status: 'active' };
      return { ...(await concludeStep(turnStore, state, { job, mirror, guidanceRead: guidance.length }, options)), events };
    } finally {
      await removeTurnCheckout(tree);
      await forgetGoal(turnStore, job.goalId);
    }
  };
}

// A worker keeps nothing of a goal between its turns (Redis and the remote hold it; its next turn may run
// elsewhere): without this, every goal a worker ever ran would stay in its home, and each turn would rewrite
// a state file that only grows. The turn's transcripts go with it; its record in Redis says what it did.
async function forgetGoal(store: Store, goalId: string): Promise<void> {
  await store.update(
    (file) => {
      file.goals = file.goals.filter((goal) => goal.id !== goalId);
    },
    { durable: false }, // a scratch home: a crash loses nothing Redis does not hold
  );
  await rm(store.goalDir(goalId), { recursive: true, force: true });
}

// The goal's record and settings as this worker runs it: in the turn's checkout, owned by this process.
function localGoal(state: ClusterGoalState, tree: string): { goal: GoalRecord; settings: GoalSettings } {
  const parsed = parseStoredSettings(state.goal.settings);
  if (!parsed.ok) throw new Error(`goal ${state.goal.id} has invalid stored settings (${parsed.problem})`);
  const settings = { ...parsed.settings, workspace: tree };
  const goal = { ...state.goal, workspace: tree, settings: toJson(settings), owner: { kind: 'daemon' as const, pid: process.pid }, runningAgent: null };
  return { goal, settings };
}

// The supervisor's pre-check or one turn, in the worker's home; its record and the goal's are in the store after.
async function runOneStep(
  store: Store,
  state: ClusterGoalState,
  tree: string,
  options: ClusterTurnRunnerOptions & { guidance: readonly string[] },
  signal: AbortSignal,
  events: ProgressEvent[],
): Promise<void> {
  const { goal, settings } = localGoal(state, tree);
  await store.update((file) => {
    file.goals = [...file.goals.filter((other) => other.id !== goal.id), goal];
  });
  // The turn log holds the last committed record only: what a restored supervisor reads (the cluster keeps the history).
  const goalDir = store.goalDir(goal.id);
  await mkdir(goalDir, { recursive: true, mode: 0o700 });
  await rm(turnLogPath(goalDir), { force: true });
  if (state.lastTurn !== null) await appendTurnRecord(goalDir, state.lastTurn);
  const workspace = await resolveWorkspace(tree);
  const supervisor = await buildSupervisor({
    store,
    goal,
    prepared: { settings, workspace, agent: await createAgent(settings.agent, options.env), evaluator: await createGoalEvaluator(settings.evaluator, options.env) },
    // Kept for the fence: a turn's events reach `logs -f` only if the turn is committed.
    observers: [{ onEvent: (event) => events.push(event) }],
    owner: 'daemon',
    // A goal not new: one with a machine, or one `edit --resume` reopened (a fresh machine after its last turn).
    ...(goal.machine === null && state.reopenedAfterTurn === undefined
      ? {}
      : { restored: { machine: goal.machine, lastTurn: state.lastTurn, initialTree: state.initialTree, ...(state.reopenedAfterTurn === undefined ? {} : { reopenedAfterTurn: state.reopenedAfterTurn }) } }),
  });
  for (const text of options.guidance) supervisor.addGuidance(text);
  // Cancelled (pause now, stop, a lost lock): the agent's group is killed and the goal let go, unstored.
  const onAbort = (): void => supervisor.detach();
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort(); // cancelled while the turn was being set up: no listener heard it
  try {
    await supervisor.run({ oneTurn: true });
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

// The step's record and the goal's record after it, the turn's commit pushed as an attempt, for the fence.
async function concludeStep(
  store: Store,
  state: ClusterGoalState,
  step: { job: TurnJob; mirror: string; guidanceRead: number },
  options: ClusterTurnRunnerOptions,
): Promise<TurnOutcome> {
  const { job, mirror } = step;
  const goalDir = store.goalDir(job.goalId);
  const goal = (await store.read()).goals.find((other) => other.id === job.goalId);
  const last = (await readTurnRecords(goalDir)).at(-1) ?? null;
  const record = last !== null && last.turn === job.turn ? last : null;
  if (goal === undefined) throw new Error(`goal ${job.goalId} left no record in the worker's home`);
  // A goal ended or paused before its turn ran (a budget the next turn would exceed) has no record of it: its state is committed alone.
  if (record === null && goal.status === 'active') throw new Error(`goal ${job.goalId}: turn ${job.turn} ended without its record`);
  // The turn's new files are in the goal's snapshot objects.
  const base = record === null ? state.base : await commitTurnTree(mirror, state.base, record.tree, turnCommitSubject(job.turn, turnReason(record)), path.join(goalDir, 'objects'));
  let promote: (() => Promise<void>) | undefined;
  const ended = goal.status === 'achieved' || goal.status === 'failed';
  if (base !== state.base) {
    // One ref per attempt (a turn retried on this worker pushes a commit of its own).
    const ref = attemptRef(job.goalId, job.turn, `${options.workerName}-${randomBytes(4).toString('hex')}`);
    await pushAttempt(mirror, state.remote, ref, base);
    // The turn is committed whatever becomes of this push: Redis says which commit the goal is at, and the
    // next turn starts there; the branch is how people see it.
    promote = async () => {
      try {
        const moved = await promoteTurn(mirror, state.remote, job.goalId, base, state.base);
        if (moved === 'refused') options.log(`goal ${job.goalId}: turn ${job.turn} committed, but goald/${job.goalId} had moved on and was left as it is`);
      } catch (error) {
        options.log(`goal ${job.goalId}: turn ${job.turn} committed, but goald/${job.goalId} could not be moved to it: ${hideUrlCredentials(error instanceof Error ? error.message : String(error))}`);
      }
    };
  }
  // The goal ended: its branch is what stays; the attempt refs its turns left go.
  const afterCommit = !ended
    ? promote
    : async (): Promise<void> => {
        await promote?.();
        try {
          await deleteAttemptRefs(mirror, state.remote, job.goalId);
        } catch (error) {
          options.log(`goal ${job.goalId}: its attempt refs could not be deleted from the remote: ${hideUrlCredentials(error instanceof Error ? error.message : String(error))}`);
        }
      };
  const next: ClusterGoalState = {
    goal: { ...goal, workspace: state.goal.workspace, settings: state.goal.settings, owner: null, runningAgent: null },
    lastTurn: record ?? state.lastTurn,
    initialTree: state.initialTree ?? (job.turn === 0 ? (record?.tree ?? null) : null),
    remote: state.remote,
    base,
    ...(state.startCommit === undefined ? {} : { startCommit: state.startCommit }),
  };
  // A usage limit's pause resumes by itself at its reset: the next turn waits in the queue until then.
  const resumeAt = goal.status === 'paused' ? resumeAtOfSnapshot(goal.machine) : null;
  const backPressureMs = backPressureOf(record, resumeAt, Date.now());
  return {
    record,
    state: next,
    status: resumeAt === null ? goal.status : 'active',
    nextTurnAt: resumeAt ?? nextTurnAtOfSnapshot(goal.machine),
    ...(afterCommit ? { promote: afterCommit } : {}),
    ...(backPressureMs > 0 ? { backPressureMs } : {}),
    // The prompt took every piece read (keeping the newest few, as on one machine): all are used up.
    ...(record !== null && (record.guidance?.length ?? 0) > 0 ? { guidanceUsed: step.guidanceRead } : {}),
  };
}

// With no wait given, an evaluator's 429 holds the queue back this long.
const DEFAULT_RATE_LIMIT_WAIT_MS = 30_000;

/**
 * How long the fleet should hold back after this turn: the wait its evaluator's 429 asked for (after the
 * evaluator's own retries), or until its agent's usage limit resets; 0 when the turn met no limit.
 */
export function backPressureOf(record: TurnRecord | null, usageLimitResetAt: number | null, now: number): number {
  const evaluation = record?.evaluation;
  const fromEvaluator = evaluation?.kind === 'error' && evaluation.rateLimited !== undefined ? (evaluation.rateLimited.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS) : 0;
  const fromAgent = usageLimitResetAt === null ? 0 : usageLimitResetAt - now;
  return Math.max(0, fromEvaluator, fromAgent);
}
