// Shared setup for control-plane tests: short temp dirs (socket paths must stay under 104 bytes), a
// control server over a FakeGoalHost, and raw requests for what the typed client would never send.

import { spawn } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { onTestFinished } from 'vitest';

import { createDaemonClient } from '../../src/daemon/client.js';
import type { DaemonClient } from '../../src/daemon/client.js';
import { createControlServer } from '../../src/daemon/server.js';
import type { ControlServer } from '../../src/daemon/server.js';
import { FakeGoalHost } from '../helpers/fake-goal-host.js';

/** A fresh short temp dir (e.g. /tmp/gd-AbC123), removed when the test finishes. */
export async function shortTempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'gd-')));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestDaemon {
  host: FakeGoalHost;
  server: ControlServer;
  client: DaemonClient;
  socketPath: string;
  dir: string;
  /** Lines the server logged. */
  logs: string[];
}

/** Starts a control server over a FakeGoalHost at `<short tmp>/run/goald.sock`; closed when the test ends. */
export async function startTestDaemon(host = new FakeGoalHost(), options: { closeGraceMs?: number } = {}): Promise<TestDaemon> {
  const dir = await shortTempDir();
  const socketPath = path.join(dir, 'run', 'goald.sock');
  const logs: string[] = [];
  const server = await createControlServer({ socketPath, host, log: (line) => logs.push(line), ...options });
  onTestFinished(() => server.close());
  return { host, server, client: createDaemonClient(socketPath), socketPath, dir, logs };
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body when it was JSON, else undefined. */
  json: unknown;
}

/** Sends one HTTP request as given (method, path, headers, raw body) and reads the whole reply. */
export function rawRequest(
  socketPath: string,
  method: string,
  requestPath: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path: requestPath, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface RawExchange {
  /** Everything the server sent, as latin1 (bytes preserved one to one). */
  text: string;
  /** `closed`: the connection ended; `idle`: nothing arrived for `idleMs` and we gave up (a server bug). */
  ended: 'closed' | 'idle' | 'aborted';
}

/**
 * Writes raw bytes on a fresh connection and collects everything the server sends until it closes (or
 * until `idleMs` pass without data, a bound for a server that wrongly keeps it open). `halfClose` ends
 * our side after writing; `abortAfterWrite` drops the connection at once. Write errors (EPIPE after the
 * server hung up) are ignored: the reply is what counts.
 */
export function rawExchange(
  socketPath: string,
  bytes: Buffer | string,
  options: { halfClose?: boolean; abortAfterWrite?: boolean; idleMs?: number } = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const done = (ended: RawExchange['ended']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), ended });
    };
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => done('idle'), options.idleMs ?? 3_000);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      arm();
    });
    socket.on('error', () => {});
    socket.on('close', () => done('closed'));
    socket.on('connect', () => {
      arm();
      socket.write(bytes, () => {
        if (options.abortAfterWrite === true) done('aborted');
        else if (options.halfClose === true) socket.end();
      });
    });
  });
}

/** Leaves a stale socket file at `socketPath`: a child listens there and is SIGKILLed, so nothing unlinks it. */
export async function leaveStaleSocket(socketPath: string): Promise<void> {
  const script = `require('node:net').createServer().listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'))`;
  const child = spawn(process.execPath, ['-e', script, socketPath], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited without SIGKILL (${String(signal)})`))));
  });
}
