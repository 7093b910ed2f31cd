// The daemon's control plane: HTTP/1.1 + JSON on a Unix socket only its user can open (0600 in a 0700
// directory). Routing and validation live in routes.ts; this file owns the socket, HTTP framing, error
// envelopes, NDJSON streams and shutdown. Every failure is per request: nothing a client sends can take
// the server down or touch another request.

import { createServer, STATUS_CODES } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { chmod, stat, unlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

import { monotonicMs } from '../clock.js';
import { GoaldError, isGoaldError } from '../errors.js';
import { closeDashboard } from '../ui/dashboard-launcher.js';
import { statusForCode, toErrorEnvelope } from './error-envelope.js';
import { pipeEvents } from './event-stream.js';
import type { EventPipe, EventSink } from './event-stream.js';
import { clearStaleSocket, ensurePrivateSocketDir } from './prepare-socket.js';
import { MAX_BODY_BYTES, parseJsonBody, readBody } from './request-body.js';
import { describeRoutes, matchRoute } from './router.js';
import { ROUTES } from './routes.js';
import type { RouteReply } from './routes.js';
import { checkSocketPath } from './socket-path.js';
import type { GoalHost } from './types.js';

// A client has this long to send its headers, and this long for the whole request (headers and body);
// both bound slow or stuck clients. Responses are not limited by these, so event streams are unaffected.
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
// A connection silent this long is dropped; event streams switch it off (a goal can be quiet for hours).
const IDLE_SOCKET_TIMEOUT_MS = 120_000;
// After close() stops accepting, requests in flight get this long to finish before connections are cut.
const DEFAULT_CLOSE_GRACE_MS = 2_000;
// The socket is created under this umask so it is born 0600: no window where others could connect.
const SOCKET_UMASK = 0o177;
const SOCKET_MODE = 0o600;
// Request log lines stay short however long a path a client sends.
const MAX_LOGGED_PATH_CHARS = 120;

export interface ControlServerOptions {
  socketPath: string;
  host: GoalHost;
  /** One line per request (method, path, status, duration) and per internal error; never bodies. */
  log?: (line: string) => void;
  /** How long close() lets requests in flight finish before cutting connections; default 2 s. */
  closeGraceMs?: number;
}

export interface ControlServer {
  readonly socketPath: string;
  /** Stops accepting, ends open event streams, waits for requests in flight (briefly), removes the socket. */
  close(): Promise<void>;
}

interface ServerState {
  host: GoalHost;
  log: (line: string) => void;
  streams: Set<EventPipe>;
  closing: boolean;
}

/** Starts the control plane on `socketPath`; refuses (conflict) when another daemon answers there. */
export async function createControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const { socketPath } = options;
  checkSocketPath(socketPath);
  await ensurePrivateSocketDir(socketPath);
  await clearStaleSocket(socketPath);

  const state: ServerState = { host: options.host, log: options.log ?? (() => {}), streams: new Set(), closing: false };
  const server = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    void handleRequest(req, res, state);
  });
  server.timeout = IDLE_SOCKET_TIMEOUT_MS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, state.log));

  await listenPrivately(server, socketPath);
  const socketInode = (await stat(socketPath)).ino;
  // After listening, a server error (e.g. EMFILE on accept) is logged, never thrown.
  server.on('error', (error) => state.log(`server error: ${error.message}`));

  let closed: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    state.closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const pipe of state.streams) pipe.end();
    state.streams.clear();
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS);
    await stopped;
    clearTimeout(grace);
    await closeDashboard(state.host);
    await removeSocketFile(socketPath, socketInode);
  };
  return {
    socketPath,
    close: () => (closed ??= close()),
  };
}

