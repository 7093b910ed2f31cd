// A scripted OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1:0 for evaluator, supervisor and e2e
// tests. Each provider has a FIFO queue of replies and a default; every request is recorded so tests can
// assert on what was sent as well as on what came back.

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path including any query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Header names are lowercased (node's http parser does that). */
  headers: Record<string, string>;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** Date.now() when the body had been read; lets tests measure waits between attempts. */
  receivedAt: number;
}

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

type Reply =
  | { kind: 'verdict'; verdict: unknown; usage: FakeUsage | undefined }
  | { kind: 'text'; text: string; usage: FakeUsage | undefined }
  | { kind: 'fail'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'hang' };

/** Scripts one provider's route. Methods return the script so calls chain. */
class ProviderScript {
  protected readonly state: ProviderState;

  constructor(state: ProviderState) {
    this.state = state;
  }

  /** Queue a well-formed verdict: OpenAI as the message content (JSON text), Anthropic as a report_verdict tool_use. */
  reply(verdict: unknown, usage?: FakeUsage): this {
    this.state.queue.push({ kind: 'verdict', verdict, usage });
    return this;
  }

  /** Queue raw assistant text (malformed output, fenced JSON, prose). */
  replyText(text: string, usage?: FakeUsage): this {
    this.state.queue.push({ kind: 'text', text, usage });
    return this;
  }

  /** Queue an HTTP error; the body defaults to the provider's error shape. */
  fail(status: number, body?: unknown, headers?: Record<string, string>): this {
    this.state.queue.push({ kind: 'fail', status, body, headers: headers ?? {} });
    return this;
  }

  /** Queue a request that is never answered; close() destroys its socket. */
  hang(): this {
    this.state.queue.push({ kind: 'hang' });
    return this;
  }

  /** The verdict served whenever the queue is empty (without one: a 418 saying nothing was scripted). */
  setDefault(verdict: unknown, usage?: FakeUsage): this {
    this.state.fallback = { kind: 'verdict', verdict, usage };
    return this;
  }

  clearDefault(): this {
    this.state.fallback = null;
    return this;
  }

  /** Requests received on this provider's route. */
  get requests(): RecordedRequest[] {
    return this.state.requests;
  }

  /** Replies still queued. */
  get pending(): number {
    return this.state.queue.length;
  }
}

export class OpenAIScript extends ProviderScript {
  /**
   * While on, every request carrying `response_format: { type: 'json_schema' }` is refused with the 400 that
   * OpenAI sends for models without Structured Outputs, without consuming the queue; other requests are
   * served from the queue as usual.
   */
  rejectJsonSchema(on = true): this {
    this.state.rejectingJsonSchema = on;
    return this;
  }
}

export class AnthropicScript extends ProviderScript {
  /** Queue a report_verdict tool_use block with exactly this input (valid or not). */
  replyTool(input: unknown, usage?: FakeUsage): this {
    return this.reply(input, usage);
  }
}

export interface FakeLlm {
  /** OpenAI baseURL, e.g. `http://127.0.0.1:PORT/v1`. */
  readonly url: string;
  readonly openaiBaseURL: string;
  /** Anthropic baseURL: the origin without /v1 (the SDK appends /v1/messages). */
  readonly anthropicBaseURL: string;
  readonly origin: string;
  readonly openai: OpenAIScript;
  readonly anthropic: AnthropicScript;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Resolves once at least `count` requests have been received in total. */
  waitForRequests(count: number): Promise<void>;
  /** Empties queues, defaults, modes and the request log. */
  reset(): void;
  /** Stops the server and destroys open sockets (hung requests included). */
  close(): Promise<void>;
}

const OPENAI_PATH = '/v1/chat/completions';
const ANTHROPIC_PATH = '/v1/messages';
const DEFAULT_USAGE: FakeUsage = { inputTokens: 100, outputTokens: 20 };

// The body OpenAI returns when a model lacks Structured Outputs (observed wording).
const JSON_SCHEMA_REJECTION = {
  error: {
    message:
      "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. Learn more about supported models at the Structured Outputs guide: https://platform.openai.com/docs/guides/structured-outputs",
    type: 'invalid_request_error',
    param: 'response_format',
    code: null,
  },
};

interface ProviderState {
  queue: Reply[];
  fallback: Reply | null;
  requests: RecordedRequest[];
  rejectingJsonSchema: boolean;
}

