// Connecting a daemon or worker to its cluster's Redis (GOALD_REDIS_URL or config `cluster.redis`), at
// start: a URL that is not one is a usage error; a Redis that cannot be reached exits 3, naming the URL
// (never its password) with a hint; one that lacks what cluster mode needs (redis-requirements.ts) is
// refused, naming each lack and its fix. Warnings (no append-only file) are returned for the caller to log.

import { Redis } from 'ioredis';

import { GoaldError } from '../errors.js';
import { checkRedisRequirements } from './redis-requirements.js';

/** A connection a cluster role may use, and what its Redis was warned about. */
export interface ClusterConnection {
  redis: Redis;
  /** The URL as it may be shown (its password hidden). */
  shownUrl: string;
  warnings: string[];
}

/** The URL with its password hidden, for messages and logs. */
function showRedisUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return shown.href;
}

/** Connects to `url` and checks its Redis; throws GoaldError (usage, cluster-unreachable or config) otherwise. */
export async function connectCluster(url: string, options: { connectTimeoutMs?: number; source?: string } = {}): Promise<ClusterConnection> {
  const source = options.source ?? 'GOALD_REDIS_URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GoaldError('usage', `${source} is not a URL`, 'set it like redis://host:6379/0 (rediss:// for TLS)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new GoaldError('usage', `${source} ${showRedisUrl(parsed)} is not a redis:// or rediss:// URL`, 'set it like redis://host:6379/0 (rediss:// for TLS)');
  }
  const shownUrl = showRedisUrl(parsed);
  // No retry at start: an unreachable Redis is told at once; BullMQ's connections retry later on their own.
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: options.connectTimeoutMs ?? 5_000, retryStrategy: () => null, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // reported by connect() below, not as an unhandled 'error' event
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    const reason = error instanceof Error ? error.message : String(error);
    throw new GoaldError('cluster-unreachable', `cannot reach Redis at ${shownUrl} (${reason.replaceAll(url, shownUrl)})`, `start Redis there, or fix ${source}`);
  }
  const found = await checkRedisRequirements(redis);
  if (found.problems.length > 0) {
    redis.disconnect();
    throw new GoaldError('config', `Redis at ${shownUrl} cannot hold goald's cluster: ${found.problems.join('; ')}`, 'fix it as said, then start again');
  }
  return { redis, shownUrl, warnings: found.warnings };
}

/**
 * Logs once when `connections` lose their Redis and once when it is back (ioredis reconnects by itself),
 * instead of one unhandled error per attempt; the URL's password never reaches the log.
 */
export function logReachability(connections: readonly Redis[], url: string, shownUrl: string, log: (line: string) => void): void {
  let reachable = true;
  for (const connection of connections) {
    connection.on('error', (error: Error) => {
      if (reachable) log(`cluster: Redis at ${shownUrl} cannot be reached (${error.message.replaceAll(url, shownUrl)}); retrying`);
      reachable = false;
    });
    connection.on('ready', () => {
      if (!reachable) log(`cluster: Redis at ${shownUrl} is back`);
      reachable = true;
    });
  }
}
