import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, onTestFinished, test } from 'vitest';

import { forwardedEnv } from '../../src/cli/commands/start-daemon.js';
import { createDaemonClient } from '../../src/daemon/client.js';
import { MAX_PENDING_STREAM_BYTES } from '../../src/daemon/event-stream.js';
import { createControlServer } from '../../src/daemon/server.js';
import { checkSocketPath, MAX_SOCKET_PATH_BYTES } from '../../src/daemon/socket-path.js';
import { GoaldError } from '../../src/errors.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';
import { FakeGoalHost } from '../helpers/fake-goal-host.js';
import { waitUntil } from '../helpers/wait.js';
import { leaveStaleSocket, rawExchange, rawRequest, shortTempDir, startTestDaemon } from './support.js';

const execFileAsync = promisify(execFile);

function startBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { condition: 'all tests pass', dir: '/tmp/ws', flags: {}, env: {}, queue: true, ...overrides };
}

function errorOf(json: unknown): { code: string; message: string; hint?: string } {
  expect(json).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  return (json as { error: { code: string; message: string; hint?: string } }).error;
}

/** Reads the current umask without changing it. */
function currentUmask(): number {
  const mask = process.umask(0o022);
  process.umask(mask);
  return mask;
}

describe('socket file and directory', () => {
  test('the socket is 0600 in a 0700 directory, and the umask is restored', async () => {
    const before = currentUmask();
    const daemon = await startTestDaemon();
    expect(currentUmask()).toBe(before);
    const socketStat = await lstat(daemon.socketPath);
    expect(socketStat.isSocket()).toBe(true);
    expect(socketStat.mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(daemon.socketPath))).mode & 0o777).toBe(0o700);
  });

  // Issue 9: an existing directory is never chmodded (it may be shared on purpose); one that others can
  // write is refused instead, with the chmod to run.
  test('an existing directory of ours that only we can write is used as it is', async () => {
    const dir = await shortTempDir();
    const runDir = path.join(dir, 'run');
    await mkdir(runDir);
    await chmod(runDir, 0o755);
    const server = await createControlServer({ socketPath: path.join(runDir, 's.sock'), host: new FakeGoalHost() });
    onTestFinished(() => server.close());
    expect((await stat(runDir)).mode & 0o777).toBe(0o755);
    expect((await lstat(path.join(runDir, 's.sock'))).mode & 0o777).toBe(0o600);
  });

  test('an existing directory that group or others can write is refused and left as it is', async () => {
    const dir = await shortTempDir();
    const runDir = path.join(dir, 'run');
    await mkdir(runDir);
    await chmod(runDir, 0o775);
    await expect(createControlServer({ socketPath: path.join(runDir, 's.sock'), host: new FakeGoalHost() })).rejects.toMatchObject({
      code: 'config',
      message: `the socket directory ${runDir} is writable by group or others (mode 0775); goald refuses to use it`,
      hint: `make it private: chmod go-w ${runDir}`,
    });
    expect((await stat(runDir)).mode & 0o777).toBe(0o775);
    await expect(lstat(path.join(runDir, 's.sock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a stale socket file is removed and replaced', async () => {
    const dir = await shortTempDir();
    const socketPath = path.join(dir, 's.sock');
    await leaveStaleSocket(socketPath);
    expect((await lstat(socketPath)).isSocket()).toBe(true);
    await expect(createDaemonClient(socketPath).ping()).rejects.toMatchObject({ code: 'daemon-unreachable' });

    const server = await createControlServer({ socketPath, host: new FakeGoalHost() });
    onTestFinished(() => server.close());
    await expect(createDaemonClient(socketPath).ping()).resolves.toMatchObject({ ok: true });
  });

  test('a live socket is never taken over: a second server on the same path is a conflict', async () => {
    const daemon = await startTestDaemon();
    const error = await createControlServer({ socketPath: daemon.socketPath, host: new FakeGoalHost() }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GoaldError);
    expect(error).toMatchObject({ code: 'conflict', message: `another goald daemon is already listening on ${daemon.socketPath}` });
    // The first server still owns the path and answers.
    await expect(daemon.client.ping()).resolves.toMatchObject({ ok: true, version: '0.0.0-test' });
  });

  test('a file that is not a socket is left alone', async () => {
    const dir = await shortTempDir();
    const socketPath = path.join(dir, 'not-a-socket');
    await writeFile(socketPath, 'precious');
    await expect(createControlServer({ socketPath, host: new FakeGoalHost() })).rejects.toMatchObject({ code: 'config' });
    expect(await readFile(socketPath, 'utf8')).toBe('precious');
  });

  test('a socket path over 103 bytes is refused with the fix', async () => {
    const dir = await shortTempDir();
    const socketPath = path.join(dir, 'x'.repeat(120), 'goald.sock');
    const bytes = Buffer.byteLength(socketPath);
    expect(() => checkSocketPath(socketPath)).toThrow(
      `the socket path ${socketPath} is ${bytes} bytes; Unix sockets allow at most ${MAX_SOCKET_PATH_BYTES}`,
    );
    await expect(createControlServer({ socketPath, host: new FakeGoalHost() })).rejects.toMatchObject({
      code: 'config',
      hint: 'set GOALD_SOCKET to a shorter path, e.g. /tmp/goald-$USER.sock',
    });
    await expect(createDaemonClient(socketPath).ping()).rejects.toMatchObject({ code: 'config' });
    // Multi-byte characters count as bytes, not characters.
    expect(() => checkSocketPath(`/tmp/${'é'.repeat(50)}`)).toThrow(/is 105 bytes/);
    expect(() => checkSocketPath(`/tmp/${'x'.repeat(98)}`)).not.toThrow();
  });

  test('close() unlinks the socket, and later calls find no daemon', async () => {
    const daemon = await startTestDaemon();
    await daemon.server.close();
    await expect(lstat(daemon.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(daemon.client.ping()).rejects.toMatchObject({
      code: 'daemon-unreachable',
      message: `the goald daemon is not running (no socket at ${daemon.socketPath})`,
    });
    // A second close is harmless.
    await daemon.server.close();
  });

  test('close() lets a request in flight finish, and new requests on open connections are refused', async () => {
    const { server, host, client, socketPath } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    let release: () => void = () => {};
    const arrived = host.holdUntil('getGoal', new Promise<void>((resolve) => (release = resolve)));
    const inFlight = client.getGoal('g1');
    await arrived;
    const closing = server.close();
    // Accepting stopped at once: a new connection finds no listener.
    await expect(createDaemonClient(socketPath).ping()).rejects.toMatchObject({ code: 'daemon-unreachable' });
    release();
    await expect(inFlight).resolves.toMatchObject({ id: 'g1' });
    await closing;
  });

  test('close() never hangs on a client stuck mid-request or a host call that never returns', async () => {
    const { server, host, socketPath } = await startTestDaemon(new FakeGoalHost(), { closeGraceMs: 50 });
    const stuck = connect({ path: socketPath });
    stuck.on('error', () => {});
    await new Promise<void>((resolve) => stuck.once('connect', () => resolve()));
    stuck.write('GET /v1/pi');
    const arrived = host.holdUntil('listLoops', new Promise<void>(() => {}));
    const hanging = rawRequest(socketPath, 'GET', '/v1/loops').catch((error: unknown) => error);
    await arrived;
    await server.close();
    await expect(lstat(socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await hanging).toBeInstanceOf(Error);
    stuck.destroy();
  });
});

describe('errors', () => {
  test('an unknown route is a 404 not-found whose hint lists the routes', async () => {
    const { socketPath } = await startTestDaemon();
    const reply = await rawRequest(socketPath, 'GET', '/v2/nothing');
    expect(reply.status).toBe(404);
    const error = errorOf(reply.json);
    expect(error).toMatchObject({ code: 'not-found', message: 'no route GET /v2/nothing' });
    expect(error.hint).toContain('GET /v1/ping');
    expect(error.hint).toContain('GET|POST /v1/goals');
    expect(error.hint).toContain('POST /v1/goals/:id/pause');
    expect(error.hint).toContain('DELETE /v1/loops/:id');
  });

  test('a wrong method on a known path is a 405 with an Allow header', async () => {
    const { socketPath } = await startTestDaemon();
    const reply = await rawRequest(socketPath, 'DELETE', '/v1/goals');
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('GET, POST');
    expect(errorOf(reply.json).code).toBe('bad-request');
    const pause = await rawRequest(socketPath, 'GET', '/v1/goals/g1/pause');
    expect(pause.status).toBe(405);
    expect(pause.headers.allow).toBe('POST');
  });

  test('malformed JSON is a 400 naming the parse problem', async () => {
    const { socketPath, host } = await startTestDaemon();
    const reply = await rawRequest(socketPath, 'POST', '/v1/goals', '{"dir": "/tmp/ws",', { 'content-type': 'application/json' });
    expect(reply.status).toBe(400);
    expect(errorOf(reply.json).message).toMatch(/^the request body is not valid JSON: /);
    const notUtf8 = await rawRequest(socketPath, 'POST', '/v1/goals', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(errorOf(notUtf8.json).message).toBe('the request body is not valid UTF-8');
    expect(host.startRequests).toEqual([]);
  });

  test('a JSON body is accepted whatever the content type says', async () => {
    const { socketPath, host } = await startTestDaemon();
    const reply = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody()), { 'content-type': 'text/plain' });
    expect(reply.status).toBe(201);
    expect(host.startRequests).toHaveLength(1);
  });

  test('a body over 1 MiB is a 413 and the connection is closed', async () => {
    const { socketPath, host } = await startTestDaemon();
    const big = JSON.stringify(startBody({ condition: 'x'.repeat(1024 * 1024 + 10) }));
    const declared = (await rawExchange(socketPath, `POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}`)).text;
    expect(declared).toMatch(/^HTTP\/1\.1 413 /);
    expect(declared.toLowerCase()).toContain('connection: close');
    expect(declared).toContain('"code":"bad-request"');
    // Chunked: no Content-Length, so the limit trips while reading.
    const chunk = 'y'.repeat(64 * 1024);
    const chunks = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const chunked = (await rawExchange(socketPath, `POST /v1/goals HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`)).text;
    expect(chunked).toMatch(/^HTTP\/1\.1 413 /);
    expect(host.startRequests).toEqual([]);
    await expect(createDaemonClient(socketPath).ping()).resolves.toMatchObject({ ok: true });
  });

  test('GoaldErrors from the host keep their code, message and hint, with their status', async () => {
    const { socketPath, host, client } = await startTestDaemon();
    host.addGoal({ id: 'gaaaa00000001' });
    host.addGoal({ id: 'gaaaa00000002' });
    const ambiguous = await rawRequest(socketPath, 'GET', '/v1/goals/gaaaa');
    expect(ambiguous.status).toBe(400);
    expect(errorOf(ambiguous.json)).toEqual({ code: 'ambiguous', message: 'gaaaa matches 2 goals', hint: 'use more characters of the id' });
    const missing = await rawRequest(socketPath, 'GET', '/v1/goals/gzzz');
    expect(missing.status).toBe(404);
    expect(errorOf(missing.json).code).toBe('not-found');
    await client.startGoal({ condition: 'a', dir: '/tmp/busy', flags: {}, env: {}, queue: true });
    const conflict = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ dir: '/tmp/busy', queue: false })));
    expect(conflict.status).toBe(409);
    expect(errorOf(conflict.json)).toMatchObject({ code: 'conflict', hint: 'wait for it, or drop --no-queue' });
  });

  test('an unexpected exception is a generic 500, logged in full, and the server carries on', async () => {
    const { socketPath, host, logs, client } = await startTestDaemon();
    host.failWith('listGoals', new TypeError('cannot read properties of undefined (reading "kaboom")'));
    const reply = await rawRequest(socketPath, 'GET', '/v1/goals');
    expect(reply.status).toBe(500);
    const error = errorOf(reply.json);
    expect(error.code).toBe('internal');
    expect(error.message).toBe('the goald daemon failed to handle the request');
    expect(reply.text).not.toContain('kaboom');
    expect(logs.some((line) => line.startsWith('internal error on GET /v1/goals: TypeError') && line.includes('kaboom'))).toBe(true);
    // Thrown non-errors too.
    host.failWith('listLoops', 'a string');
    expect((await rawRequest(socketPath, 'GET', '/v1/loops')).status).toBe(500);
    await expect(client.ping()).resolves.toMatchObject({ ok: true });
  });

  test('an invalid id in the path is a 400 before the host is asked', async () => {
    const { socketPath } = await startTestDaemon();
    for (const id of ['.hidden', '%2E%2E%2Fetc', 'a%00b', '-leading', 'x'.repeat(65), '%E0%A4%A']) {
      const reply = await rawRequest(socketPath, 'GET', `/v1/goals/${id}`);
      expect(reply.status, id).toBe(400);
      expect(errorOf(reply.json).code).toBe('bad-request');
    }
  });
});