// Starts the fake server on an ephemeral loopback port.
export async function startFakeLlm(): Promise<FakeLlm> {
  const openaiState: ProviderState = { queue: [], fallback: null, requests: [], rejectingJsonSchema: false };
  const anthropicState: ProviderState = { queue: [], fallback: null, requests: [], rejectingJsonSchema: false };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let counter = 0;

  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown = raw;
    try {
      body = raw === '' ? null : JSON.parse(raw);
    } catch {
      // keep the raw text; the route handlers answer 400 below
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const path = req.url ?? '/';
    const record: RecordedRequest = { method: req.method ?? 'GET', path, headers, body, receivedAt: Date.now() };
    requests.push(record);
    const route = path.split('?')[0];
    if (req.method === 'POST' && route === OPENAI_PATH) openaiState.requests.push(record);
    if (req.method === 'POST' && route === ANTHROPIC_PATH) anthropicState.requests.push(record);
    notifyWaiters();

    if (req.method !== 'POST' || (route !== OPENAI_PATH && route !== ANTHROPIC_PATH)) {
      sendJson(res, 404, { error: { message: `fake-llm: no route ${req.method ?? ''} ${path}` } });
      return;
    }
    if (typeof body !== 'object' || body === null) {
      sendJson(res, 400, { error: { message: 'fake-llm: the body is not a JSON object' } });
      return;
    }
    if (route === OPENAI_PATH) {
      if (openaiState.rejectingJsonSchema && asksForJsonSchema(body)) {
        sendJson(res, 400, JSON_SCHEMA_REJECTION);
        return;
      }
      answerOpenAI(res, body as Record<string, unknown>, nextReply(openaiState));
      return;
    }
    answerAnthropic(res, body as Record<string, unknown>, nextReply(anthropicState));
  }

  function nextReply(state: ProviderState): Reply | null {
    return state.queue.shift() ?? state.fallback;
  }

  function answerOpenAI(res: ServerResponse, body: Record<string, unknown>, reply: Reply | null): void {
    if (reply === null) {
      sendJson(res, 418, {
        error: { message: 'fake-llm: no reply scripted; use fake.openai.reply(...) or setDefault(...)', type: 'fake' },
      });
      return;
    }
    if (reply.kind === 'hang') return;
    if (reply.kind === 'fail') {
      sendJson(res, reply.status, reply.body ?? openaiErrorBody(reply.status), reply.headers);
      return;
    }
    const content = reply.kind === 'verdict' ? JSON.stringify(reply.verdict) : reply.text;
    const usage = reply.usage ?? DEFAULT_USAGE;
    counter += 1;
    sendJson(res, 200, {
      id: `chatcmpl-fake-${counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'fake-model',
      choices: [
        { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: usage.inputTokens,
        completion_tokens: usage.outputTokens,
        total_tokens: usage.inputTokens + usage.outputTokens,
      },
    });
  }

  function answerAnthropic(res: ServerResponse, body: Record<string, unknown>, reply: Reply | null): void {
    if (reply === null) {
      sendJson(res, 418, {
        type: 'error',
        error: { type: 'fake', message: 'fake-llm: no reply scripted; use fake.anthropic.reply(...) or setDefault(...)' },
      });
      return;
    }
    if (reply.kind === 'hang') return;
    if (reply.kind === 'fail') {
      sendJson(res, reply.status, reply.body ?? anthropicErrorBody(reply.status), reply.headers);
      return;
    }
    const usage = reply.usage ?? DEFAULT_USAGE;
    counter += 1;
    const content =
      reply.kind === 'verdict'
        ? [{ type: 'tool_use', id: `toolu_fake_${counter}`, name: 'report_verdict', input: reply.verdict }]
        : [{ type: 'text', text: reply.text }];
    sendJson(res, 200, {
      id: `msg_fake_${counter}`,
      type: 'message',
      role: 'assistant',
      model: typeof body.model === 'string' ? body.model : 'fake-model',
      content,
      stop_reason: reply.kind === 'verdict' ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
    });
  }

  function notifyWaiters(): void {
    for (let i = waiters.length - 1; i >= 0; i -= 1) {
      const waiter = waiters[i];
      if (waiter !== undefined && requests.length >= waiter.count) {
        waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  const openai = new OpenAIScript(openaiState);
  const anthropic = new AnthropicScript(anthropicState);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/v1`,
    openaiBaseURL: `${origin}/v1`,
    anthropicBaseURL: origin,
    origin,
    openai,
    anthropic,
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    reset() {
      for (const state of [openaiState, anthropicState]) {
        state.queue.length = 0;
        state.fallback = null;
        state.requests.length = 0;
        state.rejectingJsonSchema = false;
      }
      requests.length = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

function asksForJsonSchema(body: object): boolean {
  const format = (body as { response_format?: unknown }).response_format;
  return typeof format === 'object' && format !== null && (format as { type?: unknown }).type === 'json_schema';
}

function openaiErrorBody(status: number): unknown {
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message: `fake-llm scripted ${status}`, type, param: null, code: null } };
}

function anthropicErrorBody(status: number): unknown {
  const type =
    status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  return { type: 'error', error: { type, message: `fake-llm scripted ${status}` } };
}
