// The control plane's routes: one table of `{ method, pattern, handler }`. A handler validates its input,
// calls the goal host and says what to send; the server owns HTTP (status lines, bodies, streaming).

import {
  parseCreateLoopRequest,
  parseEditGoalRequest,
  parseEmptyRequest,
  parseFollow,
  parseId,
  parseListGoalsQuery,
  parsePauseRequest,
  parsePruneRequest,
  parseSayRequest,
  parseGoalBranchRequest,
  parseRollbackRequest,
  parseStartGoalRequest,
  parseStartRaceRequest,
  parseSyncLoopsRequest,
  parseUiRequest,
} from './request-schemas.js';
import { openDashboard } from '../ui/dashboard-launcher.js';
import type { RoutePattern } from './router.js';
import type { EventSubscription, GoalHost } from './types.js';

export interface RouteContext {
  host: GoalHost;
  /** Percent-decoded `:name` path parameters. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The parsed JSON body; undefined when the request had none. */
  body: unknown;
  /** The daemon's log (the dashboard's server logs through it). */
  log?: (line: string) => void;
}

export type RouteReply =
  | {
      kind: 'json';
      status: number;
      body: unknown;
      /** Runs once the response has been handed to the OS (daemon stop answers before it stops). */
      afterResponse?: () => Promise<void>;
    }
  | { kind: 'events'; subscription: EventSubscription; follow: boolean };

export interface Route extends RoutePattern {
  method: 'GET' | 'POST' | 'DELETE';
  handler(context: RouteContext): Promise<RouteReply>;
}

function replyJson(body: unknown, status = 200): RouteReply {
  return { kind: 'json', status, body };
}

/** A route's `:id` parameter, validated as a goal or loop id. */
function idParam(context: RouteContext, kind: 'goal' | 'loop'): string {
  return parseId(context.params.id ?? '', kind);
}

export const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    pattern: '/v1/ping',
    handler: async ({ host }) => replyJson({ ok: true, ...host.info() }),
  },
  {
    method: 'GET',
    pattern: '/v1/goals',
    handler: async ({ host, query }) => {
      const goals = await host.listGoals(parseListGoalsQuery(query));
      const cluster = host.clusterHealth?.();
      return replyJson({ goals, ...(cluster === undefined ? {} : { cluster }) });
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals',
    handler: async ({ host, body }) => replyJson(await host.startGoal(parseStartGoalRequest(body)), 201),
  },
  {
    method: 'POST',
    pattern: '/v1/races',
    handler: async ({ host, body }) => replyJson({ race: await host.startRace(parseStartRaceRequest(body)) }, 201),
  },
  {
    method: 'GET',
    pattern: '/v1/races/:id',
    handler: async (context) => replyJson({ race: await context.host.getRace(parseId(context.params.id ?? '', 'race')) }),
  },
  {
    method: 'GET',
    pattern: '/v1/goals/:id',
    handler: async (context) => replyJson({ goal: await context.host.getGoal(idParam(context, 'goal')) }),
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/pause',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      const { now } = parsePauseRequest(context.body);
      return replyJson({ goal: await context.host.pauseGoal(id, now) });
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/resume',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      parseEmptyRequest(context.body, 'resume request');
      return replyJson({ goal: await context.host.resumeGoal(id) });
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/branch',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      const { dir } = parseGoalBranchRequest(context.body);
      return replyJson(await context.host.goalBranch(id, dir));
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/rollback',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      const { toTurn } = parseRollbackRequest(context.body);
      return replyJson(await context.host.rollbackGoal(id, toTurn));
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/stop',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      parseEmptyRequest(context.body, 'stop request');
      return replyJson({ goal: await context.host.stopGoal(id) });
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/say',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      return replyJson(await context.host.guideGoal(id, parseSayRequest(context.body).text));
    },
  },
  {
    method: 'POST',
    pattern: '/v1/goals/:id/edit',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      return replyJson(await context.host.editGoal(id, parseEditGoalRequest(context.body)));
    },
  },
  {
    method: 'GET',
    pattern: '/v1/goals/:id/events',
    handler: async (context) => {
      const id = idParam(context, 'goal');
      const follow = parseFollow(context.query);
      return { kind: 'events', subscription: await context.host.subscribe(id), follow };
    },
  },
  {
    method: 'GET',
    pattern: '/v1/loops',
    handler: async ({ host }) => replyJson({ loops: await host.listLoops() }),
  },
  {
    method: 'POST',
    pattern: '/v1/loops',
    handler: async ({ host, body }) => replyJson({ loop: await host.createLoop(parseCreateLoopRequest(body)) }, 201),
  },
  {
    method: 'POST',
    pattern: '/v1/loops/sync',
    handler: async ({ host, body }) => replyJson({ loops: await host.syncLoops(parseSyncLoopsRequest(body).dir) }),
  },
  {
    method: 'DELETE',
    pattern: '/v1/loops/:id',
    handler: async (context) => replyJson({ loop: await context.host.deleteLoop(idParam(context, 'loop')) }),
  },
  {
    method: 'POST',
    pattern: '/v1/loops/:id/run',
    handler: async (context) => {
      const id = idParam(context, 'loop');
      parseEmptyRequest(context.body, 'loop run request');
      return replyJson(await context.host.runLoop(id));
    },
  },
  {
    method: 'POST',
    pattern: '/v1/prune',
    handler: async ({ host, body }) => replyJson(await host.prune(parsePruneRequest(body))),
  },
  {
    method: 'POST',
    pattern: '/v1/ui',
    handler: async ({ host, body, log }) => replyJson(await openDashboard(host, { port: parseUiRequest(body).port, log: log ?? (() => {}) })),
  },
  {
    method: 'POST',
    pattern: '/v1/daemon/stop',
    handler: async ({ host, body }) => {
      parseEmptyRequest(body, 'daemon stop request');
      return { kind: 'json', status: 202, body: { ok: true }, afterResponse: () => host.shutdown() };
    },
  },
];
