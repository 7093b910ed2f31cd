// A real redis-server (Debian's, installed by .ci/run) for the scale-out tests and the cluster benchmark: on a free port of 127.0.0.1,
// its data (AOF on, no RDB snapshots) in a temp dir, stopped (or killed) by the test that started it.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** Stops it (SIGTERM, which flushes the AOF); `keepData` leaves its dir for a restart. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** The same server again, on the same port and data (after stop({ keepData: true })). */
  restart(): Promise<RedisServer>;
}

/** A free TCP port on 127.0.0.1 (free when asked: the caller binds it next). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts redis-server; `args` are extra `--name value` settings (e.g. ['--maxmemory-policy', 'allkeys-lru']). */
export async function startRedis(args: readonly string[] = [], reuse?: { port: number; dir: string }): Promise<RedisServer> {
  const dir = reuse?.dir ?? (await mkdtemp(path.join(tmpdir(), 'goald-redis-')));
  const port = reuse?.port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitUntilReady(child);
  const stop = async (options: { keepData?: boolean } = {}): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    if (options.keepData !== true) await rm(dir, { recursive: true, force: true });
  };
  return { url: `redis://127.0.0.1:${port}`, port, dir, stop, restart: () => startRedis(args, { port, dir }) };
}

function waitUntilReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start within 10 s:\n${output}`));
    }, 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited ${code}:\n${output}`));
    });
  });
}
