// Loops on a cluster (`goald loop` with GOALD_REDIS_URL). Each loop is a BullMQ job scheduler
// (`upsertJobScheduler`: `every` for a duration, `pattern` for cron, in UTC as on one machine), so its ticks
// are stored in Redis and fire once each, whichever daemons run. A tick starts a fresh goal on the cluster
// unless one is live in the loop's workspace (then the tick is counted as skipped).
//
// A loop runs from the workspace it was created in, which is a path on the control plane that created it:
// that daemon owns the loop, and its ticks go to a queue of its own (`loops-<owner>`). While it is down, one
// tick waits in Redis and runs when it is back (catch-up `once`), or is skipped (`skip`). Listing, stopping
// and running a loop now work from any daemon of the cluster.
//
// A loop's definition is written once; its counters are hash fields changed by HINCRBY/HSET, so a stop
// from another daemon and a tick on the owner never overwrite each other.

import { createHash } from 'node:crypto';
import { hostname } from 'node:os';

import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';

import { newLoopId, toJson } from '../../state/index.js';
import { loopRecordSchema } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { parseStartGoalRequest } from '../daemon/request-schemas.js';
import { isLiveGoal, resolveLoopRef } from '../daemon/resolve-goal.js';
import { SerialQueue } from '../daemon/serial-queue.js';
import { parseSchedule } from '../daemon/schedule.js';
import type { CreateLoopRequest, StartGoalRequest } from '../daemon/types.js';
import { GoaldError } from '../errors.js';
import { CLUSTER_PREFIX } from './turn-commit.js';
import { closeQueue } from './turn-queue.js';

const LOOPS_KEY = `${CLUSTER_PREFIX}:loops`;
const loopKey = (loopId: string): string => `${CLUSTER_PREFIX}:loop:${loopId}`;

// A tick this much past its slot found its owner down: catch-up `skip` lets it go.
const LATE_TICK_MS = 60_000;

/** The control plane a daemon is: its host and home, as a BullMQ queue name may hold it. */
export function loopOwnerOf(home: string): string {
  const host = hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40);
  return `${host}-${createHash('sha256').update(home).digest('hex').slice(0, 8)}`;
}

const loopQueueName = (owner: string): string => `loops-${owner}`;

const storedLoopSchema = z.object({
  definition: z.string(),
  owner: z.string().regex(/^[A-Za-z0-9_-]+$/),
  runs: z.coerce.number().int().nonnegative().default(0),
  skipped: z.coerce.number().int().nonnegative().default(0),
  stopped: z.enum(['0', '1']).default('0'),
  lastRunAt: z.string().optional(),
  lastGoalId: z.string().optional(),
  configError: z.string().optional(),
});
type StoredLoop = z.infer<typeof storedLoopSchema>;

const definitionSchema = z.object({ loop: loopRecordSchema, request: z.unknown() });

/** A loop as the cluster holds it: its record (counters filled in), who owns it, and its start request. */
interface ClusterLoop {
  loop: LoopRecord;
  owner: string;
  request: StartGoalRequest;
}

const tickSchema = z.object({ loopId: z.string().regex(/^[A-Za-z0-9_-]+$/) });

export interface ClusterLoopsOptions {
  redis: Redis;
  /** A connection BullMQ may block on (the owner's tick worker and the queues). */
  connection: Redis;
  /** This daemon, as loopOwnerOf names it. */
  owner: string;
  /** Validates a start request in its workspace (throws GoaldError). */
  validateStart(request: StartGoalRequest): Promise<{ workspace: string }>;
  /** Starts one run of `loop` on the cluster. */
  startRun(loop: LoopRecord, request: StartGoalRequest): Promise<GoalRecord>;
  /** The cluster's goals, to see whether one is live in a loop's workspace. */
  listGoals(): Promise<GoalRecord[]>;
  log(line: string): void;
}

export class ClusterLoops {
  private readonly queues = new Map<string, Queue>();
  private worker: Worker | null = null;
  // A tick and a `loop run` of this daemon's loops, one at a time: two runs never both find the workspace free.
  private readonly runs = new SerialQueue();

  constructor(private readonly options: ClusterLoopsOptions) {}

