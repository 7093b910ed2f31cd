// What goald's cluster mode needs of its Redis, checked before a daemon or worker uses it: version 6.2 or
// later (BullMQ's scripts use its commands), `maxmemory-policy noeviction` (an evicted key is a lost job or
// a lost turn), and the append-only file recommended (without it a Redis restart forgets what was committed
// since its last snapshot). Read from INFO, which managed Redis services leave on where CONFIG is renamed.

import type { Redis } from 'ioredis';

const MIN_VERSION = [6, 2, 0] as const;

/** What is wrong with a Redis (each refuses cluster mode) and what is merely advised. */
export interface RedisRequirements {
  version: string;
  problems: string[];
  warnings: string[];
}

/** Reads the server's INFO and says what it lacks. */
export async function checkRedisRequirements(redis: Redis): Promise<RedisRequirements> {
  const info = parseInfo(await redis.info());
  const version = info.get('redis_version') ?? 'unknown';
  const problems: string[] = [];
  const warnings: string[] = [];
  if (!isAtLeast(version, MIN_VERSION)) {
    problems.push(`Redis ${version} is older than ${MIN_VERSION.join('.')}; upgrade it`);
  }
  const policy = info.get('maxmemory_policy');
  if (policy !== 'noeviction') {
    problems.push(`maxmemory-policy is ${policy ?? 'unknown'}, which may evict goald's jobs and goal state; set it to noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf)`);
  }
  if (info.get('aof_enabled') !== '1') {
    warnings.push('the append-only file is off: a Redis restart loses what was committed since its last snapshot; turn it on (appendonly yes)');
  }
  return { version, problems, warnings };
}

// INFO's `key:value` lines, sections and comments skipped.
function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

function isAtLeast(version: string, minimum: readonly number[]): boolean {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10));
  for (const [index, wanted] of minimum.entries()) {
    const have = parts[index] ?? 0;
    if (Number.isNaN(have)) return false;
    if (have !== wanted) return have > wanted;
  }
  return true;
}
