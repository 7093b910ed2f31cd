// Cluster mode's turn queue and fence against a real redis-server and real worker processes: turns spread
// over workers and applied exactly once, a frozen worker's late commit refused, a stopped goal's turn not
// committed, and what Redis must be for cluster mode.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { connectCluster } from '../../src/cluster/connect-cluster.js';
import { checkRedisRequirements } from '../../src/cluster/redis-requirements.js';
import { EXIT, GoaldError } from '../../src/errors.js';
import { clusterGoalBytes, commitTurn, createClusterGoal, deleteClusterGoal, readClusterGoal, readCommittedTurns, setClusterGoalStatus } from '../../src/cluster/turn-commit.js';
import { pauseClusterGoal, resumeClusterGoal, stopClusterGoal } from '../../src/cluster/goal-control.js';
import { reconcileTurns } from '../../src/cluster/reconciler.js';
import { createTurnQueue, enqueueTurn, startTurnWorker, turnJobId, type TurnJob } from '../../src/cluster/turn-queue.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';

const WORKER_SCRIPT = fileURLToPath(new URL('../fixtures/cluster/turn-worker.mjs', import.meta.url));

interface WorkerLine {
  worker: string;
  pid: number;
  at: number;
  event: 'ready' | 'running' | 'outcome';
  job?: TurnJob;
  outcome?: string;
}

interface WorkerProcess {
  name: string;
  child: ChildProcessWithoutNullStreams;
  lines: WorkerLine[];
}

let server: RedisServer;
let redis: Redis;
let queue: Queue;
const workers: WorkerProcess[] = [];
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
  queue = createTurnQueue(new Redis(server.url, { maxRetriesPerRequest: null }));
});

afterEach(async () => {
  // Dead before the next test: a worker still alive would take its jobs.
  await Promise.all(
    workers.splice(0).map(({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      return exited;
    }),
  );
  for (const close of closers.splice(0)) await close();
  await queue.obliterate({ force: true });
  await redis.flushall();
});

afterAll(async () => {
  await queue.close();
  redis.disconnect();
  await server.stop();
});

async function startWorker(name: string, env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WORKER_SCRIPT], {
    env: { ...process.env, REDIS_URL: server.url, WORKER: name, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const worker: WorkerProcess = { name, child, lines: [] };
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
      worker.lines.push(JSON.parse(buffer.slice(0, at)) as WorkerLine);
      buffer = buffer.slice(at + 1);
    }
  });
  workers.push(worker);
  await expect.poll(() => worker.lines.some((line) => line.event === 'ready'), { timeout: 10_000 }).toBe(true);
  return worker;
}

function outcomes(worker: WorkerProcess): Array<{ turn: number; outcome: string | undefined }> {
  return worker.lines.filter((line) => line.event === 'outcome').map((line) => ({ turn: line.job?.turn ?? -1, outcome: line.outcome }));
}

/** Whether `worker` has started a turn (`turn`, or any). */
function isRunning(worker: WorkerProcess, turn?: number): boolean {
  return worker.lines.some((line) => line.event === 'running' && (turn === undefined || line.job?.turn === turn));
}

/** Two workers on one goal, once one of them runs its first turn: that one, and the other. */
async function twoWorkersOnOneGoal(goalId: string, env: Record<string, string>): Promise<{ holder: WorkerProcess; other: WorkerProcess }> {
  const pair = [await startWorker('w1', env), await startWorker('w2', env)];
  await startGoal(goalId);
  await expect.poll(() => pair.some((worker) => isRunning(worker)), { timeout: 10_000 }).toBe(true);
  const holder = pair.find((worker) => isRunning(worker));
  const other = pair.find((worker) => worker !== holder);
  if (holder === undefined || other === undefined) throw new Error('no worker took the first turn');
  return { holder, other };
}

// A goal's chain starts with turn 0, its pre-check, like any goald goal's.
async function startGoal(goalId: string): Promise<void> {
  await createClusterGoal(redis, goalId, JSON.stringify({}));
  await enqueueTurn(queue, { goalId, epoch: 1, turn: 0 });
}

