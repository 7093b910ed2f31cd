// `goald ui`'s web server, in the daemon, on 127.0.0.1 only: the prebuilt page, JSON endpoints made from
// the one view function, Server-Sent Events bridged from the goal host's event stream, and the actions,
// each dispatched to the control socket's own route handler (same validation, same host call, same trust
// rules; no second implementation). Every request passes web-guard.ts first. Loaded on the first
// POST /v1/ui (dashboard-launcher.ts), never at the daemon's start.

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import { GoaldError, isGoaldError } from '../errors.js';
import { statusForCode, toErrorEnvelope } from '../daemon/error-envelope.js';
import { parseJsonBody, readBody } from '../daemon/request-body.js';
import { matchRoute } from '../daemon/router.js';
import { ROUTES } from '../daemon/routes.js';
import type { GoalHost } from '../daemon/types.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { goalDashboard, listDashboard, turnDashboard, viewOf } from './dashboard-data.js';
import { eventsAfter, formatMessage, HEARTBEAT, parseLastEventId, RETRY_MS } from './event-source.js';
import { findAssetsDir, loadAssets, type Asset } from './static-assets.js';
import { guardRequest, SECURITY_HEADERS, sessionCookie, SessionBook } from './web-guard.js';

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const IDLE_SOCKET_TIMEOUT_MS = 120_000;
const HEARTBEAT_MS = 15_000;
const VIEW_REFRESH_MS = 5_000;
const VIEW_SETTLE_MS = [150, 1_000];
// Event streams open at once (each tab holds one); more are refused rather than piling up.
const MAX_STREAMS = 32;
// A stream whose reader has fallen this far behind is dropped (the browser reconnects and replays).
const MAX_PENDING_STREAM_BYTES = 4 * 1024 * 1024;
// Dashboard bodies are small: guidance (≤ 2 000 chars) and edit flags.
const MAX_ACTION_BODY_BYTES = 64 * 1024;

const LOGIN_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/">' +
  // Named here too: a page without an icon link makes the browser ask for /favicon.ico.
  '<link rel="icon" href="/favicon.svg">' +
  '<title>goald</title></head><body><a href="/">Open the goald dashboard</a></body></html>\n';

/** The actions a dashboard may send, each the control socket's route of the same name. */
const ACTIONS = new Set(['pause', 'resume', 'stop', 'say', 'edit']);
// The dashboard edits limits only; checks and the evaluator (commands goald runs, a model it calls) are
// changed with `goald edit` in a terminal.
const WEB_EDIT_FLAGS = new Set(['maxTurns', 'tokenBudget', 'turnTimeout', 'costBudget', 'wallClock', 'progress']);

export interface WebDashboardOptions {
  host: GoalHost;
  /** 0: a free port the system picks. */
  port: number;
  log: (line: string) => void;
  /** Where the built page is; default: found beside the running code (static-assets.ts). */
  assetsDir?: string | null;
}

export interface WebDashboard {
  readonly port: number;
  /** A new one-time link: `http://127.0.0.1:<port>/login?token=…`. */
  link(): string;
  /** Stops serving: ends event streams, closes connections. */
  close(): Promise<void>;
}

interface DashboardState {
  host: GoalHost;
  port: number;
  book: SessionBook;
  assets: Map<string, Asset>;
  streams: Set<ServerResponse>;
  log: (line: string) => void;
}

/** Starts the dashboard's server on 127.0.0.1:`port`. */
export async function startWebDashboard(options: WebDashboardOptions): Promise<WebDashboard> {
  const assetsDir = options.assetsDir === undefined ? findAssetsDir() : options.assetsDir;
  const assets = assetsDir === null ? new Map<string, Asset>() : await loadAssets(assetsDir);
  const state: DashboardState = { host: options.host, port: 0, book: new SessionBook(0), assets, streams: new Set(), log: options.log };
  const server = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    void handleRequest(req, res, state);
  });
  server.timeout = IDLE_SOCKET_TIMEOUT_MS;
  state.port = await listenOnLoopback(server, options.port);
  // The session cookie's name holds the port, known only now; no token was issued before.
  state.book = new SessionBook(state.port);
  server.on('error', (error) => state.log(`dashboard server error: ${error.message}`));
  server.on('clientError', (_error, socket) => socket.destroy());

  let closed: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const stream of state.streams) stream.end();
    state.streams.clear();
    server.closeAllConnections();
    await stopped;
  };
  return {
    port: state.port,
    link: () => `http://127.0.0.1:${state.port}/login?token=${state.book.issueToken()}`,
    close: () => (closed ??= close()),
  };
}

/** Listens on 127.0.0.1 only; resolves with the port (the one the system picked for 0). */
async function listenOnLoopback(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const hint = port === 0 ? 'try again' : 'pick another port with --port, or leave it out for a free one';
      reject(new GoaldError('conflict', `the dashboard cannot listen on 127.0.0.1:${port} (${error.code ?? error.message})`, hint, { cause: error }));
    };
    server.once('error', onError);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new GoaldError('internal', 'the dashboard server has no TCP address', 'see the daemon log');
  return address.port;
}

