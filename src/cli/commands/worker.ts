// `goald worker [--concurrency n] [--dir path]`: a cluster's turn runner. It takes turn jobs from the
// BullMQ queue on GOALD_REDIS_URL and runs each as one step of a real goald goal (cluster-turn-runner.ts),
// until SIGTERM or SIGINT, which hand the turns it holds back to the queue for another worker.

import { hostname } from 'node:os';
import path from 'node:path';

import { Redis } from 'ioredis';

import { resolveGoaldHome } from '../../../state/paths.js';
import { failGoalAfterTurnError, hideUrlCredentials } from '../../cluster/cluster-goals.js';
import { resolveClusterSettings } from '../../cluster/cluster-settings.js';
import { createClusterTurnRunner } from '../../cluster/cluster-turn-runner.js';
import { connectCluster, logReachability } from '../../cluster/connect-cluster.js';
import { closeQueue, createTurnQueue, startTurnWorker } from '../../cluster/turn-queue.js';
import { parseDuration, parsePositiveInt } from '../../config/duration.js';
import { EXIT, GoaldError } from '../../errors.js';
import { childrenDieWithThisProcess } from '../../process/spawn.js';
import type { CliIO } from '../io.js';

// After the shutdown, how long the process may take to end by itself before it exits anyway.
const EXIT_WAIT_MS = 1_000;

export interface WorkerOptions {
  concurrency?: string;
  dir?: string;
  lockDuration?: string;
  stalledInterval?: string;
}

/** Runs a worker until a signal; resolves with the exit code. */
export async function runWorkerCommand(options: WorkerOptions, io: CliIO): Promise<number> {
  const { settings: cluster, warnings: configWarnings } = await resolveClusterSettings(io.env);
  for (const warning of configWarnings) io.err(`goald worker: warning: ${warning}`);
  if (cluster === null) {
    throw new GoaldError('usage', 'goald worker needs a cluster: GOALD_REDIS_URL is not set, nor cluster.redis in your user config', 'set GOALD_REDIS_URL=redis://host:6379/0 to the Redis the daemon uses');
  }
  const { url } = cluster;
  const concurrency = options.concurrency === undefined ? 1 : parsePositiveInt(options.concurrency, '--concurrency');
  const lockDuration = options.lockDuration === undefined ? undefined : positiveDuration(options.lockDuration, '--lock-duration');
  const stalledInterval = options.stalledInterval === undefined ? undefined : positiveDuration(options.stalledInterval, '--stalled-interval');
  const { redis: checked, shownUrl, warnings } = await connectCluster(url, { source: cluster.urlSource });
  checked.disconnect();
  for (const warning of warnings) io.err(`goald worker: warning: ${warning}`);
  // A worker killed mid-turn must leave no agent editing or pushing.
  if (!childrenDieWithThisProcess(io.env)) io.err('goald worker: warning: setpriv (util-linux) is not installed: an agent outlives a worker that is killed; install util-linux');
  const log = (line: string): void => io.err(`${new Date().toISOString()} ${line}`);
  // Long-lived connections retry on their own (BullMQ's need maxRetriesPerRequest null): a Redis restart
  // only pauses the worker.
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    connections.push(connection);
    return connection;
  };
  const redis = connect();
  const queue = createTurnQueue(connect());
  const workerConnection = connect();
  logReachability(connections, url, shownUrl, log);
  const workerName = `${hostname()}-${process.pid}`;
  const turnWorker = startTurnWorker({
    connection: workerConnection,
    redis,
    queue,
    concurrency,
    ...(lockDuration === undefined ? {} : { lockDuration }),
    ...(stalledInterval === undefined ? {} : { stalledInterval }),
    run: createClusterTurnRunner({
      redis,
      workDir: path.resolve(io.cwd, options.dir ?? path.join(resolveGoaldHome(io.env), 'worker')),
      env: io.env,
      workerName,
      log,
    }),
    onTurn: (job, outcome) => log(`goal ${job.goalId}: turn ${job.turn} ${outcome}`),
    onFinalFailure: async (job, error) => {
      log(`goal ${job.goalId}: turn ${job.turn} failed on every attempt; the goal fails (cluster-error)`);
      await failGoalAfterTurnError(redis, job, error);
    },
  });
  turnWorker.worker.on('failed', (job, error) => log(`turn job ${job?.id ?? '?'} failed: ${hideUrlCredentials(error.message)}`));
  // A lost Redis is told once by logReachability; BullMQ's own errors in the meantime repeat it.
  turnWorker.worker.on('error', (error) => {
    if (!isConnectionError(error)) log(`worker error: ${error.message.replaceAll(url, shownUrl)}`);
  });
  queue.on('error', (error) => {
    if (!isConnectionError(error)) log(`queue error: ${error.message.replaceAll(url, shownUrl)}`);
  });
  await turnWorker.ready();
  log(`goald worker ${workerName} taking turns from ${shownUrl} (concurrency ${concurrency})`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log('goald worker: shutting down; the turns it held go back to the queue');
  await turnWorker.close(true);
  await closeQueue(queue);
  // BullMQ leaves the connections it was given open (they are ours).
  for (const connection of connections) connection.disconnect();
  // The turns are handed back; whatever BullMQ still holds open must not keep the process alive.
  setTimeout(() => process.exit(EXIT.ok), EXIT_WAIT_MS).unref();
  return EXIT.ok;
}

function positiveDuration(text: string, what: string): number {
  const ms = parseDuration(text, what);
  if (ms === 0) throw new GoaldError('usage', `${what}: 0 is too short`, 'give a duration such as 30s');
  return ms;
}

function isConnectionError(error: Error): boolean {
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection is closed/.test(error.message);
}