describe('turns on BullMQ across worker processes', () => {
  it("a turn that met a 429 holds every worker back for the wait it was given; then the turns go on", async () => {
    const env = { TURN_MS: '50', LAST_TURN: '4', BACK_PRESSURE: 'ga:1:2000' };
    const pair = [await startWorker('w1', env), await startWorker('w2', env)];
    for (const goal of ['ga', 'gb', 'gc']) await startGoal(goal);
    for (const goal of ['ga', 'gb', 'gc']) await expect.poll(async () => (await readClusterGoal(redis, goal))?.status, { timeout: 30_000 }).toBe('achieved');
    const lines = pair.flatMap((worker) => worker.lines);
    const pressed = lines.find((line) => line.event === 'outcome' && line.job?.goalId === 'ga' && line.job.turn === 1);
    if (pressed === undefined) throw new Error('turn 1 of ga was not seen');
    const after = lines.filter((line) => line.event === 'running' && line.at > pressed.at).map((line) => line.at - pressed.at);
    // Nothing started in the two seconds asked but a turn taken in the instant before the limit was set (it
    // may print its line late on a loaded machine; without the limit, a turn starts every 50 ms or so), and a
    // little less than two (the limit starts just before the outcome line); then the turns went on.
    expect(after.filter((ms) => ms > 500 && ms < 1_800)).toEqual([]);
    expect(after.filter((ms) => ms >= 1_800).length).toBeGreaterThan(0);
    expect(await queue.getRateLimitTtl(1_000_000)).toBeLessThanOrEqual(0); // the limit has passed (1 000 000: only a 429 fills the limiter)
  });

  it('runs 4 goals of 6 turns each to their end, each turn committed once, the turns spread over the workers', async () => {
    const started = await Promise.all(['w1', 'w2', 'w3'].map((name) => startWorker(name, { TURN_MS: '60', LAST_TURN: '5' })));
    const goals = ['ga', 'gb', 'gc', 'gd'];
    for (const goal of goals) await startGoal(goal);
    for (const goal of goals) {
      await expect.poll(async () => (await readClusterGoal(redis, goal))?.status, { timeout: 20_000 }).toBe('achieved');
      const turns = (await readCommittedTurns(redis, goal)) as Array<{ turn: number }>;
      expect(turns.map((record) => record.turn)).toEqual([0, 1, 2, 3, 4, 5]);
    }
    // A worker prints its outcome after the commit that the status poll above already saw.
    const committedBy = (): number[] => started.map((worker) => outcomes(worker).filter((line) => line.outcome === 'committed').length);
    await expect.poll(() => committedBy().reduce((sum, count) => sum + count, 0), { timeout: 5_000 }).toBe(24);
    expect(committedBy().filter((count) => count > 0).length).toBeGreaterThanOrEqual(2);
  });

  it('a worker killed mid-turn: the turn is retried on another worker after the lock expires, and applied once', async () => {
    const { holder: killed, other } = await twoWorkersOnOneGoal('gkilled', { TURN_MS: '800', LAST_TURN: '1', LOCK_MS: '1000', STALLED_MS: '500' });
    const exited = new Promise((resolve) => killed.child.once('exit', resolve));
    killed.child.kill('SIGKILL');
    await exited;
    await expect.poll(async () => (await readClusterGoal(redis, 'gkilled'))?.status, { timeout: 15_000 }).toBe('achieved');
    const turns = (await readCommittedTurns(redis, 'gkilled')) as Array<{ turn: number; worker: string }>;
    expect(turns).toEqual([
      { turn: 0, worker: other.name },
      { turn: 1, worker: other.name },
    ]);
    expect(outcomes(killed)).toEqual([]);
  });

  it('a worker frozen past its lock commits nothing when it wakes: the turn was retried elsewhere, once', async () => {
    const { holder: frozen, other } = await twoWorkersOnOneGoal('gfrozen', { TURN_MS: '1500', LAST_TURN: '2', LOCK_MS: '1000', STALLED_MS: '500' });
    frozen.child.kill('SIGSTOP');
    // The lock expires (no renewal) and the stalled check hands turn 0 to the other worker. The frozen one
    // wakes while the other still runs the turn: its turn ends first, and must commit nothing.
    await expect.poll(() => isRunning(other, 0), { timeout: 15_000 }).toBe(true);
    frozen.child.kill('SIGCONT');
    await expect.poll(() => outcomes(frozen).find((line) => line.turn === 0)?.outcome, { timeout: 10_000 }).toMatch(/^(lost-lock|aborted)$/);
    await expect.poll(async () => (await readClusterGoal(redis, 'gfrozen'))?.status, { timeout: 15_000 }).toBe('achieved');
    const turns = (await readCommittedTurns(redis, 'gfrozen')) as Array<{ turn: number; worker: string }>;
    expect(turns.map((record) => record.turn)).toEqual([0, 1, 2]);
    expect(turns[0]?.worker).toBe(other.name);
  });
});

