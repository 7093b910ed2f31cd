// Cluster mode's turns on BullMQ: one job per turn, never one per goal. The job id is deterministic,
// `<goal>-e<epoch>-t<turn>` (BullMQ ids may not hold `:`), so a goal is a chain with at most one turn job
// at a time and enqueueing the same turn twice adds nothing. A worker runs a turn, commits it through the
// fence (turn-commit.ts) and only then enqueues the next; a crash between the two leaves a committed turn
// with no next job, which the job of the same turn, run again, or the reconciler puts right.
//
// A worker that loses a job's lock (frozen, partitioned) is told by BullMQ (`lockRenewalFailed`): it
// cancels the job, which aborts the turn's signal, so the turn's processes are killed and nothing is
// committed; the stalled-job check hands the turn to another worker, which starts it again from its base.

import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from '../zod.js';

import { CANCEL_CHANNEL, CLUSTER_PREFIX, commitTurn, readClusterGoal, type ClusterGoalStatus, type CommitOutcome } from './turn-commit.js';

/** How many times a turn that throws is tried before its goal fails (`cluster-error`). */
export const TURN_ATTEMPTS = 3;

// A 429 holds the whole queue back at most this long: a limit that lasts hours is probed once a minute by
// whichever turn runs next, not by every goal at once.
export const MAX_BACK_PRESSURE_MS = 60_000;

// BullMQ honours a manual rate limit only on a worker with a limiter; this one never limits by itself.
const NO_LIMIT = { max: 1_000_000, duration: 1_000 };

// How long BullMQ's close may take once no turn runs, before its connections are cut.
const CLOSE_WAIT_MS = 3_000;

/** The BullMQ queue every turn job goes through. */
export const TURN_QUEUE_NAME = 'turns';

const turnJobSchema = z.object({ goalId: z.string().regex(/^[A-Za-z0-9_-]+$/), epoch: z.number().int().positive(), turn: z.number().int().nonnegative() });

/** One turn of one goal in one epoch: what a turn job carries. */
export type TurnJob = z.infer<typeof turnJobSchema>;

/** The deterministic id of a turn's job. */
export function turnJobId(job: TurnJob): string {
  return `${job.goalId}-e${job.epoch}-t${job.turn}`;
}

/** The queue of turn jobs on `connection` (which BullMQ may block on: give it its own). */
export function createTurnQueue(connection: Redis): Queue {
  return new Queue(TURN_QUEUE_NAME, { connection, prefix: CLUSTER_PREFIX });
}

/** Closes `queue`, waiting at most CLOSE_WAIT_MS: BullMQ's close can wait for good on a connection just re-established. */
export async function closeQueue(queue: Queue): Promise<void> {
  await Promise.race([queue.close().catch(() => undefined), sleep(CLOSE_WAIT_MS)]);
}

/** Enqueues a turn (a no-op when that turn's job exists already), to run from `notBefore` (epoch ms) on. */
export async function enqueueTurn(queue: Queue, job: TurnJob, notBefore: number | null = null): Promise<void> {
  const delay = notBefore === null ? 0 : Math.max(0, notBefore - Date.now());
  await queue.add('turn', turnJobSchema.parse(job), {
    jobId: turnJobId(job),
    removeOnComplete: true,
    removeOnFail: 1_000,
    // A turn that throws (git could not fetch or push, say) is run again from its base, twice; then the goal fails.
    attempts: TURN_ATTEMPTS,
    backoff: { type: 'exponential', delay: 2_000 },
    ...(delay > 0 ? { delay } : {}),
  });
}

/** What a turn hands back to be committed: its record, the goal's state after it, and what comes next. */
export interface TurnOutcome {
  record: unknown;
  state: unknown;
  /** `active`: enqueue the next turn; anything else ends (or pauses) the chain. */
  status: ClusterGoalStatus;
  /** When the next turn is due (a cool-down, a usage limit's reset), epoch ms; absent or null: at once. */
  nextTurnAt?: number | null;
  /** The turn's progress events (goal-events.ts), committed with it. */
  events?: readonly unknown[];
  /** Run once the fence committed this turn (a worker moves the goal's branch to the turn's commit, and tidies up after a goal that ended). */
  promote?: () => Promise<void>;
  /** How many pieces of the owner's guidance (the oldest) the turn's prompt carried: used up if it commits. */
  guidanceUsed?: number;
  /** The turn met a 429 (its evaluator's, or its agent's usage limit): no worker takes a turn for this long. */
  backPressureMs?: number;
}

