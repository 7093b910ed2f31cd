// Pause, resume, stop and guidance (`say`) for a goal whose turns run on cluster workers. A pause at the
// boundary only marks the goal: its running turn ends and commits, and the fence keeps the goal paused, so
// no next turn is enqueued. A pause now, and a stop, also name the turn in flight as cancelled, take the
// waiting turn job off the queue, and broadcast a cancel that the worker holding the turn turns into
// `cancelJob` (its agent's group is killed). Pub/sub loses messages to a worker that is reconnecting, so
// workers also read the goal's hash every few seconds during a turn (turn-queue.ts).

import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import { MAX_GUIDANCE_CHARS } from '../prompt/guidance-block.js';
import { CANCEL_CHANNEL, goalKey, guidanceKey, readClusterGoal, type ClusterGoal } from './turn-commit.js';
import { enqueueTurn, turnJobId } from './turn-queue.js';

/** Pauses a goal: at the end of its turn, or (`now`) cancelling the turn, which runs again on resume. */
export async function pauseClusterGoal(redis: Redis, queue: Queue, goalId: string, options: { now: boolean }): Promise<ClusterGoal> {
  const goal = await requireGoal(redis, goalId);
  if (!options.now) {
    await redis.hset(goalKey(goalId), 'status', 'paused');
    return { ...goal, status: 'paused' };
  }
  return cancelTurn(redis, queue, goal, goalId, 'paused');
}

/** Stops a goal: its turn in flight is cancelled and nothing of it is committed. */
export async function stopClusterGoal(redis: Redis, queue: Queue, goalId: string): Promise<ClusterGoal> {
  return cancelTurn(redis, queue, await requireGoal(redis, goalId), goalId, 'stopped');
}

/** Resumes a paused goal: its next turn (a cancelled one again, from its base) is enqueued. */
export async function resumeClusterGoal(redis: Redis, queue: Queue, goalId: string): Promise<ClusterGoal> {
  const goal = await requireGoal(redis, goalId);
  if (goal.status !== 'paused') return goal;
  await redis.multi().hset(goalKey(goalId), 'status', 'active').hdel(goalKey(goalId), 'cancelTurn').exec();
  await enqueueTurn(queue, { goalId, epoch: goal.epoch, turn: goal.committedTurn + 1 });
  return { ...goal, status: 'active' };
}

async function cancelTurn(redis: Redis, queue: Queue, goal: ClusterGoal, goalId: string, status: 'paused' | 'stopped'): Promise<ClusterGoal> {
  const inFlight = goal.committedTurn + 1;
  await redis.hset(goalKey(goalId), { status, cancelTurn: String(inFlight) });
  // A turn job still waiting is taken off the queue; one a worker holds is locked and stays, to be cancelled.
  await queue.remove(turnJobId({ goalId, epoch: goal.epoch, turn: inFlight }));
  await redis.publish(CANCEL_CHANNEL, goalId);
  return { ...goal, status };
}

async function requireGoal(redis: Redis, goalId: string): Promise<ClusterGoal> {
  const goal = await readClusterGoal(redis, goalId);
  if (goal === null) throw new Error(`goal ${goalId} is not in the cluster`);
  return goal;
}

/**
 * Adds the owner's guidance (`goald say`) for the goal's next turn, on whichever worker runs it; resolves
 * how many pieces wait. A piece is used up only by a turn that is committed (turn-commit.ts).
 */
export async function guideClusterGoal(redis: Redis, goalId: string, text: string): Promise<number> {
  return redis.rpush(guidanceKey(goalId), text.slice(0, MAX_GUIDANCE_CHARS));
}
