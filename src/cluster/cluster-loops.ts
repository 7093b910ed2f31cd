// Loops on a cluster (`goald loop` with GOALD_REDIS_URL). Each loop is a BullMQ job scheduler
// (`upsertJobScheduler`: `every` for a duration, `pattern` for cron, in UTC as on one machine), so its ticks
// are stored in Redis and fire once each, whichever daemons run. A tick starts a fresh goal on the cluster;
// while a goal is live in the loop's workspace, the run waits for it (one waiting run per loop, started
// within seconds of that goal's end; a slot that falls due meanwhile counts as skipped), as on one machine.
//
// A loop runs from the workspace it was created in, which is a path on the control plane that created it:
// that daemon owns the loop, and its ticks go to a queue of its own (`loops-<owner>`). While it is down, one
// tick waits in Redis and runs when it is back (catch-up `once`), or is skipped (`skip`). Listing, stopping
// and running a loop now work from any daemon of the cluster.
//
// A loop's definition is written once; its counters are hash fields changed by HINCRBY/HSET, so a stop
// from another daemon and a tick on the owner never overwrite each other.
//
// Loops declared in a workspace's goal.config.json (`loops`) become cluster loops when the daemon reads the
// file (`goald loop sync`, a goal started there, the file edited while watched), with the ids, runs and
// settings layer they have on one machine: each run reads the file as it is then. The daemon that read the
// file owns them. Turns run on the goal's branch, never in the workspace, so no agent edits this file.
// Over 400 lines because each loop command (create, sync, list, stop, run) and the tick are written once
// here, beside the schedulers they drive.

import { createHash } from 'node:crypto';
import { hostname } from 'node:os';

import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from '../zod.js';

import { newLoopId, toJson } from '../../state/index.js';
import { jsonSchema } from '../../state/json.js';
import { loopRecordSchema } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { parseStartGoalRequest } from '../daemon/request-schemas.js';
import { newLoopRecord } from '../daemon/loop-record.js';
import { isLiveGoal, resolveLoopRef } from '../daemon/resolve-goal.js';
import { SerialQueue } from '../daemon/serial-queue.js';
import { parseSchedule } from '../daemon/schedule.js';
import { declaredLoopRun, declaredLoopStopError, declaredLoopsOf, type LoopRunRequest } from '../daemon/loop-host.js';
import type { CreateLoopRequest, StartGoalRequest } from '../daemon/types.js';
import type { ConfigFile } from '../config/schema.js';
import { GoaldError } from '../errors.js';
import { CLUSTER_PREFIX } from './turn-commit.js';
import { closeQueue } from './turn-queue.js';

const LOOPS_KEY = `${CLUSTER_PREFIX}:loops`;
const loopKey = (loopId: string): string => `${CLUSTER_PREFIX}:loop:${loopId}`;

// A tick this much past its slot found its owner down: catch-up `skip` lets it go.
const LATE_TICK_MS = 60_000;
// How often this daemon looks for its waiting runs whose workspace is free again.
const RELEASE_EVERY_MS = 5_000;
// How long `loop run` of another daemon's loop waits for that daemon to take the run.
const REMOTE_RUN_WAIT_MS = 15_000;

type RunOutcome = 'started' | 'waiting' | 'skipped';

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
  waiting: z.enum(['0', '1']).default('0'),
  lastRunAt: z.string().optional(),
  lastGoalId: z.string().optional(),
  configError: z.string().optional(),
});
type StoredLoop = z.infer<typeof storedLoopSchema>;

// The loop's record as created: a CLI loop's start request is the one its options hold (`{kind: 'cli',
// request}`); a declared loop's options name its place in the file (`{kind: 'config', index}`).
const definitionSchema = z.looseObject({
  ...loopRecordSchema.shape,
  options: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('cli'), request: jsonSchema }),
    z.object({ kind: z.literal('config'), index: z.number().int().nonnegative() }),
  ]),
});

