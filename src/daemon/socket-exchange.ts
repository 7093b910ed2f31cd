// One HTTP/1.1 request and its whole reply over the daemon's Unix socket, written and read on node:net.
// node:http costs every CLI call a fifth of a bare `node -e 0` just to load (its agent, parser, incoming
// and outgoing message classes), as much as the rest of `goald status` (bench/daemon.bench.ts). A
// request/response call needs none of it: one connection per call (`Connection: close`), read to its end;
// the daemon answers with a small JSON body and a Content-Length (server.ts), a plain node:http server with
// a chunked one. Event streams, open-ended, stay on node:http (client.ts).

import type { Socket } from 'node:net';

export interface SocketRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers: Record<string, string | number>;
  body?: string;
  /** The connection may stay silent this long before `onTimeout`'s error ends it. */
  timeoutMs: number;
  onTimeout(): Error;
}

export interface SocketReply {
  status: number;
  body: string;
}

const HEAD_END = '\r\n\r\n';

/**
 * Sends `request` to the server on `socketPath`; resolves with its reply as soon as all of it has arrived
 * (its Content-Length, or its last chunk), not when the server gets round to closing the connection: that
 * close came 2-3 ms after the reply, a tenth of `goald status`. A reply delimited by the close alone waits for it.
 */
export function exchangeOverSocket(socketPath: string, request: SocketRequest): Promise<SocketReply> {
  // Loaded here: a command that never reaches the daemon does not pay for node:net.
  const { createConnection } = process.getBuiltinModule('node:net');
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(request.timeoutMs, () => fail(request.onTimeout()));
    socket.once('error', fail);
    socket.once('connect', () => socket.write(renderRequest(request)));
    const settleWith = (ended: boolean): void => {
      if (settled) return;
      try {
        const reply = parseReply(Buffer.concat(chunks), ended);
        if (reply === null) return; // more to come
        settled = true;
        socket.destroy();
        resolve(reply);
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      settleWith(false);
    });
    socket.once('end', () => {
      settleWith(true);
      socket.destroy();
    });
  });
}

function renderRequest(request: SocketRequest): string {
  const headers = { Host: 'localhost', Connection: 'close', ...request.headers };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `${request.method} ${request.path} HTTP/1.1\r\n${lines.join('\r\n')}${HEAD_END}${request.body ?? ''}`;
}

// The status line, the Content-Length, and exactly that many bytes of body (or a chunked body to its last
// chunk). Null while more is to come: the connection has not `ended` and the reply is not whole yet.
function parseReply(bytes: Buffer, ended: boolean): SocketReply | null {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd === -1) {
    if (!ended) return null;
    throw new Error(bytes.length === 0 ? 'the connection closed without a reply' : 'the connection closed mid-reply');
  }
  const [statusLine = '', ...headerLines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})\b/.exec(statusLine)?.[1];
  if (status === undefined) throw new Error(`not an HTTP reply: ${JSON.stringify(statusLine.slice(0, 40))}`);
  const headers = new Map(headerLines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let body = bytes.subarray(headEnd + HEAD_END.length);
  const encoding = headers.get('transfer-encoding');
  const length = headers.get('content-length');
  if (encoding !== undefined) {
    if (encoding.toLowerCase() !== 'chunked') throw new Error(`a reply in ${encoding} transfer encoding`);
    const whole = dechunk(body);
    if (whole === null) {
      if (!ended) return null;
      throw new Error('the connection closed mid-reply');
    }
    body = whole;
  } else if (length !== undefined) {
    if (body.length < Number(length)) {
      if (!ended) return null;
      throw new Error('the connection closed mid-reply');
    }
    body = body.subarray(0, Number(length));
  } else if (!ended) {
    return null; // delimited by the close
  }
  return { status: Number(status), body: body.toString('utf8') };
}

// The payload of a chunked body: size line (hex), that many bytes, CRLF, ..., then a zero-size chunk.
// Null when the bytes stop before that last chunk.
function dechunk(bytes: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return null;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('a malformed chunked reply');
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (bytes.length < start + size) return null;
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}