describe('request validation', () => {
  test('API keys in env are refused without echoing the value; forwarded names pass through', async () => {
    const { socketPath, host } = await startTestDaemon();
    const secret = 'sk-proj-ABCDEFGHIJKLMNOP1234567890';
    for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOALD_OPENAI_API_KEY', 'MY_SECRET']) {
      const reply = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ env: { [name]: secret } })));
      expect(reply.status, name).toBe(400);
      const error = errorOf(reply.json);
      expect(error.message).toBe(`env.${name}: secrets are not accepted over the socket`);
      expect(reply.text).not.toContain(secret);
    }
    const foreign = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ env: { PATH: '/usr/bin' } })));
    expect(foreign.status).toBe(400);
    expect(errorOf(foreign.json).hint).toContain('secrets are not accepted over the socket');
    expect(host.startRequests).toEqual([]);

    const env = { GOALD_MAX_TURNS: '5', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
    const ok = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ env })));
    expect(ok.status).toBe(201);
    expect(host.startRequests[0]?.env).toEqual(env);

    // Where the daemon's cluster is, never a request's: dropped, so no stored request holds the Redis password.
    const cluster = { GOALD_REDIS_URL: 'redis://:s3cret@10.0.0.5:6379/0', GOALD_CLUSTER_REMOTE: 'https://tok@example.com/r.git', GOALD_MAX_TURNS: '5' };
    const dropped = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ env: cluster })));
    expect(dropped.status).toBe(201);
    expect(host.startRequests[1]?.env).toEqual({ GOALD_MAX_TURNS: '5' });
  });

  test("the CLI forwards no cluster setting: they are the daemon's own", () => {
    expect(forwardedEnv({ GOALD_REDIS_URL: 'redis://:s3cret@h:6379', GOALD_CLUSTER_REMOTE: 'r', GOALD_MAX_TURNS: '3', OPENAI_API_KEY: 'sk-x' })).toEqual({ GOALD_MAX_TURNS: '3' });
  });

  test('flags are strict: unknown keys and wrong types name the field', async () => {
    const { socketPath, host } = await startTestDaemon();
    const cases: [unknown, string][] = [
      [{ maxTurns: 5 }, 'flags.maxTurns: expected string, received number'],
      [{ check: 'npm test' }, 'flags.check: expected array, received string'],
      [{ check: ['ok', 3] }, 'flags.check.1: expected string, received number'],
      [{ allowSameModel: 'yes' }, 'flags.allowSameModel: expected boolean, received string'],
      [{ maxTurn: '5' }, 'unknown key flags.maxTurn'],
      [{ agent: 'a\u0000b' }, 'flags.agent: must not contain NUL bytes'],
    ];
    for (const [flags, expected] of cases) {
      const reply = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ flags })));
      expect(reply.status, expected).toBe(400);
      expect(errorOf(reply.json).message).toContain(expected);
    }
    expect(host.startRequests).toEqual([]);
  });

  test('the body itself: dir must be absolute, unknown keys are refused, defaults fill flags, env and queue', async () => {
    const { socketPath, host } = await startTestDaemon();
    const relative = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ dir: 'ws' })));
    expect(errorOf(relative.json).message).toBe('invalid start request: dir: must be an absolute path');
    const extra = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify(startBody({ apiKey: 'x' })));
    expect(errorOf(extra.json).message).toBe('invalid start request: unknown key apiKey');
    const array = await rawRequest(socketPath, 'POST', '/v1/goals', '[]');
    expect(errorOf(array.json).message).toBe('invalid start request: (body): expected object, received array');
    const empty = await rawRequest(socketPath, 'POST', '/v1/goals');
    expect(errorOf(empty.json).message).toBe('invalid start request: (body): expected object, received undefined');
    expect(host.startRequests).toEqual([]);

    const minimal = await rawRequest(socketPath, 'POST', '/v1/goals', JSON.stringify({ dir: '/tmp/ws' }));
    expect(minimal.status).toBe(201);
    expect(host.startRequests).toEqual([{ dir: '/tmp/ws', flags: {}, env: {}, queue: true }]);
  });

  test('pause takes an optional {now}; resume and stop take no fields', async () => {
    const { socketPath, host } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    expect((await rawRequest(socketPath, 'POST', '/v1/goals/g1/pause', '{"now":"yes"}')).status).toBe(400);
    const paused = await rawRequest(socketPath, 'POST', '/v1/goals/g1/pause');
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ goal: { id: 'g1', status: 'paused', phase: 'pausing' } });
    expect((await rawRequest(socketPath, 'POST', '/v1/goals/g1/resume', '{"force":true}')).status).toBe(400);
    expect((await rawRequest(socketPath, 'POST', '/v1/goals/g1/resume', '{}')).status).toBe(200);
  });

  test('branch takes {dir} and no other field; the client round-trips where the branch is', async () => {
    const { socketPath, host, client } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    for (const body of ['{}', '{"dir":""}', '{"dir":"/tmp/ws","turn":2}', '{"dir":7}']) {
      const reply = await rawRequest(socketPath, 'POST', '/v1/goals/g1/branch', body);
      expect(reply.status, body).toBe(400);
      expect(errorOf(reply.json).code).toBe('bad-request');
    }
    expect(await client.goalBranch('g1', '/tmp/ws')).toEqual({ goal: expect.objectContaining({ id: 'g1' }), branch: { repo: '/tmp/ws', branch: 'goald/g1', base: 'base' } });
    expect((await rawRequest(socketPath, 'POST', '/v1/goals/nope/branch', '{"dir":"/tmp/ws"}')).status).toBe(404);
  });

  test('say takes {text} of 1 to 2 000 characters; anything else is a 400 and reaches no goal', async () => {
    const { socketPath, host, client } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    for (const body of ['{}', '{"text":""}', '{"text":"   "}', JSON.stringify({ text: 'x'.repeat(2_001) }), '{"text":"hi","condition":"x"}', '{"text":"a\\u0000b"}']) {
      const reply = await rawRequest(socketPath, 'POST', '/v1/goals/g1/say', body);
      expect(reply.status, body.slice(0, 40)).toBe(400);
      expect(errorOf(reply.json).code).toBe('bad-request');
    }
    expect(host.guidance.get('g1')).toBeUndefined();
    expect(await client.guideGoal('g1', 'x'.repeat(2_000))).toMatchObject({ goal: { id: 'g1' }, pending: 1 });
    expect(await client.guideGoal('g1', 'look at src/net')).toMatchObject({ pending: 2 });
    expect(host.guidance.get('g1')).toEqual(['x'.repeat(2_000), 'look at src/net']);
  });

  test('edit takes only the edit options as flags, plus applyConfig and resume; the client round-trips it', async () => {
    const { socketPath, host, client } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    const cases: [unknown, string][] = [
      [{ flags: { agent: 'x' } }, 'unknown key flags.agent'],
      [{ flags: { cooldown: '0' } }, 'unknown key flags.cooldown'],
      [{ flags: { maxTurns: 5 } }, 'flags.maxTurns: expected string, received number'],
      [{ flags: { check: ['ok\u0000'] } }, 'flags.check.0: must not contain NUL bytes'],
      [{ resume: 'yes' }, 'resume: expected boolean, received string'],
      [{ dir: '/tmp/ws' }, 'unknown key dir'],
    ];
    for (const [body, expected] of cases) {
      const reply = await rawRequest(socketPath, 'POST', '/v1/goals/g1/edit', JSON.stringify(body));
      expect(reply.status, expected).toBe(400);
      expect(errorOf(reply.json).message).toContain(expected);
    }
    expect(host.editRequests).toEqual([]);
    const empty = await rawRequest(socketPath, 'POST', '/v1/goals/g1/edit');
    expect(empty.status).toBe(200);
    expect(host.editRequests).toEqual([{ flags: {}, applyConfig: false, resume: false }]);
    const reply = await client.editGoal('g1', { flags: { maxTurns: '9', check: ['npm test'] }, applyConfig: false, resume: true });
    expect(reply).toMatchObject({ goal: { id: 'g1' }, resumed: true, changes: [{ setting: 'check' }, { setting: 'maxTurns' }] });
    expect(host.editRequests[1]).toEqual({ flags: { check: ['npm test'], maxTurns: '9' }, applyConfig: false, resume: true });
  });

  test('list filters: workspace, a comma list of statuses, an id prefix; unknown statuses are refused', async () => {
    const { client, host, socketPath } = await startTestDaemon();
    host.addGoal({ id: 'g1', workspace: '/w/a', status: 'active' });
    host.addGoal({ id: 'g2', workspace: '/w/a', status: 'failed' });
    host.addGoal({ id: 'g3', workspace: '/w/b', status: 'paused' });
    expect((await client.listGoals({ workspace: '/w/a' })).map((goal) => goal.id)).toEqual(['g1', 'g2']);
    expect((await client.listGoals({ status: ['paused', 'failed'] })).map((goal) => goal.id)).toEqual(['g2', 'g3']);
    expect((await client.listGoals({ idPrefix: 'g2' })).map((goal) => goal.id)).toEqual(['g2']);
    expect((await client.listGoals({ idPrefix: 'g', status: ['active', 'paused'] })).map((goal) => goal.id)).toEqual(['g1', 'g3']);
    // Any text is a prefix: one no id can start with matches nothing (the CLI then says no goal matches).
    expect(await client.listGoals({ idPrefix: '../x y' })).toEqual([]);
    const reply = await rawRequest(socketPath, 'GET', '/v1/goals?status=active,done');
    expect(reply.status).toBe(400);
    expect(errorOf(reply.json)).toMatchObject({ message: 'invalid query: unknown status "done"', hint: 'statuses are active, paused, achieved, failed (comma-separated)' });
    expect((await rawRequest(socketPath, 'GET', '/v1/goals?workspace=relative')).status).toBe(400);
  });
});