/** Listens on `socketPath` with the socket created 0600 (umask around the synchronous bind, then verified). */
async function listenPrivately(server: Server, socketPath: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      if (error.code === 'EADDRINUSE') {
        // Another daemon bound the path between our stale check and this listen.
        reject(new GoaldError('conflict', `another goald daemon is already listening on ${socketPath}`, 'stop it with `goald daemon stop`', { cause: error }));
      } else {
        reject(new GoaldError('config', `cannot listen on ${socketPath}: ${error.message}`, 'set GOALD_SOCKET to a path in a directory you own', { cause: error }));
      }
    };
    server.once('error', onError);
    // net binds a Unix socket synchronously inside listen(), so the umask only needs to cover this call;
    // restoring it at once keeps every other file the process creates unaffected.
    const previous = process.umask(SOCKET_UMASK);
    try {
      server.listen({ path: socketPath, exclusive: true }, () => {
        server.off('error', onError);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
  const mode = (await stat(socketPath)).mode & 0o777;
  if (mode !== SOCKET_MODE) await chmod(socketPath, SOCKET_MODE);
}

/** Unlinks the socket file if it is still the one this server created. */
async function removeSocketFile(socketPath: string, inode: number): Promise<void> {
  try {
    if ((await stat(socketPath)).ino !== inode) return;
    await unlink(socketPath);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error;
  }
}

/** Serves one request; every failure becomes an error response for this request only. */
async function handleRequest(req: IncomingMessage, res: ServerResponse, state: ServerState): Promise<void> {
  const startedAt = monotonicMs();
  const method = req.method ?? 'GET';
  let loggedPath = '-';
  // An aborted request must not emit an unhandled 'error'.
  req.on('error', () => {});
  res.once('close', () => {
    const ms = Math.round(monotonicMs() - startedAt);
    const aborted = res.writableFinished ? '' : ' (closed early)';
    state.log(`${method} ${loggedPath} ${res.statusCode}${aborted} ${ms}ms`);
  });

  try {
    if (state.closing) {
      throw new GoaldError('daemon-unreachable', 'the goald daemon is shutting down', 'try again once it has restarted');
    }
    const url = parseRequestUrl(req.url);
    loggedPath = url.pathname.length > MAX_LOGGED_PATH_CHARS ? `${url.pathname.slice(0, MAX_LOGGED_PATH_CHARS)}...` : url.pathname;

    const match = matchRoute(ROUTES, method, url.pathname);
    if (match.kind === 'none') {
      throw new GoaldError('not-found', `no route ${method} ${loggedPath}`, `routes: ${describeRoutes(ROUTES)}`);
    }
    if (match.kind === 'wrong-method') {
      res.setHeader('Allow', match.allow.join(', '));
      sendError(res, 405, new GoaldError('bad-request', `${method} is not allowed on ${loggedPath}`, `use ${match.allow.join(' or ')}`));
      return;
    }

    const body = await readBody(req, declaredLength(req));
    if (body.kind === 'aborted') {
      res.destroy();
      return;
    }
    if (body.kind === 'too-large') {
      // Stop here: the rest of the body is never read, and the connection is closed after the answer.
      res.setHeader('Connection', 'close');
      sendError(res, 413, new GoaldError('bad-request', `the request body is over ${MAX_BODY_BYTES} bytes`, 'send less; the daemon accepts bodies up to 1 MiB'));
      return;
    }
    const parsedBody = method === 'POST' ? parseJsonBody(body.bytes) : undefined;

    const reply = await match.route.handler({ host: state.host, params: match.params, query: url.searchParams, body: parsedBody, log: state.log });
    sendReply(req, res, reply, state);
  } catch (error) {
    sendFailure(res, error, `${method} ${loggedPath}`, state.log);
  }
}

/** The request target as a URL; only origin-form targets (`/v1/...`) are served. */
function parseRequestUrl(target: string | undefined): URL {
  if (target === undefined || !target.startsWith('/')) {
    throw new GoaldError('bad-request', 'the request target must be a path such as /v1/ping', `routes: ${describeRoutes(ROUTES)}`);
  }
  try {
    return new URL(`http://goald${target}`);
  } catch {
    throw new GoaldError('bad-request', 'the request target is not a valid path', `routes: ${describeRoutes(ROUTES)}`);
  }
}

function declaredLength(req: IncomingMessage): number | null {
  const header = req.headers['content-length'];
  if (header === undefined) return null;
  const length = Number(header);
  return Number.isFinite(length) ? length : null;
}

function sendReply(req: IncomingMessage, res: ServerResponse, reply: RouteReply, state: ServerState): void {
  if (reply.kind === 'json') {
    const { afterResponse } = reply;
    if (afterResponse !== undefined) {
      res.once('finish', () => {
        afterResponse().catch((error: unknown) => state.log(`after ${req.method ?? '?'} ${req.url ?? '?'}: ${describeError(error)}`));
      });
    }
    sendJson(res, reply.status, reply.body);
    return;
  }
  // The client may have gone while the host was subscribing: following now would leak a listener.
  if (res.destroyed || req.socket.destroyed) return;
  res.writeHead(200, {
    'Content-Type': 'application/x-ndjson; charset=utf-8',
    'Cache-Control': 'no-store',
    // A stream is a one-off: closing its connection afterwards avoids reusing a socket whose timeout is off.
    Connection: 'close',
  });
  res.setTimeout(0);
  res.flushHeaders();
  const sink: EventSink = {
    write: (chunk) => {
      if (!res.destroyed && !res.writableEnded) res.write(chunk);
    },
    end: () => res.end(),
    destroy: () => res.destroy(),
    get pendingBytes() {
      return res.writableLength;
    },
  };
  const pipe = pipeEvents(reply.subscription, reply.follow, sink);
  if (pipe.done) return;
  state.streams.add(pipe);
  res.once('close', () => {
    pipe.detach();
    state.streams.delete(pipe);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const payload = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
  });
  res.end(payload);
}

function sendError(res: ServerResponse, status: number, error: GoaldError): void {
  sendJson(res, status, toErrorEnvelope(error));
}

/** GoaldErrors keep their code, message and hint; anything else is logged and answered as a generic 500. */
function sendFailure(res: ServerResponse, error: unknown, what: string, log: (line: string) => void): void {
  if (isGoaldError(error)) {
    sendError(res, statusForCode(error.code), error);
    return;
  }
  log(`internal error on ${what}: ${describeError(error)}`);
  sendError(res, 500, new GoaldError('internal', 'the goald daemon failed to handle the request', 'see the daemon log (GOALD_HOME/daemon.log) for details'));
}

/** Answers bytes that are not a valid HTTP request (or arrive too slowly) and closes the connection. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, log: (line: string) => void): void {
  // Once a response has started on this connection, another status line would corrupt it.
  const untouched = socket instanceof Socket ? socket.bytesWritten === 0 : true;
  if (error.code === 'ECONNRESET' || !socket.writable || !untouched) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const payload = `${JSON.stringify(
    toErrorEnvelope(new GoaldError('bad-request', `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`, `routes: ${describeRoutes(ROUTES)}`)),
  )}\n`;
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'Connection: close',
  ].join('\r\n');
  // end() only half-closes; a client that never closes its side must not keep the socket open.
  socket.end(`${head}\r\n\r\n${payload}`, () => socket.destroy());
  log(`- - ${status} (${error.code ?? 'client error'})`);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}
