// `goald worker` processes (the built CLI) for the cluster tests: each with a home of its own under `root`
// and the cluster's Redis in its environment (whether a turn runs in the sandbox is its goal's setting).
// Stopped with SIGTERM, as a deploy stops them.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { goaldBin } from './run-goald.js';
import { waitUntil } from './wait.js';

export interface GoaldWorker {
  name: string;
  child: ChildProcess;
  /** What it logged so far (stderr). */
  log(): string;
}

/** Starts a worker named `name` and waits until it takes turns. */
export async function startGoaldWorker(root: string, name: string, redisUrl: string, args: readonly string[] = []): Promise<GoaldWorker> {
  await mkdir(path.join(root, name), { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('GOALD_') || key.startsWith('GIT_')) delete env[key];
  Object.assign(env, { GOALD_HOME: path.join(root, name, 'home'), HOME: path.join(root, name), GOALD_REDIS_URL: redisUrl });
  const child = spawn(process.execPath, [goaldBin, 'worker', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const worker: GoaldWorker = { name, child, log: () => stderr };
  await waitUntil(`worker ${name} ready`, () => stderr.includes('taking turns from') || (child.exitCode !== null && Promise.reject(new Error(stderr))), 20_000);
  return worker;
}

// A worker stopping hands its turns back and closes its connections: it gets this long before it fails the test.
const STOP_TIMEOUT_MS = 10_000;

/** Stops workers (SIGTERM) and waits for them to exit; throws, after killing them, for any that does not in time. */
export async function stopGoaldWorkers(workers: readonly GoaldWorker[]): Promise<void> {
  const late = await Promise.all(
    workers.map(
      ({ name, child }) =>
        new Promise<string | null>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(null);
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            resolve(name);
          }, STOP_TIMEOUT_MS);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve(null);
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  const stuck = late.filter((name) => name !== null);
  if (stuck.length > 0) throw new Error(`goald worker ${stuck.join(', ')} did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`);
}

/** How many turns a worker logged as committed. */
export function turnsCommittedBy(worker: GoaldWorker): number {
  return (worker.log().match(/ committed$/gm) ?? []).length;
}
