// `goald status` with no goal named (scripts and shell prompts poll it) sends its request to the daemon
// before its own code has loaded: bin.ts calls this first, and the daemon answers while the status chunk
// (fast-command.ts, control.ts, the client) is loaded and run, instead of after. Same request, same checks
// (daemon-request.ts); the client takes its reply (socket-exchange.ts). Anything that goes wrong here is
// left for the command itself to meet and report.

import { daemonRequest, daemonSocketPath, goalListPath, type GoalFilter } from '../daemon/daemon-request.js';
import { LIVE_GOAL_STATUSES } from '../daemon/resolve-goal.js';
import { sendEarlyExchange } from '../daemon/socket-exchange.js';

/** How long `goald status` waits on the daemon before it shows the stored state instead. */
export const STATUS_TIMEOUT_MS = 5_000;

/** `status`, `status <goal>`, each with or without one `--json` anywhere after `status`; null for anything else. */
export function parseStatusArgs(args: readonly string[]): { ref: string | undefined; json: boolean } | null {
  if (args[0] !== 'status') return null;
  let ref: string | undefined;
  let json = false;
  for (const arg of args.slice(1)) {
    if (arg === '--json' && !json) json = true;
    else if (ref === undefined && arg !== '' && !arg.startsWith('-')) ref = arg;
    else return null;
  }
  return { ref, json };
}

/** What a status that names no goal asks the daemon for: the live goals (GET /v1/goals?status=active,paused). */
export const LIVE_GOALS: GoalFilter = { status: [...LIVE_GOAL_STATUSES] };

/** For `args` (argv after the script) of a status that names no goal: sends its request now; true when it did. */
export function sendStatusRequestEarly(args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const status = parseStatusArgs(args);
  if (status === null || status.ref !== undefined) return false;
  try {
    const socketPath = daemonSocketPath(env);
    sendEarlyExchange(socketPath, daemonRequest(socketPath, 'GET', goalListPath(LIVE_GOALS), undefined, STATUS_TIMEOUT_MS));
    return true;
  } catch {
    return false; // a socket path too long, or one not to be trusted: the command says so itself
  }
}
