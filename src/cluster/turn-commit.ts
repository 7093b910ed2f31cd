// Cluster mode's fence: a turn's result is committed in one Lua script that first checks the worker still
// holds the turn job's BullMQ lock (its token is the lock key's value), that the goal is in the job's epoch
// and not stopped, and that the turn is not committed already. A worker that froze past the lock's
// duration, or lost Redis for as long, finds its token gone (the job went back to the queue and another
// worker may be running the same turn) and commits nothing; the turn is applied exactly once.
//
// Keys: every goal key and the queue's share the `{goald}` hash tag, so on a Redis Cluster they sit in one
// slot and one script may touch them all.

import type { Redis } from 'ioredis';
import { z } from '../zod.js';

/** The prefix of every cluster key (BullMQ's queue prefix too). */
export const CLUSTER_PREFIX = '{goald}';

/** The hash of a goal's cluster state: epoch, status, committedTurn, state, cancelTurn. */
export function goalKey(goalId: string): string {
  return `${CLUSTER_PREFIX}:goal:${goalId}`;
}

/** The list of a goal's committed turn records (JSON), in turn order. */
function turnsKey(goalId: string): string {
  return `${CLUSTER_PREFIX}:goal:${goalId}:turns`;
}

/** The owner's guidance (`goald say`) no committed turn's prompt has carried yet, oldest first. */
export function guidanceKey(goalId: string): string {
  return `${CLUSTER_PREFIX}:goal:${goalId}:guidance`;
}

/** The stream of a goal's progress events (`logs -f`): each committed turn's, added with it. */
export function eventsKey(goalId: string): string {
  return `${CLUSTER_PREFIX}:goal:${goalId}:events`;
}

/** The set of every goal on the cluster, scored by when it was registered (epoch ms). */
export const GOALS_KEY = `${CLUSTER_PREFIX}:goals`;

// A goal's event stream keeps about this many events (a long goal's oldest are trimmed).
const EVENTS_KEPT = '10000';

const CLUSTER_GOAL_STATUSES = ['active', 'paused', 'stopped', 'achieved', 'failed'] as const;

/** The channel a turn's cancel is broadcast on (the message is the goal id): goal-control.ts. */
export const CANCEL_CHANNEL = `${CLUSTER_PREFIX}:cancel`;

/** The goal's statuses as the cluster keeps them; `stopped` refuses every later commit. */
export type ClusterGoalStatus = (typeof CLUSTER_GOAL_STATUSES)[number];

// A goal's hash as Redis returns it (every field a string), checked before use.
const clusterGoalSchema = z.object({
  epoch: z.coerce.number().int().positive(),
  status: z.enum(CLUSTER_GOAL_STATUSES),
  committedTurn: z.coerce.number().int(),
  state: z.string(),
  /** The turn a pause now or a stop cancelled, which its workers must give up (goal-control.ts). */
  cancelTurn: z.coerce.number().int().optional(),
  /** Why the cluster failed the goal itself (a turn that failed on every attempt): failClusterGoal. */
  failure: z.string().optional(),
  /** The owner's `goald edit`: the goal's settings and edit history, over those of `state` (cluster-goal-state.ts). */
  edit: z.string().optional(),
  /** The owner's rollbacks of the finished goal's branch (JSON), over those of `state`. */
  rollbacks: z.string().optional(),
});

/** A goal's state in the cluster. */
export type ClusterGoal = z.infer<typeof clusterGoalSchema>;

// The script's reply: the outcome, and the goal's status after it.
const commitReplySchema = z.tuple([z.enum(['committed', 'lost-lock', 'stale-epoch', 'stopped', 'duplicate']), z.string()]);

/** What became of a commit: only `committed` wrote anything. */
export type CommitOutcome = z.infer<typeof commitReplySchema>[0];

