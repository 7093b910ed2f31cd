// Helpers for the dashboard's tests (`goald ui`): the link it prints, a logged-in session, raw HTTP requests
// where every header (Host included) is the test's to forge, and a Server-Sent Events reader.

import { request } from 'node:http';
import { expect } from 'vitest';

import { readReply, type RawReply } from './daemon.js';
import type { GoaldRun, GoaldSandbox } from './run-goald.js';

export interface Dashboard {
  /** The one-time link `goald ui` printed on its first line. */
  link: string;
  port: number;
  token: string;
  host: string;
  origin: string;
}

/** Runs `goald ui --no-open` (a sandbox's goald, or any installed one) and reads the link from its first line. */
export async function openDashboard(sandbox: Pick<GoaldSandbox, 'run'> | { run(args: string[]): Promise<Pick<GoaldRun, 'code' | 'stdout' | 'stderr'>> }, args: string[] = []): Promise<Dashboard> {
  const run = await sandbox.run(['ui', '--no-open', ...args]);
  expect(run.code, run.stderr).toBe(0);
  const first = run.stdout.split('\n')[0] ?? '';
  const match = /^http:\/\/127\.0\.0\.1:(\d+)\/login\?token=([A-Za-z0-9_-]+)$/.exec(first);
  if (match === null) throw new Error(`goald ui's first line is not its link: ${JSON.stringify(first)}`);
  const port = Number(match[1]);
  return { link: first, port, token: match[2] ?? '', host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` };
}

/** One request to 127.0.0.1:`port` with exactly the headers given (a forged Host is sent as is). */
export function httpRequest(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false, setHost: false, timeout: 10_000 }, (res) => {
      void readReply(res).then(resolve);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Redeems the dashboard's token; returns the session's Cookie header value. */
export async function login(dashboard: Dashboard): Promise<string> {
  const reply = await httpRequest(dashboard.port, 'GET', `/login?token=${dashboard.token}`, { Host: dashboard.host });
  expect(reply.status).toBe(200);
  const setCookie = reply.headers['set-cookie']?.[0] ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  expect(cookie).toMatch(new RegExp(`^goald_ui_${dashboard.port}=`));
  return cookie;
}

/** The headers a dashboard action carries. */
export function actionHeaders(dashboard: Dashboard, cookie: string): Record<string, string> {
  return { Host: dashboard.host, Origin: dashboard.origin, Cookie: cookie, 'Content-Type': 'application/json', 'X-Goald-UI': '1' };
}

export interface SseMessage {
  id: number | null;
  event: string;
  data: unknown;
  /** performance.now() when the message was read. */
  at: number;
}

export interface SseStream {
  messages: SseMessage[];
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Resolves with the messages once `predicate` holds for them; rejects after `timeoutMs`. */
  until(what: string, predicate: (messages: SseMessage[]) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  close(): void;
}

/** Opens a goal's event stream (optionally as a reconnect after `lastEventId`). */
export function openEvents(dashboard: Dashboard, cookie: string, goalId: string, lastEventId?: number): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: dashboard.host, Cookie: cookie, Accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['Last-Event-ID'] = String(lastEventId);
    const req = request({ host: '127.0.0.1', port: dashboard.port, path: `/api/goals/${goalId}/events`, headers, agent: false, setHost: false });
    req.on('error', reject);
    req.on('response', (res) => {
      const messages: SseMessage[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: number | null = null;
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = Number(line.slice(4));
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data === '') continue;
          messages.push({ id, event, data: JSON.parse(data), at: performance.now() });
        }
        for (const waiter of waiters) waiter();
      });
      resolve({
        messages,
        status: res.statusCode ?? 0,
        headers: res.headers,
        until: (what, predicate, timeoutMs = 15_000) =>
          new Promise((done, fail) => {
            const check = (): void => {
              if (!predicate(messages)) return;
              waiters.delete(check);
              clearTimeout(timer);
              done(messages);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; got ${messages.map((m) => `${m.event}#${m.id}`).join(' ')}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}
