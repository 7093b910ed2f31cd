// The daemon process: takes the home's lock, recovers goals a previous daemon left active, serves the
// control socket, and shuts down cleanly on SIGTERM/SIGINT or `goald daemon stop` (agents stopped, state
// flushed, socket removed). The only module that installs signal handlers.

import { mkdir } from 'node:fs/promises';
import { openStore, resolveGoaldHome, resolveSocketPath } from '../../state/index.js';
import { redactSecrets } from '../secrets/redact.js';
import { GOALD_VERSION } from '../version.js';
import { acquireDaemonLock } from './daemon-lock.js';
import { DaemonGoalHost } from './goal-host.js';
import { createControlServer } from './server.js';
import { checkSocketPath } from './socket-path.js';

export interface DaemonOptions {
  env: NodeJS.ProcessEnv;
  /** Where log lines go (stderr; redirected to daemon.log when auto-started). */
  log: (line: string) => void;
}

/** Runs the daemon until it is told to stop; resolves once it has shut down. */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { env } = options;
  // daemon.log is a file: a secret in a message (a path, a command, an error) is redacted first.
  const log = (line: string): void => options.log(redactSecrets(`${new Date().toISOString()} ${line}`, env));
  const home = resolveGoaldHome(env);
  const socketPath = resolveSocketPath(env, home);
  checkSocketPath(socketPath);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const releaseLock = await acquireDaemonLock(home);

  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  let shuttingDown: Promise<void> | null = null;
  const requestShutdown = (): void => {
    shuttingDown ??= shutdown();
  };

  const store = await openStore(home);
  const host = new DaemonGoalHost({ store, env, version: GOALD_VERSION, log, requestShutdown });
  let server: Awaited<ReturnType<typeof createControlServer>> | null = null;

  async function shutdown(): Promise<void> {
    log('shutting down');
    await server?.close().catch((error: unknown) => log(`closing the socket failed: ${String(error)}`));
    await host.detachAll();
    await releaseLock();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    log('stopped');
    resolveStopped();
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`received ${signal}`);
    requestShutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', () => undefined); // a closed terminal must not take the daemon down

  try {
    server = await createControlServer({ socketPath, host, log });
  } catch (error) {
    await releaseLock();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    throw error;
  }
  log(`goald daemon ${GOALD_VERSION} (pid ${process.pid}) listening on ${socketPath}`);
  // Only the daemon that got the socket recovers; requests that arrive meanwhile wait for it (the host
  // holds them), and /v1/ping answers at once.
  await host.recover();
  await stopped;
}
