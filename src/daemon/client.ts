// The CLI's side of the control plane: typed calls over the daemon's Unix socket. A daemon that is not
// there is a `daemon-unreachable` GoaldError; an error the daemon sends comes back as the same GoaldError
// (code, message, hint) it was on the other side. Over 400 lines because it holds one typed method per
// socket route, each a few lines, so the whole control API reads in one file.

import type { IncomingMessage } from 'node:http';

import { assertTrustedSocket } from '../../state/home-trust.js';
import type { PruneResult } from '../../state/prune-goals.js';
import type { GoalRecord, GoalRollback, LoopRecord, SettingChange } from '../../state/types.js';
import { systemClock } from '../clock.js';
import { GoaldError, isGoaldError } from '../errors.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { parseErrorEnvelope } from './error-envelope.js';
import type { GoalFilter } from './resolve-goal.js';
import { arrayOf, isBoolean, isNumber, isOneOf, isRecord, isString, objectOf, withStringFields, type Check } from './reply-checks.js';
import { MAX_BODY_BYTES } from './request-body.js';
import { exchangeOverSocket } from './socket-exchange.js';
import { checkSocketPath } from './socket-path.js';
import type { RaceRecord } from '../race/race-record.js';
import type { ClusterHealth, CreateLoopRequest, EditGoalRequest, EditGoalResponse, GoalBranch, GoalHost, PruneRequest, StartGoalRequest, StartGoalResponse, StartRaceRequest } from './types.js';

// Generous for any control call (stopping a goal waits for its agent's SIGTERM→SIGKILL grace of 5 s),
// short enough that a hung daemon does not hang the CLI.
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
// Requests whose reply waits on git work in the user's repository (a worktree checked out, a tree restored,
// worktrees removed): each git call has a minute (GIT_TIMEOUT_MS), and a huge repository on a loaded
// machine takes several. Timing out sooner would report a failure for a start that is going ahead.
const DEFAULT_WORK_TIMEOUT_MS = 10 * 60_000;
// A daemon that is up answers /v1/ping in milliseconds.
const PING_TIMEOUT_MS = 2_000;
// waitForDaemon polls quickly at first (a daemon starts in well under a second), then backs off.
const FIRST_POLL_DELAY_MS = 10;
const MAX_POLL_DELAY_MS = 200;

const HINT_START = 'start it with `goald daemon`, or run the goal with --foreground';
const HINT_VERSIONS = 'the CLI and the daemon may be different versions: restart the daemon with `goald daemon stop`';

// A Unix socket has no TLS server name; saying so up front spares node's agent from computing one, which
// compiles its IPv6 regular expression (~4 ms of every CLI call's start-up, bench/daemon.bench.ts).
const NO_SERVERNAME = { servername: '' } as const;

export type PingResponse = { ok: true } & ReturnType<GoalHost['info']>;

export interface StreamEventsOptions {
  /** Default true: keep streaming live events until the goal finishes. False: past events only. */
  follow?: boolean;
  /** Aborting ends the stream; the promise then resolves with `ended: 'aborted'`. */
  signal?: AbortSignal;
  /** Called for each event in order; a throw stops the stream and rejects with that error. */
  onEvent(event: ProgressEvent): void;
}

export interface StreamEnd {
  /** `finished`: a goal.finished event arrived; `ended`: the daemon ended the stream without one; `aborted`: the signal fired. */
  ended: 'finished' | 'ended' | 'aborted';
  events: number;
}