async function handleRequest(req: IncomingMessage, res: ServerResponse, state: DashboardState): Promise<void> {
  req.on('error', () => {});
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  const method = req.method ?? 'GET';
  try {
    const target = req.url ?? '';
    if (!target.startsWith('/')) throw new GoaldError('bad-request', 'the request target must be a path', 'open the link `goald ui` prints');
    const url = new URL(`http://dashboard${target}`);
    const decision = guardRequest({ method, path: url.pathname, query: url.searchParams, headers: req.headers }, state.port, state.book);
    if (decision.kind === 'login') {
      // The token leaves the address bar at once: the page lives at `/`, the session in the cookie. A meta
      // refresh rather than a redirect: navigating from this page is same-site, so the Strict cookie goes
      // along even when the link was opened from another site.
      res.writeHead(200, { 'Set-Cookie': sessionCookie(state.port, decision.session), 'Content-Type': 'text/html; charset=utf-8' });
      res.end(LOGIN_PAGE);
      return;
    }
    if (method === 'GET') await serveGet(req, res, url, state);
    else if (method === 'POST') await servePost(req, res, url.pathname, state);
    else {
      res.setHeader('Allow', 'GET, POST');
      sendJson(res, 405, toErrorEnvelope(new GoaldError('bad-request', `${method} is not allowed here`, 'the dashboard takes GET and POST')));
    }
  } catch (error) {
    sendFailure(res, error, `${method} ${req.url ?? '-'}`, state.log);
  }
}

// `/` is the page; `/favicon.ico` is what browsers ask for on their own (an address typed by hand, a JSON
// reply opened in a tab), so it answers with the page's icon rather than a 404 in the console.
const ASSET_ALIASES = new Map([
  ['/', '/index.html'],
  ['/favicon.ico', '/favicon.svg'],
]);

const GET_ROUTES = [
  { method: 'GET', pattern: '/api/goals', name: 'goals' },
  { method: 'GET', pattern: '/api/goals/:id', name: 'goal' },
  { method: 'GET', pattern: '/api/goals/:id/turns/:turn', name: 'turn' },
  { method: 'GET', pattern: '/api/goals/:id/events', name: 'events' },
] as const;

async function serveGet(req: IncomingMessage, res: ServerResponse, url: URL, state: DashboardState): Promise<void> {
  const asset = state.assets.get(ASSET_ALIASES.get(url.pathname) ?? url.pathname);
  if (asset !== undefined) {
    res.writeHead(200, { 'Content-Type': asset.contentType, 'Content-Length': asset.body.length });
    res.end(asset.body);
    return;
  }
  if (url.pathname === '/') {
    throw new GoaldError('internal', "the dashboard's page is missing from this goald (dist/ui)", 'reinstall goald, or run `npm run build` in a checkout');
  }
  const match = matchRoute(GET_ROUTES, 'GET', url.pathname);
  if (match.kind !== 'found') throw new GoaldError('not-found', `no dashboard resource ${url.pathname}`, 'open the link `goald ui` prints');
  const id = match.params.id ?? '';
  switch (match.route.name) {
    case 'goals':
      sendJson(res, 200, await listDashboard(state.host));
      return;
    case 'goal':
      sendJson(res, 200, await goalDashboard(state.host, id));
      return;
    case 'turn': {
      const turn = Number(match.params.turn);
      if (!Number.isInteger(turn) || turn < 0) throw new GoaldError('bad-request', 'a turn is a whole number of 0 or more', 'pick a turn from the timeline');
      sendJson(res, 200, await turnDashboard(state.host, id, turn));
      return;
    }
    case 'events':
      await serveEvents(req, res, id, state);
      return;
  }
}

/** An action: the control socket's route handler for the same action, with the same body. */
async function servePost(req: IncomingMessage, res: ServerResponse, pathname: string, state: DashboardState): Promise<void> {
  const match = matchRoute([{ method: 'POST', pattern: '/api/goals/:id/:action' }], 'POST', pathname);
  const action = match.kind === 'found' ? (match.params.action ?? '') : '';
  if (match.kind !== 'found' || !ACTIONS.has(action)) {
    throw new GoaldError('not-found', `no dashboard action ${pathname}`, 'actions: pause, resume, stop, say, edit');
  }
  const length = Number(req.headers['content-length']);
  const body = await readBody(req, Number.isFinite(length) ? length : null, MAX_ACTION_BODY_BYTES);
  if (body.kind === 'aborted') {
    res.destroy();
    return;
  }
  if (body.kind === 'too-large') throw new GoaldError('bad-request', `an action's body is over ${MAX_ACTION_BODY_BYTES} bytes`, 'send less');
  const parsed = parseJsonBody(body.bytes);
  if (action === 'edit') refuseNonLimitEdit(parsed);
  const socketRoute = matchRoute(ROUTES, 'POST', `/v1/goals/${encodeURIComponent(match.params.id ?? '')}/${action}`);
  if (socketRoute.kind !== 'found') throw new GoaldError('internal', `the control socket has no ${action} route`, 'see the daemon log');
  const reply = await socketRoute.route.handler({ host: state.host, params: socketRoute.params, query: new URLSearchParams(), body: parsed });
  if (reply.kind !== 'json') throw new GoaldError('internal', `the ${action} route did not answer with JSON`, 'see the daemon log');
  sendJson(res, reply.status, reply.body);
}

