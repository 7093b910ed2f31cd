// The plumbing the fake model APIs share: a node:http server on 127.0.0.1:0 that reads each request's JSON
// body, hands it to the fake's handler, and can answer with an error status, with nothing (a hang), or with
// a stream of server-sent events.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/** The replies every fake can give instead of its streamed one: an error status, or no answer at all. */
export type FailureReply =
  | { kind: 'error'; status: number; headers?: Record<string, string>; body: unknown }
  | { kind: 'hang' };

export interface FakeApiServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Drops every connection, hanging ones included, and stops the server. */
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1:0 that calls `handle` with each request once its body is read. */
export async function startFakeApiServer(
  handle: (request: RecordedRequest, res: ServerResponse) => void,
): Promise<FakeApiServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = parseBody(Buffer.concat(chunks).toString('utf8'));
      handle({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close() {
      // closeAllConnections also ends the responses a `hang` reply left open.
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers 404 with an empty JSON object: a path the fake does not serve. */
export function answerNotFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
}

/** Answers an error reply with its status, headers and JSON body; a hang reply with nothing. */
export function answerFailure(res: ServerResponse, reply: FailureReply, headers: Record<string, string> = {}): void {
  if (reply.kind === 'hang') return;
  res.writeHead(reply.status, { 'content-type': 'application/json', ...headers, ...reply.headers });
  res.end(JSON.stringify(reply.body));
}

/** Starts a 200 event stream; the function it returns writes one event, `type` in its data as well. */
export function openEventStream(
  res: ServerResponse,
  headers: Record<string, string> = {},
): (type: string, data: Record<string, unknown>) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  return (type, data) => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
}

function parseBody(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