  /** Starts taking this daemon's ticks. */
  start(): void {
    const worker = new Worker(loopQueueName(this.options.owner), (job: Job) => this.tick(job), {
      connection: this.options.connection,
      prefix: CLUSTER_PREFIX,
      concurrency: 1,
    });
    worker.on('error', () => undefined); // an outage, told once by logReachability
    worker.on('failed', (job, error) => this.options.log(`loop tick ${job?.id ?? '?'} failed: ${error.message}`));
    this.worker = worker;
  }

  async close(): Promise<void> {
    if (this.worker !== null) await Promise.race([this.worker.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 3_000))]);
    await Promise.all([...this.queues.values()].map((queue) => closeQueue(queue)));
  }

  async list(): Promise<LoopRecord[]> {
    const ids = await this.options.redis.zrange(LOOPS_KEY, 0, -1);
    const loops = await Promise.all(ids.map((id) => this.read(id)));
    const goals = await this.options.listGoals();
    return Promise.all(
      loops
        .filter((found): found is ClusterLoop => found !== null)
        .map(async ({ loop, owner }) => {
          const last = goals.find((goal) => goal.id === loop.lastGoalId);
          const scheduler = loop.stopped ? undefined : await this.queueOf(owner).getJobScheduler(loop.id);
          return {
            ...loop,
            lastOutcome: last !== undefined && !isLiveGoal(last) ? last.status : null,
            nextRunAt: scheduler?.next === undefined ? null : new Date(scheduler.next).toISOString(),
          };
        }),
    );
  }

  /** `goald loop <every> [condition]`: validates everything, then stores the loop and its scheduler. */
  async create(request: CreateLoopRequest): Promise<LoopRecord> {
    const schedule = parseSchedule(request.every);
    const { every, catchUp, ...start } = request;
    const { workspace } = await this.options.validateStart(start);
    const createdAt = Date.now();
    const loop: LoopRecord = {
      id: newLoopId(),
      workspace,
      every,
      condition: start.condition ?? null,
      options: toJson({ kind: 'cli', request: start }),
      source: 'cli',
      createdAt: new Date(createdAt).toISOString(),
      nextRunAt: null,
      lastRunAt: null,
      lastGoalId: null,
      lastOutcome: null,
      runs: 0,
      skipped: 0,
      waiting: false,
      catchUp: catchUp ?? 'once',
      stopped: false,
      name: null,
      configError: null,
    };
    const { redis, owner } = this.options;
    await redis
      .multi()
      .hset(loopKey(loop.id), { definition: JSON.stringify({ loop, request: start }), owner })
      .zadd(LOOPS_KEY, createdAt, loop.id)
      .exec();
    // A duration's first run is one period after creation, as on one machine; cron runs at its next slot.
    const repeat = schedule.kind === 'interval' ? { every: schedule.everyMs, startDate: createdAt + schedule.everyMs } : { pattern: schedule.expression, tz: 'UTC' };
    // Ticks done leave Redis (BullMQ keeps finished jobs unless told): a loop never grows its memory.
    const tickOptions = { removeOnComplete: true, removeOnFail: 100 };
    const scheduled = await this.queueOf(owner).upsertJobScheduler(loop.id, repeat, { name: 'tick', data: { loopId: loop.id }, opts: tickOptions });
    this.options.log(`loop ${loop.id} every ${every} in ${workspace} (on the cluster)`);
    const next = scheduled === undefined ? null : new Date(scheduled.timestamp + (scheduled.opts.delay ?? 0)).toISOString();
    return { ...loop, nextRunAt: next };
  }

  /** `goald loop stop <loop>`: removes its scheduler and keeps it, stopped, for history. */
  async remove(ref: string): Promise<LoopRecord> {
    const { loop, owner } = await this.find(ref);
    await this.options.redis.hset(loopKey(loop.id), 'stopped', '1');
    await this.queueOf(owner).removeJobScheduler(loop.id);
    return { ...loop, stopped: true, nextRunAt: null };
  }

  /** `goald loop run <loop>`: a tick now, off its cadence, on the loop's owner. */
  async fire(ref: string): Promise<{ loop: LoopRecord; outcome: 'started' | 'waiting' | 'skipped' }> {
    const { loop, owner } = await this.find(ref);
    if (loop.stopped) throw new GoaldError('conflict', `loop ${loop.id} is stopped`, 'create a new one with goald loop');
    if (owner === this.options.owner) return { loop, outcome: await this.runs.run(() => this.runOnce(loop.id, { late: false })) };
    await this.queueOf(owner).add('run-now', { loopId: loop.id }, { removeOnComplete: true, removeOnFail: 100 });
    return { loop, outcome: 'waiting' };
  }

  private async find(ref: string): Promise<ClusterLoop> {
    const loop = resolveLoopRef(await this.list(), ref);
    const found = await this.read(loop.id);
    if (found === null) throw new GoaldError('not-found', `no loop ${ref}`, 'list loops with: goald loop list');
    return { ...found, loop: { ...found.loop, nextRunAt: loop.nextRunAt, lastOutcome: loop.lastOutcome } };
  }

  private async read(loopId: string): Promise<ClusterLoop | null> {
    const fields = await this.options.redis.hgetall(loopKey(loopId));
    if (Object.keys(fields).length === 0) return null;
    const stored = storedLoopSchema.safeParse(fields);
    if (!stored.success) return null;
    return fromStored(stored.data);
  }

  private queueOf(owner: string): Queue {
    let queue = this.queues.get(owner);
    if (queue === undefined) {
      queue = new Queue(loopQueueName(owner), { connection: this.options.connection, prefix: CLUSTER_PREFIX });
      queue.on('error', () => undefined);
      this.queues.set(owner, queue);
    }
    return queue;
  }

  private async tick(job: Job): Promise<void> {
    const { loopId } = tickSchema.parse(job.data);
    const scheduledAt = job.timestamp + (job.opts.delay ?? 0);
    await this.runs.run(() => this.runOnce(loopId, { late: job.name === 'tick' && Date.now() - scheduledAt > LATE_TICK_MS }));
  }

  // One run: a fresh goal, unless the loop is stopped, a goal is live in its workspace, or the tick came too late.
  private async runOnce(loopId: string, tick: { late: boolean }): Promise<'started' | 'skipped'> {
    const found = await this.read(loopId);
    if (found === null || found.loop.stopped) {
      await this.queueOf(this.options.owner).removeJobScheduler(loopId);
      return 'skipped';
    }
    const { loop, request } = found;
    const { redis, log } = this.options;
    const skip = async (why: string): Promise<'skipped'> => {
      await redis.hincrby(loopKey(loopId), 'skipped', 1);
      log(`loop ${loopId}: run skipped (${why})`);
      return 'skipped';
    };
    if (tick.late && loop.catchUp === 'skip') return skip('its slot passed while this daemon was down, and it catches up with skip');
    const busy = (await this.options.listGoals()).find((goal) => goal.workspace === loop.workspace && isLiveGoal(goal));
    if (busy !== undefined) return skip(`goal ${busy.id} is still ${busy.status} in ${loop.workspace}`);
    try {
      const goal = await this.options.startRun(loop, request);
      await redis
        .multi()
        .hincrby(loopKey(loopId), 'runs', 1)
        .hset(loopKey(loopId), { lastRunAt: goal.createdAt, lastGoalId: goal.id, configError: '' })
        .exec();
      return 'started';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await redis.hset(loopKey(loopId), 'configError', message);
      return skip(message);
    }
  }
}

function fromStored(stored: StoredLoop): ClusterLoop | null {
  let raw: unknown;
  try {
    raw = JSON.parse(stored.definition);
  } catch {
    return null;
  }
  const definition = definitionSchema.safeParse(raw);
  if (!definition.success) return null;
  const { loop } = definition.data;
  let request: StartGoalRequest;
  try {
    request = parseStartGoalRequest(definition.data.request);
  } catch {
    return null;
  }
  return {
    owner: stored.owner,
    request,
    loop: {
      ...loop,
      runs: stored.runs,
      skipped: stored.skipped,
      stopped: stored.stopped === '1',
      lastRunAt: stored.lastRunAt ?? null,
      lastGoalId: stored.lastGoalId ?? null,
      configError: stored.configError === undefined || stored.configError === '' ? null : stored.configError,
    },
  };
}
