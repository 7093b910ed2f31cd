// Throws a bounded storm of malformed traffic at a live control server (raw bytes, bad HTTP, bad JSON,
// huge bodies, wrong methods, bad ids, secrets in env, half-closed and dropped connections), then checks
// that it still answers, that nothing changed in the host, and that an event stream opened before the storm
// is still delivering. Cases are generated from a fixed seed, so a failure replays exactly.

import { expect, test } from 'vitest';

import type { ProgressEvent } from '../../src/supervisor/types.js';
import { rawExchange, startTestDaemon } from './support.js';
import type { RawExchange } from './support.js';

const SEED = Number(process.env.GOALD_FUZZ_SEED ?? 0x5eed);
const RANDOM_CASES = 240;
// Connections open at once: enough to overlap requests, few enough for a 2-core machine.
const CONCURRENCY = 8;
// A bound on the whole storm; each case takes milliseconds.
const STORM_BUDGET_MS = 20_000;

type Ending = 'read' | 'half-close' | 'abort';

interface FuzzCase {
  name: string;
  bytes: Buffer | string;
  ending: Ending;
  /** The status the server must answer with, when the case pins one. */
  expectStatus?: number;
}

/** mulberry32: a tiny seeded PRNG, so every run sends the same storm. */
function createRandom(seed: number): { int(max: number): number; pick<T>(items: readonly T[]): T; bytes(length: number): Buffer } {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number): number => Math.floor(next() * max);
  return {
    int,
    pick: (items) => {
      const item = items[int(items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    bytes: (length) => Buffer.from(Array.from({ length }, () => int(256))),
  };
}

/** One HTTP/1.1 request as text; `Connection: close` so the server hangs up after answering. */
function httpRequest(method: string, path: string, body = '', headers: string[] = []): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: goald', 'Connection: close', ...headers];
  if (body !== '') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

const VALID_START = JSON.stringify({ condition: 'all tests pass', dir: '/tmp/ws', flags: { check: ['npm test'] }, env: {}, queue: true });

// Bodies that must each be refused by POST /v1/goals (and by the other POST routes).
const BAD_BODIES: readonly string[] = [
  '{',
  'null',
  '[]',
  '"string"',
  '42',
  'true',
  '{"dir":"relative/path"}',
  '{"dir":"/tmp/ws","flags":{"maxTurns":5}}',
  '{"dir":"/tmp/ws","flags":{"check":"npm test"}}',
  '{"dir":"/tmp/ws","flags":{"check":[1,2]}}',
  '{"dir":"/tmp/ws","flags":{"allowSameModel":"yes"}}',
  '{"dir":"/tmp/ws","flags":{"unknownFlag":"x"}}',
  '{"dir":"/tmp/ws","flags":[]}',
  '{"dir":"/tmp/ws","env":{"OPENAI_API_KEY":"sk-proj-0123456789abcdef"}}',
  '{"dir":"/tmp/ws","env":{"ANTHROPIC_API_KEY":"sk-ant-0123456789abcdef"}}',
  '{"dir":"/tmp/ws","env":{"GOALD_ANTHROPIC_API_KEY":"x"}}',
  '{"dir":"/tmp/ws","env":{"LD_PRELOAD":"/tmp/evil.so"}}',
  '{"dir":"/tmp/ws","env":{"GOALD_MAX_TURNS":5}}',
  '{"dir":"/tmp/ws","env":[]}',
  '{"dir":"/tmp/ws","queue":"no"}',
  '{"dir":"/tmp/ws\\u0000x"}',
  '{"dir":"/tmp/ws","condition":"a\\u0000b"}',
  '{"dir":"/tmp/ws","condition":7}',
  '{"__proto__":{"polluted":true},"dir":"/tmp/ws"}',
  '{"constructor":{"prototype":{"polluted":true}},"dir":"/tmp/ws"}',
  '{"dir":"/tmp/ws","every":"30m","catchUp":"sometimes"}',
  `{"dir":"/tmp/ws","flags":{"check":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`,
  `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
  '\uFEFF{"dir":"/tmp/ws"',
  '{"dir":"/tmp/ws",}',
  "{'dir':'/tmp/ws'}",
];

// Paths that name no route, or a route with an id that is not an id.
const BAD_PATHS: readonly string[] = [
  '/',
  '/v1',
  '/v2/ping',
  '/v1/goals/g1/explode',
  '/v1/goals/g1/events/extra',
  '/v1/goals/.hidden',
  '/v1/goals/%2e%2e%2f%2e%2e',
  '/v1/goals/%ZZ',
  '/v1/goals/%E0%A4%A',
  '/v1/goals/a%00b',
  '/v1/goals/%20/pause',
  `/v1/goals/${'x'.repeat(100)}`,
  `/v1/${'deep/'.repeat(500)}`,
  '/v1/loops/-bad',
  '/v1/goals/g1/events?follow=maybe',
  '/v1/goals?status=running,done',
  '/v1/goals?workspace=relative',
];

// Method + path pairs that exist only for other methods.
const WRONG_METHODS: readonly [string, string][] = [
  ['PUT', '/v1/ping'],
  ['DELETE', '/v1/goals'],
  ['PATCH', '/v1/goals/g1'],
  ['GET', '/v1/goals/g1/pause'],
  ['GET', '/v1/goals/g1/stop'],
  ['POST', '/v1/goals/g1/events'],
  ['PUT', '/v1/loops'],
  ['GET', '/v1/daemon/stop'],
  ['OPTIONS', '/v1/goals'],
  ['HEAD', '/v1/goals/g1/resume'],
];

const POST_ROUTES: readonly string[] = ['/v1/goals', '/v1/loops', '/v1/goals/g1/pause', '/v1/goals/g1/resume', '/v1/goals/g1/stop', '/v1/daemon/stop'];

/** Hand-written cases, each pinned to the status the server must give (or to a hang-up). */
function handwrittenCases(): FuzzCase[] {
  const over = 'x'.repeat(1024 * 1024 + 1);
  return [
    { name: 'not HTTP at all', bytes: 'hello daemon\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'TLS client hello', bytes: Buffer.from('160301020001000100', 'hex'), ending: 'read', expectStatus: 400 },
    { name: 'unknown method', bytes: 'FROB /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'missing Host header', bytes: 'GET /v1/ping HTTP/1.1\r\nConnection: close\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'header without a colon', bytes: 'GET /v1/ping HTTP/1.1\r\nHost: x\r\nnonsense\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'header over 16 KiB', bytes: httpRequest('GET', '/v1/ping', '', [`X-Big: ${'a'.repeat(20_000)}`]), ending: 'read', expectStatus: 431 },
    { name: 'negative Content-Length', bytes: 'POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}', ending: 'read', expectStatus: 400 },
    { name: 'non-numeric Content-Length', bytes: 'POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}', ending: 'read', expectStatus: 400 },
    {
      name: 'Content-Length and Transfer-Encoding',
      bytes: 'POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ending: 'read',
      expectStatus: 400,
    },
    { name: 'absolute-form target', bytes: httpRequest('GET', 'http://evil.example/v1/ping'), ending: 'read', expectStatus: 400 },
    { name: 'asterisk target', bytes: httpRequest('OPTIONS', '*'), ending: 'read', expectStatus: 400 },
    { name: 'declared body over 1 MiB', bytes: httpRequest('POST', '/v1/goals', over), ending: 'read', expectStatus: 413 },
    {
      name: 'declared 10 GiB, sends a little',
      bytes: `POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: ${10 * 1024 ** 3}\r\n\r\n{"dir":`,
      ending: 'read',
      expectStatus: 413,
    },
    {
      name: 'chunked body over 1 MiB',
      bytes: `POST /v1/loops HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${over.length.toString(16)}\r\n${over}\r\n0\r\n\r\n`,
      ending: 'read',
      expectStatus: 413,
    },
    { name: 'bad chunk size', bytes: 'POST /v1/goals HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'half-closed request line', bytes: 'GET /v1/pi', ending: 'half-close' },
    { name: 'half-closed after headers, body missing', bytes: 'POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"di', ending: 'half-close' },
    { name: 'dropped mid-body', bytes: 'POST /v1/goals HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"dir":"/tmp', ending: 'abort' },
    { name: 'dropped after a full valid-looking start', bytes: httpRequest('POST', '/v1/goals', '{"dir":"relative"}'), ending: 'abort' },
    { name: 'HTTP/2 preface', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'NUL bytes in the request line', bytes: 'GET /v1/\u0000ping HTTP/1.1\r\nHost: x\r\n\r\n', ending: 'read', expectStatus: 400 },
    { name: 'daemon stop with fields', bytes: httpRequest('POST', '/v1/daemon/stop', '{"force":true}'), ending: 'read', expectStatus: 400 },
    { name: 'resume with JSON null', bytes: httpRequest('POST', '/v1/goals/g1/resume', 'null'), ending: 'read', expectStatus: 400 },
    {
      name: 'pipelined: a bad request, then a ping',
      bytes: `GET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      ending: 'read',
      expectStatus: 404,
    },
  ];
}

/** Random cases built from parts that are each invalid, so no generated request can change state. */
function randomCases(count: number): FuzzCase[] {
  const random = createRandom(SEED);
  const cases: FuzzCase[] = [];
  const ending = (): Ending => random.pick<Ending>(['read', 'read', 'read', 'half-close', 'abort']);
  for (let index = 0; index < count; index++) {
    const kind = random.int(7);
    if (kind === 0) {
      cases.push({ name: `garbage #${index}`, bytes: random.bytes(1 + random.int(2_048)), ending: ending() });
    } else if (kind === 1) {
      const [method, path] = random.pick(WRONG_METHODS);
      cases.push({ name: `${method} ${path}`, bytes: httpRequest(method, path), ending: ending() });
    } else if (kind === 2) {
      const path = random.pick(BAD_PATHS);
      cases.push({ name: `GET ${path.slice(0, 60)}`, bytes: httpRequest('GET', path), ending: ending() });
    } else if (kind === 3) {
      const route = random.pick(POST_ROUTES);
      const body = random.pick(BAD_BODIES);
      const contentType = random.pick(['Content-Type: application/json', 'Content-Type: text/plain', 'Content-Type: application/x-www-form-urlencoded']);
      cases.push({ name: `POST ${route} ${body.slice(0, 40)}`, bytes: httpRequest('POST', route, body, [contentType]), ending: ending() });
    } else if (kind === 4) {
      // A valid start body cut short: a proper prefix of a JSON object is never valid JSON.
      const body = VALID_START.slice(0, 1 + random.int(VALID_START.length - 1));
      cases.push({ name: `truncated start (${body.length} bytes)`, bytes: httpRequest('POST', '/v1/goals', body), ending: ending() });
    } else if (kind === 5) {
      // A valid request cut at a random byte, then the connection half-closed or dropped.
      const full = httpRequest('POST', '/v1/goals', VALID_START);
      const cut = full.slice(0, 1 + random.int(full.length - 2));
      cases.push({ name: `request cut at ${cut.length}`, bytes: cut, ending: random.pick<Ending>(['half-close', 'abort']) });
    } else {
      // A valid request line and headers followed by random bytes as the body.
      const body = random.bytes(1 + random.int(512));
      const head = `POST ${random.pick(POST_ROUTES)} HTTP/1.1\r\nHost: goald\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`;
      cases.push({ name: `random body #${index}`, bytes: Buffer.concat([Buffer.from(head, 'latin1'), body]), ending: ending() });
    }
  }
  return cases;
}

/** Every status code in a raw reply (pipelined requests get several). */
function statusesIn(reply: RawExchange): number[] {
  return [...reply.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function runPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: limit }, () => worker()));
}