/** A loop as the cluster holds it: its record (counters filled in), who owns it, and a CLI loop's start request. */
interface ClusterLoop {
  loop: LoopRecord;
  owner: string;
  /** null for a declared loop: each run reads its workspace's file. */
  request: StartGoalRequest | null;
  /** A declared loop's place in its file's `loops`; null for a CLI loop. */
  declaredIndex: number | null;
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
  /** Starts one run of `loop` on the cluster (a declared loop's with its own settings layer). */
  startRun(loop: LoopRecord, run: LoopRunRequest): Promise<GoalRecord>;
  /** The cluster's goals, to see whether one is live in a loop's workspace. */
  listGoals(): Promise<GoalRecord[]>;
  log(line: string): void;
}

export class ClusterLoops {
  private readonly queues = new Map<string, Queue>();
  private worker: Worker | null = null;
  private releasing: NodeJS.Timeout | null = null;
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
    this.releasing = setInterval(() => void this.releaseWaiting().catch(() => undefined), RELEASE_EVERY_MS);
    this.releasing.unref();
  }

  // A run that waits for a live goal in its workspace starts once that goal has ended (as on one machine).
  private async releaseWaiting(): Promise<void> {
    for (const { loop, owner } of await this.readAll()) {
      if (owner !== this.options.owner || !loop.waiting || loop.stopped) continue;
      await this.runs.run(() => this.runOnce(loop.id, { late: false, release: true }));
    }
  }

  async close(): Promise<void> {
    if (this.releasing !== null) clearInterval(this.releasing);
    if (this.worker !== null) await Promise.race([this.worker.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 3_000))]);
    await Promise.all([...this.queues.values()].map((queue) => closeQueue(queue)));
  }

  async list(): Promise<LoopRecord[]> {
    const loops = await this.readAll();
    const goals = await this.options.listGoals();
    return Promise.all(
      loops.map(async ({ loop, owner }) => {
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
    parseSchedule(request.every); // a bad schedule is refused before anything is stored
    const { every, catchUp, ...start } = request;
    const { workspace } = await this.options.validateStart(start);
    const createdAt = Date.now();
    const loop = newLoopRecord({
      id: newLoopId(),
      workspace,
      every,
      condition: start.condition ?? null,
      options: toJson({ kind: 'cli', request: start }),
      source: 'cli',
      createdAt: new Date(createdAt).toISOString(),
      catchUp: catchUp ?? 'once',
      name: null,
    });
    const nextRunAt = await this.store(loop, createdAt);
    this.options.log(`loop ${loop.id} every ${every} in ${workspace} (on the cluster)`);
    return { ...loop, nextRunAt };
  }

  // Writes a loop's definition (a new one, or a declaration that changed) and arms its scheduler on this
  // daemon; resolves with its next run. A loop another daemon owned moves here, and its scheduler with it.
  private async store(loop: LoopRecord, createdAt: number, previousOwner?: string): Promise<string | null> {
    const schedule = parseSchedule(loop.every);
    const { redis, owner } = this.options;
    await redis
      .multi()
      .hset(loopKey(loop.id), { definition: JSON.stringify(loop), owner, stopped: '0', waiting: '0', configError: '' })
      .zadd(LOOPS_KEY, 'NX', createdAt, loop.id)
      .exec();
    if (previousOwner !== undefined && previousOwner !== owner) await this.queueOf(previousOwner).removeJobScheduler(loop.id);
    // A duration's first run is one period after creation, as on one machine; cron runs at its next slot.
    const repeat = schedule.kind === 'interval' ? { every: schedule.everyMs, startDate: createdAt + schedule.everyMs } : { pattern: schedule.expression, tz: 'UTC' };
    // Ticks done leave Redis (BullMQ keeps finished jobs unless told): a loop never grows its memory.
    const tickOptions = { removeOnComplete: true, removeOnFail: 100 };
    const scheduled = await this.queueOf(owner).upsertJobScheduler(loop.id, repeat, { name: 'tick', data: { loopId: loop.id }, opts: tickOptions });
    return scheduled === undefined ? null : new Date(scheduled.timestamp + (scheduled.opts.delay ?? 0)).toISOString();
  }

  /**
   * Puts `workspace`'s declared loops (its goal.config.json as `config`) on the cluster: new declarations
   * start, changed ones are stored again, and those the file no longer declares stop (kept for history).
   */
  async sync(workspace: string, config: ConfigFile | null): Promise<void> {
    const declared = declaredLoopsOf(workspace, config, this.options.log);
    const ids = new Set(declared.map(({ id }) => id));
    const existing = new Map((await this.readAll()).filter(({ loop }) => loop.source === 'config' && loop.workspace === workspace).map((found) => [found.loop.id, found]));
    for (const [id, { loop, owner }] of existing) {
      if (ids.has(id) || loop.stopped) continue;
      await this.options.redis.hset(loopKey(id), { stopped: '1', waiting: '0' });
      await this.queueOf(owner).removeJobScheduler(id);
      this.options.log(`loop ${id}: no longer declared in ${workspace}; stopped`);
    }
    for (const { loop: declaration, index, id } of declared) {
      const condition = declaration.goal ?? config?.goal ?? null;
      const catchUp = declaration.catchUp ?? 'once';
      const name = declaration.name ?? null;
      const found = existing.get(id);
      const same = found !== undefined && !found.loop.stopped && found.owner === this.options.owner &&
        found.loop.condition === condition && found.loop.catchUp === catchUp && (found.loop.name ?? null) === name && found.declaredIndex === index;
      if (same) continue;
      const createdAt = found === undefined ? Date.now() : Date.parse(found.loop.createdAt);
      const loop = newLoopRecord({
        id,
        workspace,
        every: declaration.every,
        condition,
        options: { kind: 'config', index },
        source: 'config',
        createdAt: new Date(createdAt).toISOString(),
        catchUp,
        name,
      });
      // The counters are hash fields of their own: storing the definition again keeps the loop's history.
      // Its period starts again from now (a past start would fire at once).
      await this.store(loop, Date.now(), found?.owner);
      this.options.log(`loop ${id} every ${loop.every} in ${workspace} (declared in its goal.config.json; on the cluster)`);
    }
  }

  /** The workspaces whose declared loops this daemon runs (it watches their goal.config.json). */
  async declaringWorkspaces(): Promise<string[]> {
    const owned = (await this.readAll()).filter(({ loop, owner }) => owner === this.options.owner && loop.source === 'config' && !loop.stopped);
    return [...new Set(owned.map(({ loop }) => loop.workspace))];
  }

  /** `goald loop stop <loop>`: removes its scheduler and keeps it, stopped, for history. */
  async remove(ref: string): Promise<LoopRecord> {
    const { loop, owner } = await this.find(ref);
    if (loop.source === 'config') throw declaredLoopStopError(loop);
    await this.options.redis.hset(loopKey(loop.id), { stopped: '1', waiting: '0' });
    await this.queueOf(owner).removeJobScheduler(loop.id);
    return { ...loop, stopped: true, waiting: false, nextRunAt: null };
  }

  /** `goald loop run <loop>`: a tick now, off its cadence, on the loop's owner. */
  async fire(ref: string): Promise<{ loop: LoopRecord; outcome: RunOutcome }> {
    const { loop, owner } = await this.find(ref);
    if (loop.stopped) throw new GoaldError('conflict', `loop ${loop.id} is stopped`, 'create a new one with goald loop');
    const outcome = owner === this.options.owner ? await this.runs.run(() => this.runOnce(loop.id, { late: false })) : await this.fireOn(owner, loop.id);
    return { loop: (await this.find(loop.id)).loop, outcome };
  }

  // `loop run` of another daemon's loop: that daemon runs it (from its workspace); its answer is awaited.
  private async fireOn(owner: string, loopId: string): Promise<RunOutcome> {
    // BullMQ leaves a connection it was given open when it closes (it counts it as shared): this one is
    // ours to end, or the daemon's process outlives its stop.
    const connection = this.options.connection.duplicate();
    const events = new QueueEvents(loopQueueName(owner), { connection, prefix: CLUSTER_PREFIX });
    events.on('error', () => undefined);
    try {
      await events.waitUntilReady();
      const job = await this.queueOf(owner).add('run-now', { loopId }, { removeOnComplete: 100, removeOnFail: 100 });
      const outcome: unknown = await job.waitUntilFinished(events, REMOTE_RUN_WAIT_MS).catch(() => null);
      const parsed = z.enum(['started', 'waiting', 'skipped']).safeParse(outcome);
      if (parsed.success) return parsed.data;
      throw new GoaldError(
        'conflict',
        `loop ${loopId} runs from the daemon that created it (${owner}), which did not take the run within ${REMOTE_RUN_WAIT_MS / 1000} s`,
        'the run is queued for that daemon and starts when it runs; or run goald loop run from that machine',
      );
    } finally {
      await events.close().catch(() => undefined);
      connection.disconnect();
    }
  }

  private async find(ref: string): Promise<ClusterLoop> {
    const loop = resolveLoopRef(await this.list(), ref);
    const found = await this.read(loop.id);
    if (found === null) throw new GoaldError('not-found', `no loop ${ref}`, 'list loops with: goald loop list');
    return { ...found, loop: { ...found.loop, nextRunAt: loop.nextRunAt, lastOutcome: loop.lastOutcome } };
  }

  // Every loop the cluster holds, in the order they were made.
  private async readAll(): Promise<ClusterLoop[]> {
    const loops = await Promise.all((await this.options.redis.zrange(LOOPS_KEY, 0, -1)).map((id) => this.read(id)));
    return loops.filter((found): found is ClusterLoop => found !== null);
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

  // A tick, or another daemon's `loop run`: resolves with the run's outcome (what `loop run` there awaits).
  private async tick(job: Job): Promise<RunOutcome> {
    const { loopId } = tickSchema.parse(job.data);
    const scheduledAt = job.timestamp + (job.opts.delay ?? 0);
    return this.runs.run(() => this.runOnce(loopId, { late: job.name === 'tick' && Date.now() - scheduledAt > LATE_TICK_MS }));
  }

  // One run: a fresh goal, unless the loop is stopped or the tick came too late; while a goal is live in its
  // workspace, the run waits (one waiting run per loop; a slot that falls due meanwhile counts as skipped).
  private async runOnce(loopId: string, tick: { late: boolean; release?: boolean }): Promise<RunOutcome> {
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
    if (busy !== undefined) {
      if (tick.release === true) return 'waiting';
      if (loop.waiting) return skip(`a run already waits for goal ${busy.id} in ${loop.workspace}`);
      await redis.hset(loopKey(loopId), 'waiting', '1');
      log(`loop ${loopId}: its run waits for goal ${busy.id} in ${loop.workspace}`);
      return 'waiting';
    }
    try {
      const run = request === null ? await declaredLoopRun(loop) : { request };
      const goal = await this.options.startRun(loop, run);
      await redis
        .multi()
        .hincrby(loopKey(loopId), 'runs', 1)
        .hset(loopKey(loopId), { lastRunAt: goal.createdAt, lastGoalId: goal.id, configError: '', waiting: '0' })
        .exec();
      return 'started';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await redis.hset(loopKey(loopId), { configError: message, waiting: '0' });
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
  const loop = definition.data;
  let request: StartGoalRequest | null = null;
  if (loop.options.kind === 'cli') {
    try {
      request = parseStartGoalRequest(loop.options.request);
    } catch {
      return null;
    }
  }
  return {
    owner: stored.owner,
    request,
    declaredIndex: loop.options.kind === 'config' ? loop.options.index : null,
    loop: {
      ...loop,
      runs: stored.runs,
      skipped: stored.skipped,
      stopped: stored.stopped === '1',
      waiting: stored.waiting === '1',
      lastRunAt: stored.lastRunAt ?? null,
      lastGoalId: stored.lastGoalId ?? null,
      configError: stored.configError === undefined || stored.configError === '' ? null : stored.configError,
    },
  };
}
