// The scale-out tests' redis-server: the same one the cluster benchmark starts (bench/local-redis.ts).
export { startRedis, type RedisServer } from '../../bench/local-redis.js';
