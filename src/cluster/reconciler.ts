// The reconciler: every active goal must have its next turn's job in the queue. A worker that died between
// committing a turn and enqueueing the next (or a pause now resumed while its cancelled job was still
// finishing) leaves an active goal with none; this re-adds it. Safe to run anywhere, any time: the job id is
// deterministic, and a job that is waiting, delayed or running is left alone.

import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import { CLUSTER_PREFIX, readClusterGoal } from './turn-commit.js';
import { enqueueTurn, turnJobId, type TurnJob } from './turn-queue.js';

const PENDING_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** Re-adds the next turn of every active goal that has no pending turn job; resolves with those goals' ids. */
export async function reconcileTurns(redis: Redis, queue: Queue): Promise<string[]> {
  const readded: string[] = [];
  for await (const keys of redis.scanStream({ match: `${CLUSTER_PREFIX}:goal:*`, count: 500 }) as AsyncIterable<string[]>) {
    for (const key of keys) {
      const goalId = key.slice(`${CLUSTER_PREFIX}:goal:`.length);
      if (goalId.includes(':')) continue; // a goal's turn list, not its hash
      const goal = await readClusterGoal(redis, goalId);
      if (goal === null || goal.status !== 'active') continue;
      if (await requeueTurn(queue, { goalId, epoch: goal.epoch, turn: goal.committedTurn + 1 })) readded.push(goalId);
    }
  }
  return readded;
}

/**
 * Enqueues `turn` unless its job is pending already; a job of that id that finished without committing
 * (cancelled, failed) is removed first, so its id is free again. True when it enqueued.
 */
export async function requeueTurn(queue: Queue, turn: TurnJob): Promise<boolean> {
  const job = await queue.getJob(turnJobId(turn));
  if (job !== undefined) {
    if (PENDING_STATES.has(await job.getState())) return false;
    await job.remove();
  }
  await enqueueTurn(queue, turn);
  return true;
}
