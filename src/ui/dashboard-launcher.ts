// Starts `goald ui`'s web server on the first POST /v1/ui and hands out a one-time link per request after.
// Imported by the daemon's routes at start-up, so it stays tiny: the server, the page data and the view
// code load with the first request (dynamic import), never with the daemon.

import { GoaldError } from '../errors.js';
import type { GoalHost } from '../daemon/types.js';
import type { WebDashboard } from './web-server.js';

// One dashboard per daemon (per goal host: tests run several hosts in one process).
const dashboards = new Map<GoalHost, Promise<WebDashboard>>();

/** The dashboard's address with a fresh one-time token, starting its server on `port` (0: any) if needed. */
export async function openDashboard(host: GoalHost, options: { port: number; log: (line: string) => void }): Promise<{ url: string; port: number }> {
  let started = dashboards.get(host);
  if (started === undefined) {
    started = import('./web-server.js').then(({ startWebDashboard }) => startWebDashboard({ host, port: options.port, log: options.log }));
    dashboards.set(host, started);
    // A start that failed (the port was taken) is forgotten, so the next request may try another port.
    started.catch(() => dashboards.delete(host));
  }
  const dashboard = await started;
  if (options.port !== 0 && options.port !== dashboard.port) {
    throw new GoaldError('conflict', `the dashboard already runs on port ${dashboard.port}`, `run \`goald ui --port ${dashboard.port}\`, or leave --port out`);
  }
  return { url: dashboard.link(), port: dashboard.port };
}

/** Stops the host's dashboard, if it has one (the daemon's shutdown). */
export async function closeDashboard(host: GoalHost): Promise<void> {
  const started = dashboards.get(host);
  if (started === undefined) return;
  dashboards.delete(host);
  const dashboard = await started.catch(() => null);
  await dashboard?.close();
}
