// The notifier against real receivers: a local HTTP server as the webhook, a real shell command, a fake
// notify-send on PATH; a real store in a temp home. Once per event, across a restart too; failures are
// logged (without the webhook's secret URL) and never thrown; a hanging webhook is cut off.

import { mkdir, mkdtemp, readFile, realpath, rm, writeFile, chmod } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../state/store.js';
import type { Store } from '../../state/types.js';
import { createNotifier, NOTIFY_TIMEOUT_MS } from '../../src/notify/notifier.js';
import { toNotifySettings, type NotifySettings } from '../../src/notify/notify-settings.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';
import { makeGoal } from '../state/fixtures.js';

const KEY = 'sk-proj-NotifyTestKey0123456789abcdefGHIJ';
const FINISHED: ProgressEvent = { type: 'goal.finished', id: 'g1', status: 'achieved', reason: null, breaker: null, turns: 2, tokens: 10 };

interface Received {
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

let root: string;
let store: Store;
let server: Server;
let received: Received[];
let hang: boolean;
let status: number;

async function startServer(): Promise<string> {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
      if (hang) return; // never answers
      response.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/SECRETPATH`;
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'gnt-')));
  store = await openStore(path.join(root, 'h'));
  await store.update((state) => {
    state.goals.push(makeGoal('g1', { status: 'achieved', summary: { ...makeGoal('g1').summary, turns: 2, tokens: 10 }, condition: `tests pass with ${KEY} <!channel>` }));
  });
  received = [];
  hang = false;
  status = 200;
});

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
  await rm(root, { recursive: true, force: true });
});

function settings(partial: Partial<NotifySettings>): () => Promise<NotifySettings> {
  return () => Promise.resolve({ desktop: false, webhook: null, command: null, events: new Set(['achieved', 'failed', 'paused', 'held'] as const), ...partial });
}

describe('createNotifier', () => {
  it('posts one JSON notification with a Slack-compatible text, once per event, also after a restart', async () => {
    const url = await startServer();
    const logs: string[] = [];
    const env = { ...process.env, OPENAI_API_KEY: KEY };
    const notifier = createNotifier({ store, env, log: (line) => logs.push(line), settings: settings({ webhook: { url, headers: { authorization: 'Bearer hook-secret' } } }) });
    notifier.notify('g1', FINISHED);
    notifier.notify('g1', FINISHED);
    notifier.notify('g1', { type: 'turn.started', id: 'g1', turn: 3, maxTurns: 5 });
    await notifier.idle();
    // A second notifier over the same home: a restarted daemon telling the same ending again.
    const again = createNotifier({ store, env, log: (line) => logs.push(line), settings: settings({ webhook: { url, headers: {} } }) });
    again.notify('g1', FINISHED);
    await again.idle();

    expect(received).toHaveLength(1);
    const [hook] = received;
    expect(hook?.headers['content-type']).toBe('application/json');
    expect(hook?.headers.authorization).toBe('Bearer hook-secret');
    expect(hook?.body).toMatchObject({ kind: 'achieved', key: 'finished', goal: { id: 'g1', turns: 2 }, event: FINISHED });
    // The key is redacted everywhere; Slack's <...> syntax is escaped in `text` only.
    expect(JSON.stringify(hook?.body)).not.toContain(KEY);
    expect(hook?.body.text).toContain('&lt;!channel&gt;');
    expect(logs).toEqual([]);
    const sent = readFileSync(path.join(store.goalDir('g1'), 'notifications.jsonl'), 'utf8');
    expect(sent).toContain('"key":"finished"');
    expect(sent).toContain('"ok":true');
  });

  it('runs the command with the notification on stdin and shows it through notify-send on PATH', async () => {
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    const argvFile = path.join(root, 'notify-send.argv');
    await writeFile(path.join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${argvFile}'\n`);
    await chmod(path.join(bin, 'notify-send'), 0o755);
    const stdinFile = path.join(root, 'command.stdin');
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    const notifier = createNotifier({ store, env, log: () => undefined, settings: settings({ command: `cat > '${stdinFile}'`, desktop: true }) });
    notifier.notify('g1', { type: 'goal.paused', id: 'g1', reason: 'blocked' });
    await notifier.idle();
    const payload = JSON.parse(await readFile(stdinFile, 'utf8')) as Record<string, unknown>;
    expect(payload).toMatchObject({ kind: 'paused', reason: 'blocked', next: 'goald resume g1, or goald say / goald stop g1' });
    const argv = (await readFile(argvFile, 'utf8')).split('\n');
    expect(argv[0]).toBe('--app-name=goald');
    expect(argv[1]).toBe('goald: goal paused (blocked)');
    // notify-send's body may be read as markup: escaped.
    expect(argv[2]).toContain('&lt;!channel&gt;');
  });

  it('logs each failing channel in one line (never the webhook URL), throws nothing, and retries nothing', async () => {
    const url = await startServer();
    status = 500;
    const logs: string[] = [];
    const notifier = createNotifier({
      store,
      env: { ...process.env, PATH: '/nonexistent' },
      log: (line) => logs.push(line),
      settings: settings({ webhook: { url, headers: {} }, command: 'echo broken >&2; exit 3', desktop: true }),
    });
    notifier.notify('g1', FINISHED);
    await notifier.idle();
    expect(received).toHaveLength(1);
    expect(logs.sort()).toEqual([
      'goal g1: notify.command failed: exited 3: broken',
      'goal g1: notify.desktop failed: neither notify-send nor osascript is on PATH',
      'goal g1: notify.webhook failed: answered HTTP 500',
    ]);
    expect(logs.join('\n')).not.toContain('SECRETPATH');
  });

  it('a failing command says why; a webhook nobody listens on is reported by its error code', async () => {
    // A port nobody listens on: a server's, once it closed.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const logs: string[] = [];
    const notifier = createNotifier({
      store,
      env: process.env,
      log: (line) => logs.push(line),
      settings: settings({ webhook: { url: `http://127.0.0.1:${port}/x`, headers: {} }, command: 'echo broken >&2; exit 3' }),
    });
    notifier.notify('g1', FINISHED);
    await notifier.idle();
    expect(logs.sort()).toEqual(['goal g1: notify.command failed: exited 3: broken', 'goal g1: notify.webhook failed: could not be reached (ECONNREFUSED)']);
  });

  it('cuts a webhook that hangs (10 s by default; 300 ms here, in real time) and a command that hangs', async () => {
    expect(NOTIFY_TIMEOUT_MS).toBe(10_000);
    const url = await startServer();
    hang = true;
    const logs: string[] = [];
    const notifier = createNotifier({ store, env: process.env, log: (line) => logs.push(line), settings: settings({ webhook: { url, headers: {} }, command: 'sleep 30' }), timeoutMs: 300 });
    const started = Date.now();
    notifier.notify('g1', FINISHED);
    await notifier.idle();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(logs.sort()).toEqual(['goal g1: notify.command failed: ended after 0.3 s without finishing', 'goal g1: notify.webhook failed: no answer within 0.3 s']);
  });

  it('sends only the kinds asked for, and nothing when no channel is configured', async () => {
    const url = await startServer();
    const only = createNotifier({ store, env: process.env, log: () => undefined, settings: () => Promise.resolve({ ...toNotifySettings({ webhook: url, events: ['failed'] })! }) });
    only.notify('g1', FINISHED);
    await only.idle();
    expect(received).toEqual([]);
    expect(toNotifySettings({ events: ['failed'] })).toBeNull();
    expect(toNotifySettings(undefined)).toBeNull();
    // Nothing was claimed, so configuring a channel later still notifies.
    expect(existsSync(path.join(store.goalDir('g1'), 'notifications.jsonl'))).toBe(false);
  });

  it('reads the user config at each notification; a broken config is logged, not thrown', async () => {
    const configHome = path.join(root, 'config');
    await mkdir(path.join(configHome, 'goald'), { recursive: true });
    await writeFile(path.join(configHome, 'goald', 'config.json'), '{ "notify": { "webhook": "ftp://example.invalid" } }');
    const logs: string[] = [];
    const url = await startServer();
    const env = { ...process.env, XDG_CONFIG_HOME: configHome };
    const notifier = createNotifier({ store, env, log: (line) => logs.push(line) });
    notifier.notify('g1', FINISHED);
    await notifier.idle();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^goal g1: notification not sent: .*config\.json.*notify\.webhook/);
    await writeFile(path.join(configHome, 'goald', 'config.json'), JSON.stringify({ notify: { webhook: url } }));
    notifier.notify('g1', FINISHED);
    await notifier.idle();
    expect(received).toHaveLength(1);
  });
});