export interface DaemonClient {
  readonly socketPath: string;
  ping(): Promise<PingResponse>;
  listGoals(filter?: GoalFilter): Promise<GoalRecord[]>;
  /** listGoals, with a cluster daemon's Redis health beside the goals. */
  listGoalsWithHealth(filter?: GoalFilter): Promise<{ goals: GoalRecord[]; cluster?: ClusterHealth }>;
  /** Accepts an id or a unique prefix. */
  getGoal(id: string): Promise<GoalRecord>;
  startGoal(request: StartGoalRequest): Promise<StartGoalResponse>;
  pauseGoal(id: string, now?: boolean): Promise<GoalRecord>;
  resumeGoal(id: string): Promise<GoalRecord>;
  rollbackGoal(id: string, toTurn: number): Promise<{ goal: GoalRecord; rollback: GoalRollback }>;
  /** Where the goal's branch is in the repository at `dir` (a cluster goal's fetched there first). */
  goalBranch(id: string, dir: string): Promise<{ goal: GoalRecord; branch: GoalBranch }>;
  stopGoal(id: string): Promise<GoalRecord>;
  /** `goald say`: queues guidance for the goal's next turn. */
  guideGoal(id: string, text: string): Promise<{ goal: GoalRecord; pending: number }>;
  /** `goald edit`: changes a goal's contract, applies a held config edit, or reopens a budget failure. */
  editGoal(id: string, request: EditGoalRequest): Promise<EditGoalResponse>;
  /** Streams a goal's events (past, then live unless `follow: false`); resolves when the stream ends. */
  streamEvents(id: string, options: StreamEventsOptions): Promise<StreamEnd>;
  /** A goal's past events in one request/response (no node:http; `goald watch` reads them every refresh). */
  pastEvents(id: string): Promise<ProgressEvent[]>;
  listLoops(): Promise<LoopRecord[]>;
  createLoop(request: CreateLoopRequest): Promise<LoopRecord>;
  deleteLoop(id: string): Promise<LoopRecord>;
  /** Fires a loop now. */
  runLoop(id: string): Promise<{ loop: LoopRecord; outcome: 'started' | 'waiting' | 'skipped' }>;
  /** Has the daemon read the loops declared in the goal.config.json of `dir`'s workspace. */
  syncLoops(dir: string): Promise<LoopRecord[]>;
  /** Deletes finished goals beyond the limits (`goald prune`). */
  prune(request: PruneRequest): Promise<PruneResult>;
  /** Asks the daemon to shut down; resolves once it has accepted (it stops right after). */
  stopDaemon(): Promise<void>;
  /** Starts a race (`goald race`). */
  startRace(request: StartRaceRequest): Promise<RaceRecord>;
  /** A race by id or unique prefix. */
  getRace(id: string): Promise<RaceRecord>;
  /** `goald ui`: starts the daemon's dashboard if needed; its address with a fresh one-time token. */
  openDashboard(port?: number): Promise<{ url: string; port: number }>;
}

export interface DaemonClientOptions {
  /** Per request, except event streams and work requests; default 30 s. */
  timeoutMs?: number;
  /** Per request that waits on git work (start, race, rollback, edit, prune, run loop); default 10 min. */
  workTimeoutMs?: number;
}

// Light checks (reply-checks.ts): the daemon is our own code, so a record needs only look like one.
const isGoal = withStringFields<GoalRecord>('id', 'status', 'workspace');
const isLoop = withStringFields<LoopRecord>('id', 'every', 'workspace');
const isRaceReply = objectOf({ race: withStringFields<RaceRecord>('id', 'status', 'repo') });
const isEvent = withStringFields<ProgressEvent>('type', 'id');
const isPing = objectOf({
  ok: isOneOf(true),
  pid: isNumber,
  version: isString,
  startedAt: isString,
  home: isString,
  goalsRunning: isNumber,
});
const isGoalReply = objectOf({ goal: isGoal });
const isGuideReply = objectOf({ goal: isGoal, pending: isNumber });
const isGoalsReply = objectOf({ goals: arrayOf(isGoal), cluster: (value: unknown): value is unknown => value === undefined || isRecord(value) });
const isClusterHealth = objectOf({ redis: isString, degraded: isBoolean, lastReadAt: (value: unknown): value is string | null => value === null || typeof value === 'string' });
const isRollbackReply = objectOf({ goal: isGoal, rollback: withStringFields<GoalRollback>('at', 'by', 'tree') });
const isLoopReply = objectOf({ loop: isLoop });
const isBranchReply = objectOf({ goal: isGoal, branch: withStringFields<GoalBranch>('repo', 'branch', 'base') });
const isLoopsReply = objectOf({ loops: arrayOf(isLoop) });
const isStartReply = objectOf({ goal: isGoal, queued: isBoolean, warnings: arrayOf(isString) });
const isRunLoopReply = objectOf({ loop: isLoop, outcome: isOneOf('started', 'waiting', 'skipped') });
const isOkReply = objectOf({ ok: isOneOf(true) });
const isDashboardReply = objectOf({ url: isString, port: isNumber });
const isStringOrNull: Check<string | null> = (value): value is string | null => value === null || typeof value === 'string';
const isPrunedGoal = objectOf({ id: isString, status: isOneOf('achieved', 'failed'), condition: isString, finishedAt: isStringOrNull, bytes: isNumber });
const isPruneReply = objectOf({ dryRun: isBoolean, goals: arrayOf(isPrunedGoal), bytes: isNumber, kept: isNumber });
const isEditReply = objectOf({ goal: isGoal, changes: arrayOf(withStringFields<SettingChange>('setting')), resumed: isBoolean });

