import { createServer } from 'node:http';
import type { RequestListener } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import path from 'node:path';

import { describe, expect, onTestFinished, test } from 'vitest';

import { createDaemonClient, isDaemonAlive, waitForDaemon } from '../../src/daemon/client.js';
import { createControlServer } from '../../src/daemon/server.js';
import type { StartGoalRequest } from '../../src/daemon/types.js';
import { GoaldError } from '../../src/errors.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';
import { FakeGoalHost } from '../helpers/fake-goal-host.js';
import { leaveStaleSocket, shortTempDir, startTestDaemon } from './support.js';

function startRequest(overrides: Partial<StartGoalRequest> = {}): StartGoalRequest {
  return { condition: 'all tests pass', dir: '/tmp/ws', flags: {}, env: {}, queue: true, ...overrides };
}

/** A plain HTTP server on a Unix socket that answers with `listener`, for replies the real server never sends. */
async function startScriptedServer(listener: RequestListener): Promise<string> {
  const dir = await shortTempDir();
  const socketPath = path.join(dir, 's.sock');
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return socketPath;
}

describe('every route through the real client', () => {
  test('ping reports the host facts', async () => {
    const { client } = await startTestDaemon();
    await expect(client.ping()).resolves.toEqual({
      ok: true,
      pid: process.pid,
      version: '0.0.0-test',
      startedAt: '2026-01-01T00:00:00.000Z',
      home: '/tmp/goald-test-home',
      goalsRunning: 0,
    });
  });

  test('start, list, get, pause, resume, stop', async () => {
    const { client, host } = await startTestDaemon();
    const request = startRequest({
      flags: { agent: './agent.sh', check: ['npm test', 'npm run lint'], maxTurns: '5', allowSameModel: true },
      env: { GOALD_TOKEN_BUDGET: '1000', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' },
    });
    const started = await client.startGoal(request);
    expect(started).toMatchObject({ queued: false, warnings: [], goal: { condition: 'all tests pass', workspace: '/tmp/ws', status: 'active' } });
    // The host got exactly what was sent.
    expect(host.startRequests).toEqual([request]);

    const queued = await client.startGoal(startRequest({ condition: 'second' }));
    expect(queued).toMatchObject({ queued: true, warnings: ['queued behind the active goal'], goal: { phase: 'queued' } });
    await expect(client.startGoal(startRequest({ queue: false }))).rejects.toMatchObject({ code: 'conflict' });

    const id = started.goal.id;
    expect((await client.listGoals()).map((goal) => goal.id)).toEqual([id, queued.goal.id]);
    expect(await client.listGoals({ workspace: '/elsewhere' })).toEqual([]);
    expect(await client.listGoals({ status: ['paused'] })).toEqual([]);
    await expect(client.getGoal(id)).resolves.toMatchObject({ id, status: 'active' });

    await expect(client.pauseGoal(id, true)).resolves.toMatchObject({ id, status: 'paused', phase: 'suspended' });
    await expect(client.resumeGoal(id)).resolves.toMatchObject({ id, status: 'active' });
    await expect(client.pauseGoal(id)).resolves.toMatchObject({ phase: 'pausing' });
    await expect(client.resumeGoal(id)).resolves.toMatchObject({ status: 'active' });
    await expect(client.stopGoal(id)).resolves.toMatchObject({ id, status: 'failed', reason: 'stopped' });
    await expect(client.resumeGoal(id)).rejects.toMatchObject({ code: 'conflict' });
  });

  test('errors come back as the GoaldError the host threw', async () => {
    const { client, host } = await startTestDaemon();
    host.addGoal({ id: 'gab1' });
    host.addGoal({ id: 'gab2' });
    const error = await client.getGoal('gab').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GoaldError);
    expect(error).toMatchObject({ code: 'ambiguous', message: 'gab matches 2 goals', hint: 'use more characters of the id', exitCode: 2 });
    await expect(client.getGoal('nope')).rejects.toMatchObject({ code: 'not-found' });
    host.addGoal({ id: 'gxyz9' });
    await expect(client.getGoal('gx')).resolves.toMatchObject({ id: 'gxyz9' });
    await expect(client.startGoal(startRequest({ env: { OPENAI_API_KEY: 'sk-1234567890abcdef' } }))).rejects.toMatchObject({
      code: 'bad-request',
      message: 'env.OPENAI_API_KEY: secrets are not accepted over the socket',
    });
    // Ids are sent encoded: a slash cannot reach another route.
    await expect(client.getGoal('g1/pause')).rejects.toMatchObject({ code: 'bad-request' });
  });

  test('events: streamEvents delivers past and live events in order', async () => {
    const { client, host } = await startTestDaemon();
    const { goal } = await client.startGoal(startRequest());
    const received: ProgressEvent[] = [];
    const streaming = client.streamEvents(goal.id, {
      onEvent: (event) => {
        received.push(event);
        if (event.type === 'goal.started') host.emit({ type: 'turn.started', id: goal.id, turn: 1, maxTurns: 20 });
        if (event.type === 'turn.started') host.finish(goal.id, 'achieved');
      },
    });
    await expect(streaming).resolves.toEqual({ ended: 'finished', events: 3 });
    expect(received.map((event) => event.type)).toEqual(['goal.started', 'turn.started', 'goal.finished']);
  });

  test('events: pastEvents reads what streamEvents without following delivers, in one reply; an unknown goal rejects', async () => {
    const { client, host } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    host.emit({ type: 'goal.resumed', id: 'g1' });
    host.emit({ type: 'turn.started', id: 'g1', turn: 1, maxTurns: 20 });
    const streamed: ProgressEvent[] = [];
    await client.streamEvents('g1', { follow: false, onEvent: (event) => streamed.push(event) });
    expect(streamed.map((event) => event.type)).toEqual(['goal.resumed', 'turn.started']);
    await expect(client.pastEvents('g1')).resolves.toEqual(streamed);
    await expect(client.pastEvents('g404')).rejects.toMatchObject({ code: 'not-found' });
  });

  test('events: an onEvent that throws stops the stream with its error', async () => {
    const { client, host } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    host.emit({ type: 'goal.resumed', id: 'g1' });
    const boom = new Error('renderer failed');
    await expect(client.streamEvents('g1', { onEvent: () => { throw boom; } })).rejects.toBe(boom);
    await host.whenListenerCount('g1', 0);
  });

  test('events: an already aborted signal never connects; an unknown goal rejects', async () => {
    const { client } = await startTestDaemon();
    await expect(client.streamEvents('g1', { signal: AbortSignal.abort(), onEvent: () => {} })).resolves.toEqual({ ended: 'aborted', events: 0 });
    await expect(client.streamEvents('g404', { onEvent: () => {} })).rejects.toMatchObject({ code: 'not-found' });
  });

  test('loops: create, list, delete', async () => {
    const { client, host } = await startTestDaemon();
    const loop = await client.createLoop({ ...startRequest({ flags: { check: ['npm test'] } }), every: '30m', catchUp: 'skip' });
    expect(loop).toMatchObject({ every: '30m', workspace: '/tmp/ws', catchUp: 'skip', options: { check: ['npm test'] } });
    expect(host.loopRequests).toEqual([{ ...startRequest({ flags: { check: ['npm test'] } }), every: '30m', catchUp: 'skip' }]);
    expect((await client.listLoops()).map((item) => item.id)).toEqual([loop.id]);
    await expect(client.deleteLoop(loop.id)).resolves.toMatchObject({ id: loop.id, stopped: true });
    expect(await client.listLoops()).toEqual([]);
    await expect(client.deleteLoop(loop.id)).rejects.toMatchObject({ code: 'not-found' });
    await expect(client.createLoop({ ...startRequest(), every: '' })).rejects.toMatchObject({ message: 'invalid loop request: every: must not be empty' });
  });

  test('stopDaemon resolves once accepted, and the host is asked to shut down', async () => {
    const { client, host } = await startTestDaemon();
    await client.stopDaemon();
    // Bounded: a daemon that never asks the host fails here, saying so, not by the test timeout.
    await host.whenShutdown();
    expect(host.shutdownCalls).toBe(1);
  });

  test('a request over 1 MiB is refused before it is sent', async () => {
    const { client, host } = await startTestDaemon();
    await expect(client.startGoal(startRequest({ condition: 'c'.repeat(1024 * 1024) }))).rejects.toMatchObject({ code: 'bad-request' });
    expect(host.startRequests).toEqual([]);
  });
});