// KEYS: the job's lock, the goal's hash, its turn list, its event stream, its guidance list. ARGV: token,
// epoch, turn, record JSON (empty: no record, the goal ended before the turn ran), state JSON, the status
// the goal has after the turn, how many events the stream keeps, how many pieces of guidance the turn's
// prompt carried (taken off the list's head: guidance is used up only by a turn that is committed), then
// the turn's events (JSON each). A goal paused during the turn stays paused (the turn is kept: a pause waits
// for the turn's end). Returns the outcome and the goal's status after it.
const COMMIT_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'lost-lock', ''} end
local goal = redis.call('HMGET', KEYS[2], 'epoch', 'status', 'committedTurn')
if goal[1] ~= ARGV[2] then return {'stale-epoch', goal[2] or ''} end
if goal[2] == 'stopped' then return {'stopped', 'stopped'} end
if tonumber(goal[3] or '-1') >= tonumber(ARGV[3]) then return {'duplicate', goal[2]} end
local status = ARGV[6]
if goal[2] == 'paused' and status == 'active' then status = 'paused' end
if ARGV[4] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[4]) end
redis.call('HSET', KEYS[2], 'committedTurn', ARGV[3], 'state', ARGV[5], 'status', status)
if tonumber(ARGV[8]) > 0 then redis.call('LTRIM', KEYS[5], tonumber(ARGV[8]), -1) end
for i = 9, #ARGV do redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[7], '*', 'event', ARGV[i]) end
return {'committed', status}
`;

/** Registers a goal in the cluster: epoch 1, active, nothing committed. */
export async function createClusterGoal(redis: Redis, goalId: string, state: string, at = Date.now()): Promise<void> {
  await redis.multi().hset(goalKey(goalId), { epoch: '1', status: 'active', committedTurn: '-1', state }).zadd(GOALS_KEY, at, goalId).exec();
}

/** A goal's cluster state, or null when it is not registered; throws when its hash is not goald's. */
export async function readClusterGoal(redis: Redis, goalId: string): Promise<ClusterGoal | null> {
  const fields = await redis.hgetall(goalKey(goalId));
  if (Object.keys(fields).length === 0) return null;
  const parsed = clusterGoalSchema.safeParse(fields);
  if (!parsed.success) throw new Error(`${goalKey(goalId)} is not a goal's state: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/** Sets a goal's status (pause, resume, stop); a stopped goal's running turn can no longer commit. */
export async function setClusterGoalStatus(redis: Redis, goalId: string, status: ClusterGoalStatus): Promise<void> {
  await redis.hset(goalKey(goalId), 'status', status);
}

// KEYS: the goal's hash. ARGV: the edit (JSON). Sets it on a live goal; returns 1 when it did.
const EDIT_SCRIPT = `
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'active' and status ~= 'paused' then return 0 end
redis.call('HSET', KEYS[1], 'edit', ARGV[1])
return 1
`;

/**
 * Sets the owner's edit of a live goal (its settings and edit history), which its next turn runs with. A
 * field of its own: a turn's commit rewrites `state`, and would otherwise undo an edit made during it.
 */
export async function editClusterGoal(redis: Redis, goalId: string, edit: string): Promise<boolean> {
  return (await redis.eval(EDIT_SCRIPT, 1, goalKey(goalId), edit)) === 1;
}

// KEYS: the goal's hash. ARGV: the reopened state (JSON), the edit (JSON). Reopens a goal that failed;
// returns its last committed turn, or -2 when it had not failed.
const REOPEN_SCRIPT = `
local goal = redis.call('HMGET', KEYS[1], 'status', 'committedTurn')
if goal[1] ~= 'failed' then return -2 end
redis.call('HSET', KEYS[1], 'status', 'active', 'state', ARGV[1], 'edit', ARGV[2])
redis.call('HDEL', KEYS[1], 'failure', 'cancelTurn')
return tonumber(goal[2])
`;

/** Reopens a goal that failed (`goald edit --resume`) with its new state and edit; its last committed turn, or null when it had not failed. */
export async function reopenClusterGoal(redis: Redis, goalId: string, state: string, edit: string): Promise<number | null> {
  const committed = await redis.eval(REOPEN_SCRIPT, 1, goalKey(goalId), state, edit);
  return typeof committed === 'number' && committed !== -2 ? committed : null;
}

// KEYS: the goal's hash. ARGV: the last committed turn seen, the state (JSON), the rollbacks (JSON). Sets
// both on a goal still paused at that turn; returns 1 when it did.
const PAUSED_ROLLBACK_SCRIPT = `
local goal = redis.call('HMGET', KEYS[1], 'status', 'committedTurn')
if goal[1] ~= 'paused' or goal[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'rollbacks', ARGV[3])
return 1
`;

/** A paused goal's rollback: its next turn's base and its rollbacks, if it is still paused after `committedTurn`. */
export async function rollBackPausedClusterGoal(redis: Redis, goalId: string, committedTurn: number, state: string, rollbacks: string): Promise<boolean> {
  return (await redis.eval(PAUSED_ROLLBACK_SCRIPT, 1, goalKey(goalId), String(committedTurn), state, rollbacks)) === 1;
}