/** A client for the daemon listening on `socketPath`. */
export function createDaemonClient(socketPath: string, options: DaemonClientOptions = {}): DaemonClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const workTimeoutMs = options.workTimeoutMs ?? DEFAULT_WORK_TIMEOUT_MS;
  const request = async <T>(limitMs: number, method: string, path: string, check: Check<T>, body?: unknown): Promise<T> => {
    const reply = await sendRequest(socketPath, method, path, body, limitMs);
    if (!check(reply)) {
      throw new GoaldError('internal', `the goald daemon sent an unexpected response to ${method} ${path.split('?')[0] ?? path}`, HINT_VERSIONS);
    }
    return reply;
  };
  const call = <T>(method: string, path: string, check: Check<T>, body?: unknown): Promise<T> => request(timeoutMs, method, path, check, body);
  const work = <T>(method: string, path: string, check: Check<T>, body?: unknown): Promise<T> => request(workTimeoutMs, method, path, check, body);
  const goalPath = (id: string, action = ''): string => `/v1/goals/${encodeURIComponent(id)}${action}`;
  const listGoalsWithHealth = async (filter: GoalFilter): Promise<{ goals: GoalRecord[]; cluster?: ClusterHealth }> => {
    const query = new URLSearchParams();
    if (filter.workspace !== undefined) query.set('workspace', filter.workspace);
    if (filter.status !== undefined && filter.status.length > 0) query.set('status', filter.status.join(','));
    if (filter.idPrefix !== undefined) query.set('idPrefix', filter.idPrefix);
    const search = query.toString() === '' ? '' : `?${query.toString()}`;
    const reply = await call('GET', `/v1/goals${search}`, isGoalsReply);
    return isClusterHealth(reply.cluster) ? { goals: reply.goals, cluster: reply.cluster } : { goals: reply.goals };
  };

  return {
    socketPath,
    ping: () => call('GET', '/v1/ping', isPing),
    listGoals: async (filter = {}) => (await listGoalsWithHealth(filter)).goals,
    listGoalsWithHealth: (filter = {}) => listGoalsWithHealth(filter),
    getGoal: async (id) => (await call('GET', goalPath(id), isGoalReply)).goal,
    startGoal: (startRequest) => work('POST', '/v1/goals', isStartReply, startRequest),
    pauseGoal: async (id, now = false) => (await call('POST', goalPath(id, '/pause'), isGoalReply, { now })).goal,
    resumeGoal: async (id) => (await call('POST', goalPath(id, '/resume'), isGoalReply)).goal,
    rollbackGoal: async (id, toTurn) => work('POST', goalPath(id, '/rollback'), isRollbackReply, { toTurn }),
    goalBranch: (id, dir) => work('POST', goalPath(id, '/branch'), isBranchReply, { dir }),
    stopGoal: async (id) => (await call('POST', goalPath(id, '/stop'), isGoalReply)).goal,
    guideGoal: (id, text) => call('POST', goalPath(id, '/say'), isGuideReply, { text }),
    editGoal: (id, editRequest) => work('POST', goalPath(id, '/edit'), isEditReply, editRequest),
    streamEvents: (id, streamOptions) =>
      streamNdjson(socketPath, `${goalPath(id, '/events')}?follow=${streamOptions.follow === false ? 0 : 1}`, streamOptions),
    // The route answers `follow=0` with NDJSON and ends: a request/response like the others.
    pastEvents: async (id) => parseEventLines(String(await sendRequest(socketPath, 'GET', `${goalPath(id, '/events')}?follow=0`, undefined, timeoutMs, 'ndjson'))),
    listLoops: async () => (await call('GET', '/v1/loops', isLoopsReply)).loops,
    createLoop: async (loopRequest) => (await call('POST', '/v1/loops', isLoopReply, loopRequest)).loop,
    deleteLoop: async (id) => (await call('DELETE', `/v1/loops/${encodeURIComponent(id)}`, isLoopReply)).loop,
    syncLoops: async (dir) => (await call('POST', '/v1/loops/sync', isLoopsReply, { dir })).loops,
    runLoop: (id) =>
      work(
        'POST',
        `/v1/loops/${encodeURIComponent(id)}/run`,
        isRunLoopReply,
      ),
    prune: (pruneRequest) => work('POST', '/v1/prune', isPruneReply, pruneRequest),
    stopDaemon: async () => {
      await call('POST', '/v1/daemon/stop', isOkReply);
    },
    startRace: async (raceRequest) => (await work('POST', '/v1/races', isRaceReply, raceRequest)).race,
    getRace: async (id) => (await call('GET', `/v1/races/${encodeURIComponent(id)}`, isRaceReply)).race,
    openDashboard: (port = 0) => call('POST', '/v1/ui', isDashboardReply, { port }),
  };
}