/** Runs one turn; `signal` aborts when the worker lost the job (the turn must stop and kill what it started). */
export type RunTurn = (job: TurnJob, signal: AbortSignal) => Promise<TurnOutcome>;

export interface TurnWorkerOptions {
  /** The worker's connection (blocking commands: its own). */
  connection: Redis;
  /** A second connection for the commit and the goal reads. */
  redis: Redis;
  /** Where next turns are enqueued. */
  queue: Queue;
  run: RunTurn;
  /** Turns at once on this worker (default 1). */
  concurrency?: number;
  /** How long a job's lock lasts without renewal (BullMQ's default 30 s). */
  lockDuration?: number;
  /** How often stalled jobs (their lock expired) are looked for (BullMQ's default 30 s). */
  stalledInterval?: number;
  /** How often a running turn's goal is read for a cancel that pub/sub did not bring (default 2 s). */
  statusPollMs?: number;
  /** Told when a turn threw on its last attempt (the worker fails its goal). */
  onFinalFailure?: (job: TurnJob, error: unknown) => Promise<void>;
  /** Told what became of each turn this worker ran (for logs and tests). */
  onTurn?: (job: TurnJob, outcome: CommitOutcome | 'aborted' | 'skipped') => void;
}

/** A running turn worker. */
export interface TurnWorker {
  worker: Worker;
  /** Settles once the worker takes jobs and hears cancels. */
  ready(): Promise<void>;
  /** Stops taking jobs; `force` cancels the turns running and hands their jobs back to the queue. */
  close(force?: boolean): Promise<void>;
}