test(`a storm of malformed requests disturbs nothing (seed ${SEED})`, async () => {
  const { client, host, socketPath, logs } = await startTestDaemon();
  const { goal } = await client.startGoal({ condition: 'keep running', dir: '/tmp/ws', flags: {}, env: {}, queue: true });
  await client.createLoop({ dir: '/tmp/ws', flags: {}, env: {}, queue: true, every: '30m' });
  const streamed: ProgressEvent[] = [];
  const stream = client.streamEvents(goal.id, { onEvent: (event) => streamed.push(event) });
  await host.whenListenerCount(goal.id, 1);
  const before = host.snapshot();

  const cases = [...handwrittenCases(), ...randomCases(RANDOM_CASES)];
  const problems: string[] = [];
  const startedAt = Date.now();
  await runPool(cases, CONCURRENCY, async (fuzzCase) => {
    const reply = await rawExchange(socketPath, fuzzCase.bytes, {
      halfClose: fuzzCase.ending === 'half-close',
      abortAfterWrite: fuzzCase.ending === 'abort',
    });
    const statuses = statusesIn(reply);
    if (reply.ended === 'idle') problems.push(`${fuzzCase.name}: the server kept the connection open without answering`);
    const serverErrors = statuses.filter((status) => status >= 500);
    if (serverErrors.length > 0) problems.push(`${fuzzCase.name}: answered ${serverErrors.join(', ')}`);
    if (fuzzCase.expectStatus !== undefined && statuses[0] !== fuzzCase.expectStatus) {
      problems.push(`${fuzzCase.name}: expected ${fuzzCase.expectStatus}, got ${statuses.join(', ') || 'no answer'}`);
    }
    if (reply.text.includes('sk-proj-0123456789abcdef') || reply.text.includes('sk-ant-0123456789abcdef')) {
      problems.push(`${fuzzCase.name}: a secret was echoed back`);
    }
  });
  const elapsed = Date.now() - startedAt;

  expect(problems, `seed ${SEED}`).toEqual([]);
  expect(elapsed).toBeLessThan(STORM_BUDGET_MS);
  // The pipelined ping behind a bad request was answered too.
  expect(logs.some((line) => /^GET \/v1\/ping 200 /.test(line))).toBe(true);
  // Nothing the storm sent was taken: no goals, loops, events, shutdowns; no prototype pollution.
  expect(host.snapshot()).toBe(before);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  await expect(client.ping()).resolves.toMatchObject({ ok: true, goalsRunning: 1 });
  expect(logs.filter((line) => line.startsWith('internal error'))).toEqual([]);

  // The stream opened before the storm still delivers, and ends at goal.finished.
  expect(host.listenerCount(goal.id)).toBe(1);
  host.emit({ type: 'turn.started', id: goal.id, turn: 1, maxTurns: 20 });
  host.finish(goal.id, 'achieved');
  await expect(stream).resolves.toEqual({ ended: 'finished', events: 3 });
  expect(streamed.map((event) => event.type)).toEqual(['goal.started', 'turn.started', 'goal.finished']);
});
