// The daemon process: takes the home's lock, recovers goals a previous daemon left active, serves the
// control socket, and shuts down cleanly on SIGTERM/SIGINT or `goald daemon stop` (agents stopped, state
// flushed, socket removed). The only module that installs signal handlers.

import { dirname } from 'node:path';
import { ensureTrustedDirectory, ensureTrustedHome } from '../../state/home-trust.js';
import { openStore, resolveGoaldHome, resolveSocketPath } from '../../state/index.js';
import { redactSecrets } from '../secrets/redact.js';
import { GOALD_VERSION } from '../version.js';
import { acquireDaemonLock } from './daemon-lock.js';
import { DaemonGoalHost } from './goal-host.js';
import { createControlServer } from './server.js';
import type { GoalHost } from './types.js';
import type { Store } from '../../state/types.js';
import { checkSocketPath } from './socket-path.js';
import { StatusSnapshotWriter } from './status-snapshot-writer.js';

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
  // Nothing another user can write is trusted: checked (a missing directory created 0700) before the lock,
  // the state or the socket is touched; a refusal ends the start with exit 2.
  ensureTrustedHome(home);
  ensureTrustedDirectory(dirname(socketPath), 'the socket directory');
  const releaseLock = await acquireDaemonLock(home);

  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  let shuttingDown: Promise<void> | null = null;
  const requestShutdown = (): void => {
    shuttingDown ??= shutdown();
  };

  // A daemon that cannot read its state (corrupt state.json) must not serve: it exits non-zero, and an
  // auto-starting CLI reports the line it logged.
  const store = await openStore(home)
    .then(async (opened) => {
      await opened.read(); // reads and validates state.json now, not at the first request
      return opened;
    })
    .catch(async (error: unknown) => {
      await releaseLock();
      throw error;
    });
  const statusSnapshot = new StatusSnapshotWriter(home, socketPath);
  const host = await createGoalHost({ store, env, log, requestShutdown, statusSnapshot }).catch(async (error: unknown) => {
    await releaseLock();
    throw error;
  });
  let server: Awaited<ReturnType<typeof createControlServer>> | null = null;

  async function shutdown(): Promise<void> {
    log('shutting down');
    await server?.close().catch((error: unknown) => log(`closing the socket failed: ${String(error)}`));
    await host.detachAll();
    statusSnapshot.close(); // `goald status` asks the socket, finds no daemon, and says so
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
    statusSnapshot.close();
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

/** What the daemon runs goals with: the embedded host, or the cluster's control plane (GOALD_REDIS_URL). */
type RunningHost = GoalHost & { recover(): Promise<void>; detachAll(): Promise<void> };

// Cluster mode's modules (BullMQ, ioredis) load only when GOALD_REDIS_URL or the user config's `cluster.redis` ask for them.
async function createGoalHost(options: {
  store: Store;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  requestShutdown: () => void;
  statusSnapshot: StatusSnapshotWriter;
}): Promise<RunningHost> {
  const { store, env, log, requestShutdown, statusSnapshot } = options;
  const { resolveClusterSettings } = await import('../cluster/cluster-settings.js');
  const { settings: cluster, warnings: configWarnings } = await resolveClusterSettings(env);
  for (const warning of configWarnings) log(`warning: ${warning}`);
  // A cluster daemon's goals live in Redis, not in state.json: its status goes over the socket.
  if (cluster === null) return new DaemonGoalHost({ store, env, version: GOALD_VERSION, log, requestShutdown, statusSnapshot });
  const { url } = cluster;
  const [{ connectCluster, logReachability }, { ClusterGoalHost }, { createTurnQueue }, { Redis }] = await Promise.all([
    import('../cluster/connect-cluster.js'),
    import('../cluster/cluster-goal-host.js'),
    import('../cluster/turn-queue.js'),
    import('ioredis'),
  ]);
  const { redis: checked, shownUrl, warnings } = await connectCluster(url, { source: cluster.urlSource });
  checked.disconnect();
  for (const warning of warnings) log(`cluster: warning: ${warning}`);
  log(`cluster mode: goals run on the workers of ${shownUrl}`);
  // Reads fail at once while Redis is away (status then shows the goals as last read, and says so);
  // the queue's connection waits for Redis to come back.
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const queueConnection = new Redis(url, { maxRetriesPerRequest: null });
  const loopConnection = new Redis(url, { maxRetriesPerRequest: null });
  logReachability([redis, queueConnection, loopConnection], url, shownUrl, log);
  await redis.connect();
  const queue = createTurnQueue(queueConnection);
  queue.on('error', () => undefined); // an outage, told once by logReachability
  return new ClusterGoalHost({ redis, queue, connections: [redis, queueConnection, loopConnection], loopConnection, shownUrl, cluster, env, version: GOALD_VERSION, home: store.home, log, requestShutdown });
}