/** Polls /v1/ping until the daemon answers; throws `daemon-unreachable` after `timeoutMs`. */
export async function waitForDaemon(socketPath: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<PingResponse> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = FIRST_POLL_DELAY_MS;
  let lastError: GoaldError | null = null;
  for (;;) {
    options.signal?.throwIfAborted();
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    try {
      return await createDaemonClient(socketPath, { timeoutMs: Math.min(remaining, PING_TIMEOUT_MS) }).ping();
    } catch (error) {
      // Not there yet (or still shutting down): poll again. Anything else (a bad path) will not fix itself.
      if (!isGoaldError(error) || error.code !== 'daemon-unreachable') throw error;
      lastError = error;
    }
    const pause = Math.min(delay, deadline - Date.now());
    if (pause > 0) await systemClock.sleep(pause, options.signal);
    delay = Math.min(delay * 2, MAX_POLL_DELAY_MS);
  }
  throw new GoaldError(
    'daemon-unreachable',
    `the goald daemon did not answer on ${socketPath} within ${options.timeoutMs} ms`,
    'see GOALD_HOME/daemon.log for why it did not start',
    { cause: lastError },
  );
}

/**
 * Whether a daemon answers /v1/ping on `socketPath`. False only when nothing answers; a daemon that answers
 * with an error is still alive (starting another there would conflict). A bad path throws.
 */
export async function isDaemonAlive(socketPath: string): Promise<boolean> {
  try {
    await createDaemonClient(socketPath, { timeoutMs: PING_TIMEOUT_MS }).ping();
    return true;
  } catch (error) {
    if (isGoaldError(error) && error.code === 'daemon-unreachable') return false;
    if (isGoaldError(error) && error.code !== 'config') return true;
    throw error;
  }
}

/**
 * One request/response; resolves with the JSON reply (`ndjson`: the reply's text), rejects with the daemon's
 * GoaldError, or `daemon-unreachable`.
 */
function sendRequest(socketPath: string, method: string, path: string, body: unknown, timeoutMs: number, accept: 'json' | 'ndjson' = 'json'): Promise<unknown> {
  checkSocketPath(socketPath);
  // Nothing is sent to a socket another user owns or could have put there (a config GoaldError, exit 2).
  assertTrustedSocket(socketPath);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined && Buffer.byteLength(payload) > MAX_BODY_BYTES) {
    return Promise.reject(
      new GoaldError('bad-request', `the request is ${Buffer.byteLength(payload)} bytes; the daemon accepts at most ${MAX_BODY_BYTES}`, 'shorten the condition or the checks'),
    );
  }
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
  // One connection per call, closed after it, so a CLI process never waits on keep-alive.
  return exchangeOverSocket(socketPath, { method, path, headers, body: payload, timeoutMs, onTimeout }).then(
    (reply) => (accept === 'ndjson' && reply.status === 200 ? reply.body : decodeReply(reply.status, reply.body)),
    (error: unknown) => {
      throw connectionError(error, socketPath);
    },
  );
}

/** The body of a JSON reply, or the GoaldError an error reply carries. */
function decodeReply(status: number, text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GoaldError('internal', `the goald daemon sent a reply that is not JSON (HTTP ${status})`, HINT_VERSIONS);
  }
  if (status >= 200 && status < 300) return body;
  const error = parseErrorEnvelope(body);
  if (error !== null) throw error;
  throw new GoaldError('internal', `the goald daemon answered HTTP ${status} without an error envelope`, HINT_VERSIONS);
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
    res.once('close', () => {
      if (!res.complete) reject(new Error('the connection closed mid-reply'));
    });
  });
}