describe('control across machines', () => {
  const turnsOf = async (goalId: string): Promise<number[]> => ((await readCommittedTurns(redis, goalId)) as Array<{ turn: number }>).map((record) => record.turn);

  it('stop cancels the turn on the worker holding it: aborted, nothing committed, no job left', async () => {
    const worker = await startWorker('w1', { TURN_MS: '20000', LAST_TURN: '3' });
    await startGoal('gstopped');
    await expect.poll(() => isRunning(worker, 0), { timeout: 10_000 }).toBe(true);
    expect((await stopClusterGoal(redis, queue, 'gstopped')).status).toBe('stopped');
    await expect.poll(() => outcomes(worker), { timeout: 5_000 }).toEqual([{ turn: 0, outcome: 'aborted' }]);
    expect(await turnsOf('gstopped')).toEqual([]);
    expect(await queue.getJobCounts('waiting', 'delayed', 'active')).toEqual({ waiting: 0, delayed: 0, active: 0 });
  });

  it('pause lets the turn end and commit, then starts nothing until resume', async () => {
    const worker = await startWorker('w1', { TURN_MS: '600', LAST_TURN: '2' });
    await startGoal('gpaused');
    await expect.poll(() => isRunning(worker, 0), { timeout: 10_000 }).toBe(true);
    await pauseClusterGoal(redis, queue, 'gpaused', { now: false });
    await expect.poll(() => turnsOf('gpaused'), { timeout: 5_000 }).toEqual([0]);
    expect((await readClusterGoal(redis, 'gpaused'))?.status).toBe('paused');
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 0, delayed: 0 });
    await resumeClusterGoal(redis, queue, 'gpaused');
    await expect.poll(async () => (await readClusterGoal(redis, 'gpaused'))?.status, { timeout: 5_000 }).toBe('achieved');
    expect(await turnsOf('gpaused')).toEqual([0, 1, 2]);
  });

  it('pause now cancels the turn; resume runs that turn again from the start, and it is committed once', async () => {
    const worker = await startWorker('w1', { TURN_MS: '1500', LAST_TURN: '0' });
    await startGoal('gnow');
    await expect.poll(() => isRunning(worker, 0), { timeout: 10_000 }).toBe(true);
    await pauseClusterGoal(redis, queue, 'gnow', { now: true });
    await expect.poll(() => outcomes(worker), { timeout: 5_000 }).toEqual([{ turn: 0, outcome: 'aborted' }]);
    expect(await turnsOf('gnow')).toEqual([]);
    // The cancelled job has ended (removed on completion) before the resume enqueues the turn again.
    await expect.poll(async () => queue.getJob(turnJobId({ goalId: 'gnow', epoch: 1, turn: 0 })), { timeout: 5_000 }).toBeUndefined();
    await resumeClusterGoal(redis, queue, 'gnow');
    await expect.poll(async () => (await readClusterGoal(redis, 'gnow'))?.status, { timeout: 10_000 }).toBe('achieved');
    expect(await turnsOf('gnow')).toEqual([0]);
    await expect.poll(() => outcomes(worker), { timeout: 5_000 }).toEqual([{ turn: 0, outcome: 'aborted' }, { turn: 0, outcome: 'committed' }]);
  });

  it('a stop that pub/sub did not bring is seen by the worker reading the goal during the turn', async () => {
    const worker = await startWorker('w1', { TURN_MS: '20000', LAST_TURN: '3', STATUS_POLL_MS: '200' });
    await startGoal('gquiet');
    await expect.poll(() => isRunning(worker, 0), { timeout: 10_000 }).toBe(true);
    await setClusterGoalStatus(redis, 'gquiet', 'stopped'); // no broadcast
    await expect.poll(() => outcomes(worker), { timeout: 5_000 }).toEqual([{ turn: 0, outcome: 'aborted' }]);
    expect(await turnsOf('gquiet')).toEqual([]);
  });
});

