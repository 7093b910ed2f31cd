// The request/response transport under the daemon client, against raw servers on a Unix socket: what it
// writes, and how it reads whole, chunked, cut-short and missing replies.

import { createServer, type Socket } from 'node:net';
import path from 'node:path';

import { describe, expect, onTestFinished, test } from 'vitest';

import { exchangeOverSocket, type SocketRequest } from '../../src/daemon/socket-exchange.js';
import { shortTempDir } from './support.js';

/** A server that hands each connection's request bytes to `answer`, which writes the raw reply. */
async function startRawServer(answer: (request: string, socket: Socket) => void): Promise<{ socketPath: string; requests: string[] }> {
  const socketPath = path.join(await shortTempDir(), 'raw.sock');
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received.slice(0, headEnd))?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      requests.push(received);
      answer(received, socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { socketPath, requests };
}

const get = (overrides: Partial<SocketRequest> = {}): SocketRequest => ({
  method: 'GET',
  path: '/v1/goals?status=active',
  headers: { Accept: 'application/json' },
  timeoutMs: 5_000,
  onTimeout: () => new Error('timed out'),
  ...overrides,
});

describe('exchangeOverSocket', () => {
  test('writes one HTTP/1.1 request with Host and Connection: close, and reads a Content-Length reply', async () => {
    // Content-Length counts bytes (é is two), and bytes past it are not the body's.
    const { socketPath, requests } = await startRawServer((request, socket) => {
      socket.end('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":"é"}\r\n');
    });
    const body = JSON.stringify({ condition: 'all tests pass' });
    const reply = await exchangeOverSocket(socketPath, get({ method: 'POST', path: '/v1/goals', body, headers: { 'Content-Length': Buffer.byteLength(body) } }));
    expect(reply).toEqual({ status: 201, body: '{"ok":"é"}' });
    expect(requests).toEqual([`POST /v1/goals HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`]);
  });

  test('reads a chunked reply (a plain node:http server without Content-Length)', async () => {
    const { socketPath } = await startRawServer((request, socket) => {
      socket.end('HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{"a":1\r\n1\r\n}\r\n0\r\n\r\n');
    });
    await expect(exchangeOverSocket(socketPath, get())).resolves.toEqual({ status: 404, body: '{"a":1}' });
  });

  test('resolves once the whole reply has arrived, without waiting for the server to close', async () => {
    // Each reply comes in pieces, split inside its head, its size lines and before its last chunk, and the
    // connection then stays open: only reading to the reply's own end resolves it.
    const replies = [
      ['HTTP/1.1 200 OK\r\nContent-Le', 'ngth: 12\r\n\r\n{"goals"', ':[]}'],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', 'a\r\n{"goals":[', '\r\n', '2\r\n]}\r\n', '0\r\n\r\n'],
    ];
    const { socketPath } = await startRawServer((request, socket) => {
      const pieces = replies.shift() ?? [];
      const writeNext = (): void => {
        const piece = pieces.shift();
        if (piece !== undefined) socket.write(piece, () => setTimeout(writeNext, 20));
      };
      writeNext();
    });
    // (A reader that waits for the close would get the timeout's error instead.)
    const waitAtMost = get({ timeoutMs: 2_000, onTimeout: () => new Error('still waiting for the close') });
    await expect(exchangeOverSocket(socketPath, waitAtMost)).resolves.toEqual({ status: 200, body: '{"goals":[]}' });
    await expect(exchangeOverSocket(socketPath, waitAtMost)).resolves.toEqual({ status: 200, body: '{"goals":[]}' });
  });

  test('a reply with neither a length nor chunks is read to the close', async () => {
    const { socketPath } = await startRawServer((request, socket) => {
      socket.write('HTTP/1.1 200 OK\r\n\r\n{"goals"', () => setTimeout(() => socket.end(':[]}'), 50));
    });
    await expect(exchangeOverSocket(socketPath, get())).resolves.toEqual({ status: 200, body: '{"goals":[]}' });
  });

  test('a reply cut short, or none at all, rejects', async () => {
    const replies = ['HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"goals":[', 'HTTP/1.1 200 OK\r\nContent-', '', 'SSH-2.0-OpenSSH\r\n\r\n'];
    const { socketPath } = await startRawServer((request, socket) => socket.end(replies.shift() ?? ''));
    await expect(exchangeOverSocket(socketPath, get())).rejects.toThrow('the connection closed mid-reply');
    await expect(exchangeOverSocket(socketPath, get())).rejects.toThrow('the connection closed mid-reply');
    await expect(exchangeOverSocket(socketPath, get())).rejects.toThrow('the connection closed without a reply');
    await expect(exchangeOverSocket(socketPath, get())).rejects.toThrow('not an HTTP reply: "SSH-2.0-OpenSSH"');
  });

  test('a server that stays silent ends with the caller’s timeout error; no server is the connect error', async () => {
    const { socketPath } = await startRawServer(() => {
      // never answers
    });
    await expect(exchangeOverSocket(socketPath, get({ timeoutMs: 50, onTimeout: () => new Error('no answer in 50 ms') }))).rejects.toThrow('no answer in 50 ms');
    const missing = path.join(await shortTempDir(), 'none.sock');
    await expect(exchangeOverSocket(missing, get())).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