/** Records a finished goal's rollbacks (`goald rollback` moved its branch), all of them, as JSON. */
export async function setClusterGoalRollbacks(redis: Redis, goalId: string, rollbacks: string): Promise<void> {
  await redis.hset(goalKey(goalId), 'rollbacks', rollbacks);
}

// KEYS: the goal's hash. ARGV: epoch, message. Fails a live goal of that epoch; returns 1 when it did.
const FAIL_SCRIPT = `
local goal = redis.call('HMGET', KEYS[1], 'epoch', 'status')
if goal[1] ~= ARGV[1] or (goal[2] ~= 'active' and goal[2] ~= 'paused') then return 0 end
redis.call('HSET', KEYS[1], 'status', 'failed', 'failure', ARGV[2])
return 1
`;

/** Fails a live goal of `epoch` for a reason of the cluster's own (a turn that failed on every attempt); true when it did. */
export async function failClusterGoal(redis: Redis, goalId: string, epoch: number, message: string): Promise<boolean> {
  return (await redis.eval(FAIL_SCRIPT, 1, goalKey(goalId), String(epoch), message)) === 1;
}

// KEYS: the goal's hash, its turn list, its event stream, its guidance, the set of goals. ARGV: the goal's id. Deletes a
// goal that is not live (active or paused); returns 1 when it did.
const DELETE_SCRIPT = `
local status = redis.call('HGET', KEYS[1], 'status')
if status == false or status == 'active' or status == 'paused' then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
`;

/** Deletes a finished goal from the cluster (`goald prune`): its state, turns and events; false when it is live or gone. */
export async function deleteClusterGoal(redis: Redis, goalId: string): Promise<boolean> {
  return (await redis.eval(DELETE_SCRIPT, 5, goalKey(goalId), turnsKey(goalId), eventsKey(goalId), guidanceKey(goalId), GOALS_KEY, goalId)) === 1;
}

/** The bytes Redis holds for a goal (its state, turns and events), as MEMORY USAGE counts them. */
export async function clusterGoalBytes(redis: Redis, goalId: string): Promise<number> {
  const sizes = await Promise.all([goalKey(goalId), turnsKey(goalId), eventsKey(goalId)].map((key) => redis.memory('USAGE', key)));
  return sizes.reduce<number>((sum, size) => sum + (typeof size === 'number' ? size : 0), 0);
}

/** A goal's committed turn records, parsed, in order. */
export async function readCommittedTurns(redis: Redis, goalId: string): Promise<unknown[]> {
  return (await redis.lrange(turnsKey(goalId), 0, -1)).map((text) => JSON.parse(text) as unknown);
}

export interface TurnCommit {
  /** The turn job's lock key and the token this worker holds it with. */
  lockKey: string;
  token: string;
  goalId: string;
  epoch: number;
  turn: number;
  /** The turn's record (null: the goal ended before the turn ran, and only its state is committed) and the goal's state after it, JSON-serializable. */
  record: unknown;
  state: unknown;
  /** The goal's status after the turn (`active` to go on). */
  status: ClusterGoalStatus;
  /** The turn's progress events, added to the goal's stream only if the turn is committed. */
  events?: readonly unknown[];
  /** How many pieces of guidance (the oldest) the turn's prompt carried. */
  guidanceUsed?: number;
}

/** Commits a turn if, and only if, the fence holds (see the top of this file); with the goal's status after it. */
export async function commitTurn(redis: Redis, commit: TurnCommit): Promise<{ outcome: CommitOutcome; status: string }> {
  const reply = await redis.eval(
    COMMIT_SCRIPT,
    5,
    commit.lockKey,
    goalKey(commit.goalId),
    turnsKey(commit.goalId),
    eventsKey(commit.goalId),
    guidanceKey(commit.goalId),
    commit.token,
    String(commit.epoch),
    String(commit.turn),
    commit.record === null ? '' : JSON.stringify(commit.record),
    JSON.stringify(commit.state),
    commit.status,
    EVENTS_KEPT,
    String(commit.guidanceUsed ?? 0),
    ...(commit.events ?? []).map((event) => JSON.stringify(event)),
  );
  const parsed = commitReplySchema.safeParse(reply);
  if (!parsed.success) throw new Error(`the commit script answered ${JSON.stringify(reply)}`);
  const [outcome, status] = parsed.data;
  return { outcome, status };
}