describe('reconcileTurns', () => {
  it('re-adds the next turn of an active goal left with no job, and leaves goals with one alone', async () => {
    await createClusterGoal(redis, 'glost', '{}');
    await redis.hset('{goald}:goal:glost', 'committedTurn', '2'); // turn 2 committed; its worker died before enqueueing turn 3
    await createClusterGoal(redis, 'gfine', '{}');
    await enqueueTurn(queue, { goalId: 'gfine', epoch: 1, turn: 0 });
    await createClusterGoal(redis, 'gdone', '{}');
    await setClusterGoalStatus(redis, 'gdone', 'achieved');
    expect(await reconcileTurns(redis, queue)).toEqual(['glost']);
    expect(await queue.getJob(turnJobId({ goalId: 'glost', epoch: 1, turn: 3 }))).toBeDefined();
    expect(await reconcileTurns(redis, queue)).toEqual([]);
    const worker = await startWorker('w1', { TURN_MS: '10', LAST_TURN: '3' });
    await expect.poll(async () => (await readClusterGoal(redis, 'glost'))?.status, { timeout: 10_000 }).toBe('achieved');
    await expect.poll(() => outcomes(worker), { timeout: 5_000 }).toContainEqual({ turn: 3, outcome: 'committed' });
  });
});

describe('the fence', () => {
  const commit = (overrides: Partial<Parameters<typeof commitTurn>[1]> = {}): ReturnType<typeof commitTurn> =>
    commitTurn(redis, { lockKey: 'lock-of-gfence', token: 'mine', goalId: 'gfence', epoch: 1, turn: 1, record: { turn: 1 }, state: { at: 1 }, status: 'active', ...overrides });

  it('commits only while the lock holds this worker\'s token, in the goal\'s epoch, once per turn', async () => {
    await createClusterGoal(redis, 'gfence', '{}');
    await redis.set('lock-of-gfence', 'theirs');
    expect((await commit()).outcome).toBe('lost-lock');
    await redis.del('lock-of-gfence');
    expect((await commit()).outcome).toBe('lost-lock');
    await redis.set('lock-of-gfence', 'mine');
    expect((await commit({ epoch: 2 })).outcome).toBe('stale-epoch');
    expect(await readCommittedTurns(redis, 'gfence')).toEqual([]);
    expect(await commit()).toEqual({ outcome: 'committed', status: 'active' });
    expect((await commit()).outcome).toBe('duplicate');
    expect(await readCommittedTurns(redis, 'gfence')).toEqual([{ turn: 1 }]);
    expect(await readClusterGoal(redis, 'gfence')).toEqual({ epoch: 1, status: 'active', committedTurn: 1, state: '{"at":1}' });
  });

  it('refuses the commit of a turn whose goal was stopped meanwhile, and enqueues nothing after it', async () => {
    const seen: string[] = [];
    let running = false;
    let release: () => void = () => undefined;
    const turnMayEnd = new Promise<void>((resolve) => {
      release = resolve;
    });
    const worker = startTurnWorker({
      connection: new Redis(server.url, { maxRetriesPerRequest: null }),
      redis,
      queue,
      run: async (job) => {
        running = true;
        await turnMayEnd;
        return { record: { turn: job.turn }, state: {}, status: 'active' };
      },
      statusPollMs: 60_000, // the fence alone, not the worker's own look at the goal
      onTurn: (job, outcome) => seen.push(`${job.turn}:${outcome}`),
    });
    closers.push(() => worker.close(true));
    await worker.ready();
    await startGoal('gstop');
    await expect.poll(() => running, { timeout: 10_000 }).toBe(true);
    await setClusterGoalStatus(redis, 'gstop', 'stopped');
    release();
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(['0:stopped']);
    expect(await readCommittedTurns(redis, 'gstop')).toEqual([]);
    expect(await queue.getJobCounts('waiting', 'delayed', 'active')).toEqual({ waiting: 0, delayed: 0, active: 0 });
  });

  it('runs a job of an already committed turn as a no-op that re-adds the next turn a crash lost', async () => {
    const seen: string[] = [];
    const worker = startTurnWorker({
      connection: new Redis(server.url, { maxRetriesPerRequest: null }),
      redis,
      queue,
      run: async (job) => ({ record: { turn: job.turn }, state: {}, status: job.turn >= 3 ? 'achieved' : 'active' }),
      onTurn: (job, outcome) => seen.push(`${job.turn}:${outcome}`),
    });
    closers.push(() => worker.close(true));
    await worker.ready();
    await createClusterGoal(redis, 'gagain', '{}');
    // Turn 1 committed by a worker that died before enqueueing turn 2; its job runs again.
    await redis.hset('{goald}:goal:gagain', 'committedTurn', '1');
    await redis.rpush('{goald}:goal:gagain:turns', JSON.stringify({ turn: 1 }));
    await enqueueTurn(queue, { goalId: 'gagain', epoch: 1, turn: 1 });
    await expect.poll(async () => (await readClusterGoal(redis, 'gagain'))?.status, { timeout: 10_000 }).toBe('achieved');
    expect(seen).toEqual(['1:skipped', '2:committed', '3:committed']);
    expect(((await readCommittedTurns(redis, 'gagain')) as Array<{ turn: number }>).map((record) => record.turn)).toEqual([1, 2, 3]);
  });
});

