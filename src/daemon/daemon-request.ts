// One request to the daemon as the CLI sends it (socket-exchange.ts carries it): the checks made before
// anything is sent, the headers, and the error a silent daemon gets. Shared by the client (client.ts) and
// the request `goald status` sends before its code has loaded (cli/early-status.ts), so the two are the
// same request byte for byte.

import { assertTrustedSocket } from '../../state/home-trust.js';
import { resolveGoaldHome, resolveSocketPath } from '../../state/paths.js';
import { GoaldError } from '../errors.js';
import type { SocketRequest } from './socket-exchange.js';
import { checkSocketPath } from './socket-path.js';

/** Which goals a list request asks for (GET /v1/goals). */
export interface GoalFilter {
  workspace?: string;
  status?: string[];
}

/** The socket path for this environment (validated for length). */
export function daemonSocketPath(env: NodeJS.ProcessEnv): string {
  const socketPath = resolveSocketPath(env, resolveGoaldHome(env));
  checkSocketPath(socketPath);
  return socketPath;
}

/** The path and query of GET /v1/goals for `filter`. */
export function goalListPath(filter: GoalFilter): string {
  const query = new URLSearchParams();
  if (filter.workspace !== undefined) query.set('workspace', filter.workspace);
  if (filter.status !== undefined && filter.status.length > 0) query.set('status', filter.status.join(','));
  const search = query.toString();
  return search === '' ? '/v1/goals' : `/v1/goals?${search}`;
}

/**
 * The request for `method path` (with `payload`, JSON already), expecting `accept`. Throws a `config`
 * GoaldError for a socket path too long or a socket another user owns or could have put there: nothing is
 * sent to it.
 */
export function daemonRequest(socketPath: string, method: string, path: string, payload: string | undefined, timeoutMs: number, accept: 'json' | 'ndjson' = 'json'): SocketRequest {
  checkSocketPath(socketPath);
  assertTrustedSocket(socketPath);
  const headers: Record<string, string | number> = { Accept: accept === 'json' ? 'application/json' : 'application/x-ndjson' };
  if (payload !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(payload);
  }
  const onTimeout = (): GoaldError =>
    new GoaldError(
      'daemon-unreachable',
      `the goald daemon at ${socketPath} did not answer ${method} ${path.split('?')[0] ?? path} within ${Math.round(timeoutMs / 1000)} s`,
      'see GOALD_HOME/daemon.log; restart it with `goald daemon stop` then `goald daemon`',
    );
  return { method, path, headers, ...(payload === undefined ? {} : { body: payload }), timeoutMs, onTimeout };
}
