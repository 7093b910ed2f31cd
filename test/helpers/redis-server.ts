// The scale-out tests' redis-server: the same one the cluster benchmark starts (bench/local-redis.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

import { startRedis, type RedisServer } from '../../bench/local-redis.js';

export { startRedis, type RedisServer };

/** What a file's tests share: a redis-server, a client of it, and a temp directory (read them inside a test). */
export interface RedisFixture {
  readonly server: RedisServer;
  readonly redis: Redis;
  readonly root: string;
}

/** Starts a redis-server, a client and a temp directory (named from `prefix`) before the file's tests; ends them after. */
export function useRedisFixture(prefix: string): RedisFixture {
  let fixture: { server: RedisServer; redis: Redis; root: string } | null = null;
  const get = (): { server: RedisServer; redis: Redis; root: string } => {
    if (fixture === null) throw new Error('the redis fixture is read before the tests start');
    return fixture;
  };
  beforeAll(async () => {
    const server = await startRedis();
    fixture = { server, redis: new Redis(server.url), root: await mkdtemp(path.join(tmpdir(), prefix)) };
  });
  afterAll(async () => {
    if (fixture === null) return;
    fixture.redis.disconnect();
    await fixture.server.stop();
    await rm(fixture.root, { recursive: true, force: true });
  });
  return {
    get server() {
      return get().server;
    },
    get redis() {
      return get().redis;
    },
    get root() {
      return get().root;
    },
  };
}