/** Starts a worker that takes turn jobs until closed. */
export function startTurnWorker(options: TurnWorkerOptions): TurnWorker {
  const { redis, queue, run } = options;
  // The turns this worker holds, by job id: what a cancel for their goal reaches.
  const holding = new Map<string, TurnJob>();
  // Set by close(): the turns cancelled then go back to the queue at once, for another worker to run.
  let handingBack = false;
  // The turns being processed, settled once each is committed, aborted or handed back.
  const processing = new Set<Promise<void>>();
  const cancelGoal = (goalId: string, reason: string): void => {
    for (const [jobId, job] of holding) if (job.goalId === goalId) worker.cancelJob(jobId, reason);
  };
  const worker = new Worker(
    TURN_QUEUE_NAME,
    (job: Job, token?: string, signal?: AbortSignal): Promise<void> => {
      const processed = processTurn(job, token, signal).catch(async (error: unknown) => {
        // The last attempt: the goal fails, rather than waiting for a turn no worker can run.
        if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await options.onFinalFailure?.(turnJobSchema.parse(job.data), error);
        throw error;
      });
      const settled = processed.then(
        () => undefined,
        () => undefined,
      );
      processing.add(settled);
      void settled.then(() => processing.delete(settled));
      return processed;
    },
    {
      connection: options.connection,
      prefix: CLUSTER_PREFIX,
      concurrency: options.concurrency ?? 1,
      limiter: NO_LIMIT,
      ...(options.lockDuration === undefined ? {} : { lockDuration: options.lockDuration }),
      ...(options.stalledInterval === undefined ? {} : { stalledInterval: options.stalledInterval }),
    },
  );
  async function processTurn(job: Job, token?: string, signal?: AbortSignal): Promise<void> {
    const turnJob = turnJobSchema.parse(job.data);
    const goal = await readClusterGoal(redis, turnJob.goalId);
    // A job of another epoch or of a goal not running does nothing.
    if (goal === null || goal.epoch !== turnJob.epoch || goal.status !== 'active') {
      options.onTurn?.(turnJob, 'skipped');
      return;
    }
    // A turn committed already (a job run again after its worker died between commit and enqueue) only
    // makes sure the chain goes on: the next turn's job is the one that crash never added.
    if (goal.committedTurn >= turnJob.turn) {
      await enqueueTurn(queue, { ...turnJob, turn: goal.committedTurn + 1 });
      options.onTurn?.(turnJob, 'skipped');
      return;
    }
    if (token === undefined || job.id === undefined) throw new Error('a turn job without a lock token');
    const aborted = signal ?? new AbortController().signal;
    holding.set(job.id, turnJob);
    const checkCancelled = (): void => {
      void readClusterGoal(redis, turnJob.goalId)
        .then((now) => {
          if (now === null || now.status === 'stopped' || (now.cancelTurn ?? -1) >= turnJob.turn) cancelGoal(turnJob.goalId, 'the goal was stopped or paused now');
        })
        .catch(() => undefined); // Redis away for a moment: the lock's renewal tells when it is too long
    };
    // Once now: a cancel broadcast between the read above and `holding` knowing this turn reached no one.
    checkCancelled();
    const poll = setInterval(checkCancelled, options.statusPollMs ?? 2_000);
    let outcome: TurnOutcome;
    try {
      outcome = await run(turnJob, aborted);
    } finally {
      clearInterval(poll);
      holding.delete(job.id);
    }
    if (aborted.aborted) {
      options.onTurn?.(turnJob, 'aborted');
      if (handingBack) {
        // Shut down (a deploy): not lost to the lock's expiry, the turn is someone else's at once, from its base.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      return;
    }
    const { outcome: committed, status } = await commitTurn(redis, {
      lockKey: `${queue.toKey(job.id)}:lock`,
      token,
      goalId: turnJob.goalId,
      epoch: turnJob.epoch,
      turn: turnJob.turn,
      record: outcome.record,
      state: outcome.state,
      status: outcome.status,
      ...(outcome.events === undefined ? {} : { events: outcome.events }),
      ...(outcome.guidanceUsed === undefined ? {} : { guidanceUsed: outcome.guidanceUsed }),
    });
    if (committed === 'committed') await outcome.promote?.();
    // Back-pressure for the fleet: the provider said "too many"; every worker waits before its next turn.
    if (committed === 'committed' && outcome.backPressureMs !== undefined && outcome.backPressureMs > 0) {
      await worker.rateLimit(Math.min(outcome.backPressureMs, MAX_BACK_PRESSURE_MS));
    }
    options.onTurn?.(turnJob, committed);
    if (committed === 'committed' && status === 'active') await enqueueTurn(queue, { ...turnJob, turn: turnJob.turn + 1 }, outcome.nextTurnAt ?? null);
  }
  // The lock could not be renewed (this process froze, or lost Redis, for too long): the job is no longer
  // ours. Cancelling it aborts the turn's signal; the commit would be refused anyway.
  worker.on('lockRenewalFailed', (jobIds: string[]) => {
    for (const jobId of jobIds) worker.cancelJob(jobId, 'lost the turn job lock');
  });
  // A pause now or a stop, broadcast by whichever machine took it (goal-control.ts).
  const subscriber = redis.duplicate();
  subscriber.on('error', () => undefined); // an outage: the worker's own connections tell it, and reconnect
  subscriber.on('message', (_channel: string, goalId: string) => cancelGoal(goalId, 'the goal was stopped or paused now'));
  const subscribed = subscriber.subscribe(CANCEL_CHANNEL).catch(() => undefined); // the status poll covers a worker not subscribed
  return {
    worker,
    ready: async () => {
      await Promise.all([worker.waitUntilReady(), subscribed]);
    },
    close: async (force = false) => {
      // Closing first: the worker takes no more jobs, so a turn handed back goes to another worker, not
      // straight back to this one.
      const closed = worker.close().then(() => true, () => true);
      if (force) {
        handingBack = true;
        worker.cancelAllJobs('the worker is shutting down');
      }
      // The turns end (committed, or handed back); then BullMQ's own close, which can wait forever on a
      // connection that was just re-established, is given a bound.
      await Promise.all(processing);
      // (disconnect() itself can wait for the same connection: not awaited.)
      if (!(await Promise.race([closed, sleep(CLOSE_WAIT_MS).then(() => false)]))) void worker.disconnect().catch(() => undefined);
      subscriber.disconnect();
    },
  };
}