/** The dashboard's edit changes limits only; anything else is refused before the edit route sees it. */
function refuseNonLimitEdit(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  // A held goal.config.json edit may change the checks: applying it is for `goald edit --apply-config`.
  if ('applyConfig' in body && body.applyConfig === true) {
    throw new GoaldError('forbidden', 'the dashboard does not apply held goal.config.json edits', 'review it and run `goald edit <goal> --apply-config` in a terminal');
  }
  if (!('flags' in body)) return;
  const flags = body.flags;
  if (flags === null || typeof flags !== 'object') return;
  const others = Object.keys(flags).filter((key) => !WEB_EDIT_FLAGS.has(key));
  if (others.length > 0) {
    throw new GoaldError('forbidden', `the dashboard edits limits only, not ${others.join(', ')}`, 'change checks or the evaluator with `goald edit` in a terminal');
  }
}

/** A goal's events as SSE: what the client missed (Last-Event-ID), then live ones, each followed by the view. */
async function serveEvents(req: IncomingMessage, res: ServerResponse, ref: string, state: DashboardState): Promise<void> {
  if (state.streams.size >= MAX_STREAMS) {
    throw new GoaldError('conflict', `the dashboard already has ${MAX_STREAMS} event streams open`, 'close some dashboard tabs');
  }
  const goal = await state.host.getGoal(ref);
  const loops = goal.loopId === null ? [] : await state.host.listLoops();
  const subscription = await state.host.subscribe(goal.id);
  const events: ProgressEvent[] = [...subscription.past];
  // Listening starts at once, so nothing emitted while the stream opens is lost; events held until then.
  let live = false;
  const release = subscription.finished
    ? () => undefined
    : subscription.follow((event) => {
        events.push(event);
        if (!live) return;
        write(formatMessage({ id: events.length, event: 'progress', data: event }));
        void sendView();
        settleView();
      });
  if (res.destroyed || req.socket.destroyed) {
    release();
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8' });
  res.setTimeout(0);
  req.socket.setTimeout(0);
  req.socket.setNoDelay(true);
  const heartbeat = setInterval(() => write(HEARTBEAT), HEARTBEAT_MS);
  // Active time moves on while nothing happens.
  const refresh = subscription.finished ? null : setInterval(() => void sendView(), VIEW_REFRESH_MS);
  let settle: NodeJS.Timeout[] = [];
  state.streams.add(res);
  res.once('close', () => {
    release();
    clearInterval(heartbeat);
    if (refresh !== null) clearInterval(refresh);
    for (const timer of settle) clearTimeout(timer);
    state.streams.delete(res);
  });

  function write(chunk: string): void {
    if (res.destroyed || res.writableEnded) return;
    res.write(chunk);
    if (res.writableLength > MAX_PENDING_STREAM_BYTES) res.destroy();
  }
  // Pause and resume are stored before they are announced, but a record can still change just after an
  // event (the next turn's start, a control call from another client): the view is made again shortly
  // after each event, and once more later for a loaded machine.
  function settleView(): void {
    for (const timer of settle) clearTimeout(timer);
    settle = VIEW_SETTLE_MS.map((ms) => setTimeout(() => void sendView(), ms));
  }
  // One view computation at a time; events that land meanwhile are folded into the next one.
  let computing = false;
  let again = false;
  async function sendView(): Promise<void> {
    if (computing) {
      again = true;
      return;
    }
    computing = true;
    try {
      do {
        again = false;
        const record = await state.host.getGoal(goal.id);
        write(formatMessage({ event: 'view', data: viewOf(record, events, loops) }));
      } while (again);
    } catch (error) {
      state.log(`dashboard view of ${goal.id}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      computing = false;
    }
  }

  write(`retry: ${RETRY_MS}\n\n`);
  for (const { id, event } of eventsAfter(events, parseLastEventId(req.headers['last-event-id']))) {
    write(formatMessage({ id, event: 'progress', data: event }));
  }
  live = true;
  await sendView();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const payload = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(payload) });
  res.end(payload);
}

function sendFailure(res: ServerResponse, error: unknown, what: string, log: (line: string) => void): void {
  if (isGoaldError(error)) {
    sendJson(res, statusForCode(error.code), toErrorEnvelope(error));
    return;
  }
  log(`dashboard: internal error on ${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  sendJson(res, 500, toErrorEnvelope(new GoaldError('internal', 'the dashboard failed to handle the request', 'see the daemon log (GOALD_HOME/daemon.log)')));
}