/** Maps a socket-level failure to `daemon-unreachable`; GoaldErrors pass through. */
function connectionError(error: unknown, socketPath: string): GoaldError {
  if (isGoaldError(error)) return error;
  const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : undefined;
  if (code === 'ENOENT' || code === 'ECONNREFUSED') {
    return new GoaldError('daemon-unreachable', `the goald daemon is not running (no socket at ${socketPath})`, HINT_START, { cause: error });
  }
  if (code === 'EACCES') {
    return new GoaldError('daemon-unreachable', `permission denied connecting to ${socketPath}`, 'the socket belongs to another user: set GOALD_SOCKET or GOALD_HOME to your own', { cause: error });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new GoaldError('daemon-unreachable', `the connection to the goald daemon at ${socketPath} failed: ${reason}`, HINT_START, { cause: error });
}

/** GETs an NDJSON stream, calling `onEvent` per line, until the daemon ends it or the signal aborts. */
function streamNdjson(socketPath: string, path: string, options: StreamEventsOptions): Promise<StreamEnd> {
  checkSocketPath(socketPath);
  assertTrustedSocket(socketPath);
  const { signal, onEvent } = options;
  if (signal?.aborted === true) return Promise.resolve({ ended: 'aborted', events: 0 });
  return new Promise((resolve, reject) => {
    let settled = false;
    let events = 0;
    let sawFinished = false;
    // node:http loaded here only: the request/response calls do without it (socket-exchange.ts).
    const { request } = process.getBuiltinModule('node:http');
    const req = request({ socketPath, path, method: 'GET', headers: { Accept: 'application/x-ndjson' }, agent: false, ...NO_SERVERNAME });

    const settle = (outcome: { ok: StreamEnd } | { error: unknown }): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if ('ok' in outcome) resolve(outcome.ok);
      else reject(outcome.error);
      req.destroy();
    };
    const onAbort = (): void => settle({ ok: { ended: 'aborted', events } });
    signal?.addEventListener('abort', onAbort, { once: true });

    const handleLine = (line: string): void => {
      if (settled || line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        settle({ error: new GoaldError('internal', 'the goald daemon sent an event line that is not JSON', HINT_VERSIONS) });
        return;
      }
      if (!isEvent(value)) {
        settle({ error: new GoaldError('internal', 'the goald daemon sent an event without a type', HINT_VERSIONS) });
        return;
      }
      events += 1;
      if (value.type === 'goal.finished') sawFinished = true;
      try {
        onEvent(value);
      } catch (error) {
        settle({ error });
      }
    };

    req.once('error', (error) => settle({ error: connectionError(error, socketPath) }));
    req.once('response', (res) => {
      if (res.statusCode !== 200) {
        readAll(res)
          .then((text) => settle({ error: replyError(res.statusCode ?? 0, text) }))
          .catch((error: unknown) => settle({ error: connectionError(error, socketPath) }));
        return;
      }
      res.setEncoding('utf8');
      let pending = '';
      res.on('data', (chunk: string) => {
        pending += chunk;
        let newline = pending.indexOf('\n');
        while (newline >= 0 && !settled) {
          handleLine(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
          newline = pending.indexOf('\n');
        }
      });
      res.once('end', () => {
        handleLine(pending);
        settle({ ok: { ended: sawFinished ? 'finished' : 'ended', events } });
      });
      res.once('error', (error) => settle({ error: connectionError(error, socketPath) }));
      res.once('close', () => {
        if (!res.complete) settle({ error: connectionError(new Error('the daemon closed the event stream mid-way'), socketPath) });
      });
    });
    req.end();
  });
}

/** The events of a whole NDJSON reply, each checked as streamNdjson checks them. */
function parseEventLines(text: string): ProgressEvent[] {
  const events: ProgressEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new GoaldError('internal', 'the goald daemon sent an event line that is not JSON', HINT_VERSIONS);
    }
    if (!isEvent(value)) throw new GoaldError('internal', 'the goald daemon sent an event without a type', HINT_VERSIONS);
    events.push(value);
  }
  return events;
}

/** The GoaldError carried by a non-200 reply to a stream request. */
function replyError(status: number, text: string): GoaldError {
  try {
    decodeReply(status, text);
  } catch (error) {
    if (isGoaldError(error)) return error;
  }
  return new GoaldError('internal', `the goald daemon answered HTTP ${status} to an event stream request`, HINT_VERSIONS);
}