describe('deleteClusterGoal', () => {
  it('deletes a finished or stopped goal whole, and never a live one', async () => {
    for (const [goalId, status] of [['live', 'active'], ['held', 'paused'], ['done', 'achieved'], ['halted', 'stopped']] as const) {
      await startGoal(goalId);
      await setClusterGoalStatus(redis, goalId, status);
    }
    await redis.xadd('{goald}:goal:done:events', '*', 'event', '{}');
    expect(await clusterGoalBytes(redis, 'done')).toBeGreaterThan(0);
    expect(await deleteClusterGoal(redis, 'live')).toBe(false);
    expect(await deleteClusterGoal(redis, 'held')).toBe(false);
    expect(await deleteClusterGoal(redis, 'done')).toBe(true);
    expect(await deleteClusterGoal(redis, 'halted')).toBe(true);
    expect(await deleteClusterGoal(redis, 'done')).toBe(false); // gone already
    expect(await redis.keys('{goald}:goal:done*')).toEqual([]);
    expect((await redis.zrange('{goald}:goals', 0, -1)).sort()).toEqual(['held', 'live']);
  });
});

describe('checkRedisRequirements', () => {
  it('passes a Redis 7 with noeviction and the append-only file', async () => {
    const found = await checkRedisRequirements(redis);
    expect(found.version).toMatch(/^\d+\.\d+/);
    expect(found).toMatchObject({ problems: [], warnings: [] });
  });

  it('names an evicting policy as a problem and a missing append-only file as a warning, each with its fix', async () => {
    const lax = await startRedis(['--maxmemory-policy', 'allkeys-lru', '--appendonly', 'no']);
    const client = new Redis(lax.url);
    try {
      const found = await checkRedisRequirements(client);
      expect(found.problems).toEqual([expect.stringMatching(/maxmemory-policy is allkeys-lru.*set it to noeviction/)]);
      expect(found.warnings).toEqual([expect.stringMatching(/append-only file is off.*appendonly yes/)]);
    } finally {
      client.disconnect();
      await lax.stop();
    }
  });
});

describe('connectCluster', () => {
  async function refusal(url: string): Promise<GoaldError> {
    const error = await connectCluster(url, { connectTimeoutMs: 2_000 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!(error instanceof GoaldError)) throw new Error(`expected a GoaldError, got ${String(error)}`);
    return error;
  }

  it('connects to a Redis fit for the cluster', async () => {
    const connected = await connectCluster(server.url);
    closers.push(async () => connected.redis.disconnect());
    expect(connected).toMatchObject({ shownUrl: `${server.url}`, warnings: [] });
    expect(await connected.redis.ping()).toBe('PONG');
  });

  it('exits 3 for a Redis it cannot reach, naming the URL without its password', async () => {
    const down = await startRedis();
    await down.stop();
    const error = await refusal(`redis://:hunter2-secret@127.0.0.1:${down.port}/0`);
    expect(error.code).toBe('cluster-unreachable');
    expect(error.exitCode).toBe(EXIT.daemonUnreachable);
    expect(error.message).toContain(`cannot reach Redis at redis://:***@127.0.0.1:${down.port}/0 (`);
    expect(`${error.message} ${error.hint ?? ''}`).not.toContain('hunter2');
    expect(error.hint).toBe('start Redis there, or fix GOALD_REDIS_URL');
  });

  it('refuses what is not a Redis URL, and a Redis that would evict, each with its fix', async () => {
    for (const url of ['not a url', 'http://127.0.0.1:6379']) {
      const error = await refusal(url);
      expect(error.code).toBe('usage');
      expect(error.hint).toBe('set it like redis://host:6379/0 (rediss:// for TLS)');
    }
    const lax = await startRedis(['--maxmemory-policy', 'allkeys-lru']);
    try {
      const error = await refusal(lax.url);
      expect(error.code).toBe('config');
      expect(error.message).toMatch(/cannot hold goald's cluster: maxmemory-policy is allkeys-lru/);
    } finally {
      await lax.stop();
    }
  });
});
