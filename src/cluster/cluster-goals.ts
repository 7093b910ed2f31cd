// Reading a cluster's goals as the CLI and socket API show them: each goal's record as its last committed
// turn left it, with the cluster's own say on its status (a pause or stop taken on any machine), and its
// progress events from the stream each committed turn added to (turn-commit.ts).

import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';

import type { GoalRecord } from '../../state/types.js';
import { progressEventSchema } from '../supervisor/progress-event-schema.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { clusterGoalStateOf } from './cluster-goal-state.js';
import { finishedEventOf } from '../daemon/unstored-endings.js';
import { eventsKey, failClusterGoal, GOALS_KEY, readClusterGoal, type ClusterGoal } from './turn-commit.js';

/** A goal's record as shown: the stored one, with the status the cluster gives it. */
function clusterGoalRecord(goalId: string, stored: ClusterGoal): GoalRecord {
  const { goal } = clusterGoalStateOf(goalId, stored);
  switch (stored.status) {
    case 'stopped':
      return {
        ...goal,
        status: 'failed',
        phase: 'failed',
        reason: 'stopped',
        reasonMessage: goal.reasonMessage ?? 'stopped by the user',
        finishedAt: goal.finishedAt ?? goal.updatedAt,
      };
    case 'paused':
      return goal.status === 'paused' ? goal : { ...goal, status: 'paused', phase: 'paused', pauseReason: 'requested' };
    case 'failed':
      // Failed by the cluster itself, not by a committed turn: a turn failed on every attempt.
      return goal.status === 'failed' || goal.status === 'achieved'
        ? goal
        : { ...goal, status: 'failed', phase: 'failed', reason: 'cluster-error', reasonMessage: stored.failure ?? 'a turn failed on every attempt', finishedAt: goal.updatedAt };
    case 'active':
      // Resumed on the cluster: the next turn's worker resumes the stored machine.
      return goal.status === 'paused' ? { ...goal, status: 'active', phase: 'coolingDown', pauseReason: null } : goal;
    default:
      return goal;
  }
}

/** One goal, or null when the cluster has none of that id. */
export async function readClusterGoalRecord(redis: Redis, goalId: string): Promise<GoalRecord | null> {
  const stored = await readClusterGoal(redis, goalId);
  return stored === null ? null : clusterGoalRecord(goalId, stored);
}

/** Every goal on the cluster, oldest first. */
export async function listClusterGoalRecords(redis: Redis): Promise<GoalRecord[]> {
  const ids = await redis.zrange(GOALS_KEY, 0, -1);
  const records = await Promise.all(ids.map((id) => readClusterGoalRecord(redis, id)));
  return records.filter((record): record is GoalRecord => record !== null);
}

/** A goal's stream entry, parsed: its id and its event (null when the entry is not one). */
function parseEntry([id, fields]: [string, string[]]): { id: string; event: ProgressEvent | null } {
  const at = fields.indexOf('event');
  let json: unknown = null;
  try {
    json = at === -1 ? null : (JSON.parse(fields[at + 1] ?? '') as unknown);
  } catch {
    json = null;
  }
  const parsed = progressEventSchema.safeParse(json);
  return { id, event: parsed.success ? parsed.data : null };
}

/** A goal's events so far, and the stream id to follow from. */
export async function readClusterGoalEvents(redis: Redis, goalId: string): Promise<{ events: ProgressEvent[]; lastId: string }> {
  const entries = (await redis.xrange(eventsKey(goalId), '-', '+')).map(parseEntry);
  return { events: entries.flatMap((entry) => (entry.event === null ? [] : [entry.event])), lastId: entries.at(-1)?.id ?? '0' };
}

/** Adds one event to a goal's stream (the control plane's own: a stop's `goal.finished`). */
export async function addClusterGoalEvent(redis: Redis, goalId: string, event: ProgressEvent): Promise<void> {
  await redis.xadd(eventsKey(goalId), '*', 'event', JSON.stringify(event));
}

/**
 * Calls `listener` with each event added to the goal's stream after `fromId`, until the returned function
 * is called. `connection` blocks in XREAD: give it its own (it is disconnected on stop).
 */
export function followClusterGoalEvents(connection: Redis, goalId: string, fromId: string, listener: (event: ProgressEvent) => void): () => void {
  let stopped = false;
  let lastId = fromId;
  void (async () => {
    while (!stopped) {
      const reply = await connection.xread('BLOCK', 2_000, 'STREAMS', eventsKey(goalId), lastId).catch(async () => {
        await sleep(1_000); // Redis away: try again in a moment, not in a tight loop
        return null;
      });
      if (stopped) break;
      for (const [, entries] of reply ?? []) {
        for (const entry of entries) {
          const { id, event } = parseEntry(entry);
          lastId = id;
          if (event !== null) listener(event);
        }
      }
    }
  })();
  return () => {
    stopped = true;
    connection.disconnect();
  };
}

/** `text` with the credentials of any URL in it hidden (a remote or Redis URL in a git or connection error). */
export function hideUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}

/**
 * Fails a goal whose turn threw on its last attempt (`cluster-error`), and ends its event stream, so
 * nobody waits for a turn no worker can run. Nothing happens to a goal no longer live or of another epoch.
 */
export async function failGoalAfterTurnError(redis: Redis, job: { goalId: string; epoch: number; turn: number }, error: unknown): Promise<void> {
  const reason = hideUrlCredentials(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  if (!(await failClusterGoal(redis, job.goalId, job.epoch, `turn ${job.turn} failed on every attempt: ${reason}`))) return;
  const record = await readClusterGoalRecord(redis, job.goalId);
  if (record !== null) await addClusterGoalEvent(redis, job.goalId, finishedEventOf(record));
}