describe('event streams', () => {
  const turnStarted = (id: string, turn: number): ProgressEvent => ({ type: 'turn.started', id, turn, maxTurns: 20 });

  test('past events, then live ones, ending after goal.finished', async () => {
    const { client, host } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    host.emit(turnStarted('g1', 1));
    const received: ProgressEvent[] = [];
    let resolveFirst: () => void = () => {};
    const firstArrived = new Promise<void>((resolve) => (resolveFirst = resolve));
    const streaming = client.streamEvents('g1', {
      onEvent: (event) => {
        received.push(event);
        resolveFirst();
      },
    });
    await firstArrived;
    await host.whenListenerCount('g1', 1);
    host.emit(turnStarted('g1', 2));
    host.finish('g1', 'achieved');
    // Nothing after goal.finished reaches the stream.
    host.emit(turnStarted('g1', 3));
    await expect(streaming).resolves.toEqual({ ended: 'finished', events: 3 });
    expect(received.map((event) => event.type)).toEqual(['turn.started', 'turn.started', 'goal.finished']);
    expect(received[1]).toEqual(turnStarted('g1', 2));
    expect(host.listenerCount('g1')).toBe(0);
  });

  test('follow=0 sends past events only; a finished goal ends right after its past', async () => {
    const { client, host, socketPath } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    host.emit(turnStarted('g1', 1));
    const pastOnly: ProgressEvent[] = [];
    await expect(client.streamEvents('g1', { follow: false, onEvent: (event) => pastOnly.push(event) })).resolves.toEqual({ ended: 'ended', events: 1 });
    expect(host.listenerCount('g1')).toBe(0);

    host.addGoal({ id: 'g2', status: 'achieved' });
    host.emit(turnStarted('g2', 1));
    await expect(client.streamEvents('g2', { onEvent: () => {} })).resolves.toEqual({ ended: 'ended', events: 1 });

    const raw = await rawRequest(socketPath, 'GET', '/v1/goals/g1/events?follow=0');
    expect(raw.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(raw.text).toBe(`${JSON.stringify(turnStarted('g1', 1))}\n`);
    expect((await rawRequest(socketPath, 'GET', '/v1/goals/g1/events?follow=maybe')).status).toBe(400);
  });

  test('a client that aborts releases its listener; the goal and other streams are untouched', async () => {
    const { client, host } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    const controller = new AbortController();
    const other: ProgressEvent[] = [];
    const otherStream = client.streamEvents('g1', { onEvent: (event) => other.push(event) });
    const aborted = client.streamEvents('g1', { signal: controller.signal, onEvent: () => {} });
    await host.whenListenerCount('g1', 2);
    controller.abort();
    await expect(aborted).resolves.toEqual({ ended: 'aborted', events: 0 });
    await host.whenListenerCount('g1', 1);
    host.finish('g1', 'failed');
    await expect(otherStream).resolves.toEqual({ ended: 'finished', events: 1 });
    expect(other[0]).toMatchObject({ type: 'goal.finished', status: 'failed' });
  });

  test('a client gone before the host answered subscribe leaves no listener behind', async () => {
    const { host, socketPath, client, logs } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    let open: () => void = () => {};
    const arrived = host.holdUntil('subscribe', new Promise<void>((resolve) => (open = resolve)));
    const socket = connect({ path: socketPath });
    socket.on('error', () => {});
    socket.write('GET /v1/goals/g1/events HTTP/1.1\r\nHost: x\r\n\r\n');
    await arrived;
    socket.destroy();
    await waitUntil('the server to see the client go', () => logs.some((line) => line.startsWith('GET /v1/goals/g1/events 200 (closed early)')), 5_000);
    open();
    // The handler resumes in microtasks; a full round trip on another connection runs after them.
    await client.ping();
    await client.ping();
    expect(host.listenerCount('g1')).toBe(0);
  });

  test('close() ends open streams cleanly', async () => {
    const { client, host, server } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    const streaming = client.streamEvents('g1', { onEvent: () => {} });
    await host.whenListenerCount('g1', 1);
    await server.close();
    await expect(streaming).resolves.toEqual({ ended: 'ended', events: 0 });
    expect(host.listenerCount('g1')).toBe(0);
  });

  test('a client that stops reading is cut off instead of buffered forever', async () => {
    const { host, socketPath, logs } = await startTestDaemon();
    host.addGoal({ id: 'g1' });
    const socket = connect({ path: socketPath });
    onTestFinished(() => void socket.destroy());
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('GET /v1/goals/g1/events HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    await host.whenListenerCount('g1', 1);
    const big: ProgressEvent = { type: 'goal.started', id: 'g1', condition: 'z'.repeat(64 * 1024), workspace: '/w', maxTurns: 1 };
    for (let index = 0; index * 64 * 1024 < MAX_PENDING_STREAM_BYTES * 2 && host.listenerCount('g1') > 0; index++) host.emit(big);
    // Bounded: a server that kept buffering fails here, saying what did not happen, not by the test timeout.
    await host.whenListenerCount('g1', 0);
    const logged = await waitUntil('the stream request to be logged', () => logs.find((line) => line.startsWith('GET /v1/goals/g1/events ')), 10_000);
    expect(logged).toMatch(/^GET \/v1\/goals\/g1\/events 200 \(closed early\) \d+ms$/);
  });
});

describe('daemon stop and logging', () => {
  test('POST /v1/daemon/stop answers 202, then asks the host to shut down', async () => {
    const { client, host } = await startTestDaemon();
    await client.stopDaemon();
    await host.whenShutdown();
    expect(host.shutdownCalls).toBe(1);
  });

  test('one log line per request with method, path, status and duration; never the body', async () => {
    const { client, logs } = await startTestDaemon();
    await client.startGoal({ condition: 'CONDITION-TEXT-NOT-LOGGED', dir: '/tmp/ws', flags: { agent: 'AGENT-NOT-LOGGED' }, env: {}, queue: true });
    await client.ping();
    // The close event that logs fires just after the client has its reply.
    await waitUntil('two log lines', () => logs.length >= 2, 5_000);
    expect(logs[0]).toMatch(/^POST \/v1\/goals 201 \d+ms$/);
    expect(logs[1]).toMatch(/^GET \/v1\/ping 200 \d+ms$/);
    expect(logs.join('\n')).not.toContain('NOT-LOGGED');
  });

  test('curl --unix-socket works', async (context) => {
    const { socketPath, host } = await startTestDaemon();
    const found = await execFileAsync('curl', ['--version']).catch(() => null);
    if (found === null) {
      context.skip();
      return;
    }
    const ping = await execFileAsync('curl', ['-sS', '--unix-socket', socketPath, 'http://goald/v1/ping']);
    expect(JSON.parse(ping.stdout)).toMatchObject({ ok: true, pid: process.pid });
    const started = await execFileAsync('curl', [
      '-sS', '--unix-socket', socketPath, '-X', 'POST', '-H', 'content-type: application/json',
      '-d', JSON.stringify({ condition: 'from curl', dir: '/tmp/ws' }), '-w', '\n%{http_code}', 'http://goald/v1/goals',
    ]);
    const lines = started.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('201');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ goal: { condition: 'from curl' }, queued: false });
    expect(host.startRequests).toHaveLength(1);
  });
});