describe('an unreachable or odd daemon', () => {
  test('no socket file, or a stale one, is daemon-unreachable with the way out', async () => {
    const dir = await shortTempDir();
    const missing = path.join(dir, 'none.sock');
    const error = await createDaemonClient(missing).listGoals().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GoaldError);
    expect(error).toMatchObject({
      code: 'daemon-unreachable',
      message: `the goald daemon is not running (no socket at ${missing})`,
      hint: 'start it with `goald daemon`, or run the goal with --foreground',
      exitCode: 3,
    });
    const stale = path.join(dir, 'stale.sock');
    await leaveStaleSocket(stale);
    await expect(createDaemonClient(stale).ping()).rejects.toMatchObject({ code: 'daemon-unreachable' });
    await expect(createDaemonClient(stale).streamEvents('g1', { onEvent: () => {} })).rejects.toMatchObject({ code: 'daemon-unreachable' });
  });

  test('an unknown error code falls back to internal; a missing hint stays missing', async () => {
    const socketPath = await startScriptedServer((req, res) => {
      res.writeHead(418, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'teapot', message: 'short and stout' } }));
    });
    const error = await createDaemonClient(socketPath).ping().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'internal', message: 'short and stout', hint: undefined });
  });

  test('replies that are not JSON, lack an envelope or have the wrong shape are internal errors', async () => {
    const replies = [
      { status: 200, body: 'not json' },
      { status: 500, body: '{"oops":true}' },
      { status: 200, body: '{"goals":"nope"}' },
    ];
    const socketPath = await startScriptedServer((req, res) => {
      const reply = replies.shift() ?? { status: 200, body: '{}' };
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(reply.body);
    });
    const client = createDaemonClient(socketPath);
    await expect(client.listGoals()).rejects.toMatchObject({ code: 'internal', message: 'the goald daemon sent a reply that is not JSON (HTTP 200)' });
    await expect(client.listGoals()).rejects.toMatchObject({ code: 'internal', message: 'the goald daemon answered HTTP 500 without an error envelope' });
    await expect(client.listGoals()).rejects.toMatchObject({ code: 'internal', message: 'the goald daemon sent an unexpected response to GET /v1/goals' });
  });

  test('a daemon that never answers times out as daemon-unreachable', async () => {
    const socketPath = await startScriptedServer(() => {
      // Never answers; the test's cleanup closes the connection.
    });
    await expect(createDaemonClient(socketPath, { timeoutMs: 50 }).ping()).rejects.toMatchObject({
      code: 'daemon-unreachable',
      message: expect.stringContaining('did not answer GET /v1/ping'),
    });
  });

  test('requests that wait on git work (start, race, rollback, edit, prune, run loop) get the longer work deadline', async () => {
    // Every reply comes 400 ms late: past the short deadline, within the work one.
    const socketPath = await startScriptedServer((req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ goal: { id: 'g1', status: 'active', workspace: '/tmp/ws' }, queued: false, warnings: [] }));
      }, 400);
    });
    const client = createDaemonClient(socketPath, { timeoutMs: 100, workTimeoutMs: 5_000 });
    await expect(client.startGoal(startRequest())).resolves.toMatchObject({ goal: { id: 'g1' }, queued: false });
    await expect(client.getGoal('g1')).rejects.toMatchObject({ code: 'daemon-unreachable', message: expect.stringContaining('did not answer GET /v1/goals/g1 within 0 s') });
    const short = createDaemonClient(socketPath, { timeoutMs: 5_000, workTimeoutMs: 100 });
    await expect(short.startGoal(startRequest())).rejects.toMatchObject({ code: 'daemon-unreachable', message: expect.stringContaining('did not answer POST /v1/goals') });
  });

  test('a daemon that drops the event stream mid-way rejects as daemon-unreachable', async () => {
    const socketPath = await startScriptedServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ type: 'goal.resumed', id: 'g1' })}\n`, () => res.destroy());
    });
    const received: ProgressEvent[] = [];
    await expect(createDaemonClient(socketPath).streamEvents('g1', { onEvent: (event) => received.push(event) })).rejects.toMatchObject({
      code: 'daemon-unreachable',
    });
    expect(received).toEqual([{ type: 'goal.resumed', id: 'g1' }]);
  });

  test('pastEvents refuses a reply line that is not an event', async () => {
    const socketPath = await startScriptedServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(`${JSON.stringify({ type: 'goal.resumed', id: 'g1' })}\n{"no":"type"}\n`);
    });
    await expect(createDaemonClient(socketPath).pastEvents('g1')).rejects.toMatchObject({ code: 'internal', message: 'the goald daemon sent an event without a type' });
  });
});

describe('waitForDaemon and isDaemonAlive', () => {
  test('isDaemonAlive: true when a daemon answers, false when none does', async () => {
    const { socketPath, server } = await startTestDaemon();
    await expect(isDaemonAlive(socketPath)).resolves.toBe(true);
    await server.close();
    await expect(isDaemonAlive(socketPath)).resolves.toBe(false);
    await expect(isDaemonAlive(`/tmp/${'x'.repeat(120)}.sock`)).rejects.toMatchObject({ code: 'config' });
  });

  test('isDaemonAlive: a daemon answering with errors is alive', async () => {
    const socketPath = await startScriptedServer((req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not-found', message: 'old daemon' } }));
    });
    await expect(isDaemonAlive(socketPath)).resolves.toBe(true);
  });

  test('waitForDaemon keeps polling until a daemon answers', async () => {
    const dir = await shortTempDir();
    const socketPath = path.join(dir, 'goald.sock');
    // Something that accepts and hangs up without answering stands in for a daemon still starting; once
    // the waiter has polled it twice, it makes way for the real server.
    let connections = 0;
    let polledTwice: () => void = () => {};
    const twice = new Promise<void>((resolve) => (polledTwice = resolve));
    const impostor = createNetServer((socket) => {
      socket.destroy();
      connections += 1;
      if (connections === 2) polledTwice();
    });
    await new Promise<void>((resolve) => impostor.listen(socketPath, resolve));
    const waiting = waitForDaemon(socketPath, { timeoutMs: 10_000 });
    await twice;
    await new Promise<void>((resolve) => impostor.close(() => resolve()));
    const server = await createControlServer({ socketPath, host: new FakeGoalHost() });
    onTestFinished(() => server.close());
    await expect(waiting).resolves.toMatchObject({ ok: true, pid: process.pid });
  });

  test('waitForDaemon gives up after its timeout, and stops when its signal aborts', async () => {
    const dir = await shortTempDir();
    const socketPath = path.join(dir, 'never.sock');
    const startedAt = Date.now();
    await expect(waitForDaemon(socketPath, { timeoutMs: 100 })).rejects.toMatchObject({
      code: 'daemon-unreachable',
      message: `the goald daemon did not answer on ${socketPath} within 100 ms`,
    });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    const controller = new AbortController();
    const waiting = waitForDaemon(socketPath, { timeoutMs: 60_000, signal: controller.signal });
    controller.abort(new Error('user pressed ^C'));
    await expect(waiting).rejects.toThrow('user pressed ^C');
    await expect(waitForDaemon(`/tmp/${'y'.repeat(120)}.sock`, { timeoutMs: 1_000 })).rejects.toMatchObject({ code: 'config' });
  });
});
