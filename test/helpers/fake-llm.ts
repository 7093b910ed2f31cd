// A scripted OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1:0 for evaluator, supervisor, agent
// and e2e tests. Each provider has a FIFO queue of replies and a default; every request is recorded so tests
// can assert on what was sent as well as on what came back. A request with `stream: true` is answered as
// the real APIs stream (Chat Completions chunks with `[DONE]`, Anthropic Messages events), tool calls
// included, so the builtin agent's SDK code paths run unchanged against it.

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
  /** OpenAI `prompt_tokens_details.cached_tokens` (inside inputTokens); Anthropic `cache_read_input_tokens` (apart). */
  cachedInputTokens?: number;
  /** Anthropic `cache_creation_input_tokens`. */
  cacheCreationInputTokens?: number;
}

/** One tool call of a scripted model turn; `arguments` is sent as JSON, or verbatim when a string. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: unknown;
}

/** A scripted model turn for the builtin agent: text, tool calls, or both. */
export interface FakeTurn {
  text?: string;
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  /** A streamed Chat Completions turn without the usage chunk, as servers that ignore stream_options send. */
  omitUsage?: boolean;
  /** The reply was cut at the output limit (finish_reason `length`, stop_reason `max_tokens`). */
  truncated?: boolean;
}

/** Decides a reply from the request's body (the conversation so far), for scripts that react to it. */
export type FakeResponder = (body: Record<string, unknown>) => FakeTurn;

type Reply =
  | { kind: 'verdict'; verdict: unknown; usage: FakeUsage | undefined }
  | { kind: 'text'; text: string; usage: FakeUsage | undefined }
  | { kind: 'fail'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'turn'; turn: FakeTurn }
  | { kind: 'respond'; respond: FakeResponder };

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

  /** Queue a model turn with tool calls (and optional text): streamed when the request asks to stream. */
  replyToolCalls(toolCalls: FakeToolCall[], options: { text?: string; usage?: FakeUsage } = {}): this {
    this.state.queue.push({ kind: 'turn', turn: { ...options, toolCalls } });
    return this;
  }

  /** Queue a reply decided when its request arrives, from the request's body. */
  respond(respond: FakeResponder): this {
    this.state.queue.push({ kind: 'respond', respond });
    return this;
  }

  /** The model turn served whenever the queue is empty (e.g. a model that never stops calling tools). */
  setDefaultTurn(turn: FakeTurn | FakeResponder): this {
    this.state.fallback = typeof turn === 'function' ? { kind: 'respond', respond: turn } : { kind: 'turn', turn };
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
  /** Serve GET /v1/models and /v1/models/<id> with these models (null, the default: those routes 404). */
  setModels(ids: string[] | null): void;
  /** Empties queues, defaults, modes, models and the request log. */
  reset(): void;
  /** Stops the server and destroys open sockets (hung requests included). */
  close(): Promise<void>;
}

const OPENAI_PATH = '/v1/chat/completions';
const ANTHROPIC_PATH = '/v1/messages';
const MODELS_PATH = '/v1/models';
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
  // The models GET /v1/models lists (both SDKs' retrieve is GET /v1/models/<id>); null: no such route.
  let models: string[] | null = null;

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

    if (req.method === 'GET' && models !== null && route?.startsWith(MODELS_PATH) === true) {
      answerModels(res, route.slice(MODELS_PATH.length).replace(/^\//, ''), models);
      return;
    }
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
      answerOpenAI(res, body as Record<string, unknown>, nextReply(openaiState, body));
      return;
    }
    answerAnthropic(res, body as Record<string, unknown>, nextReply(anthropicState, body));
  }

  function nextReply(state: ProviderState, body: unknown): Reply | null {
    const reply = state.queue.shift() ?? state.fallback;
    if (reply?.kind !== 'respond') return reply;
    return { kind: 'turn', turn: reply.respond(typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}) };
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
    counter += 1;
    const model = typeof body.model === 'string' ? body.model : 'fake-model';
    if (reply.kind === 'turn' || reply.kind === 'respond' || body.stream === true) {
      const turn = reply.kind === 'turn' ? reply.turn : reply.kind === 'text' ? { text: reply.text, usage: reply.usage } : { text: JSON.stringify(reply.kind === 'verdict' ? reply.verdict : null) };
      if (body.stream === true) streamOpenAI(res, body, turn, `chatcmpl-fake-${counter}`, model);
      else sendOpenAITurn(res, turn, `chatcmpl-fake-${counter}`, model);
      return;
    }
    const content = reply.kind === 'verdict' ? JSON.stringify(reply.verdict) : reply.text;
    const usage = reply.usage ?? DEFAULT_USAGE;
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
    if (reply.kind === 'turn' || reply.kind === 'respond' || body.stream === true) {
      counter += 1;
      const model = typeof body.model === 'string' ? body.model : 'fake-model';
      const turn: FakeTurn =
        reply.kind === 'turn'
          ? reply.turn
          : reply.kind === 'text'
            ? { text: reply.text, usage: reply.usage }
            : { toolCalls: [{ name: 'report_verdict', arguments: reply.kind === 'verdict' ? reply.verdict : null }] };
      if (body.stream === true) streamAnthropic(res, turn, `msg_fake_${counter}`, model, counter);
      else sendAnthropicTurn(res, turn, `msg_fake_${counter}`, model, counter);
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
    setModels(ids) {
      models = ids === null ? null : [...ids];
    },
    reset() {
      models = null;
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

// ---- model turns (the builtin agent) -----------------------------------------------------------------

function openaiUsage(usage: FakeUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    ...(usage.cachedInputTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } }),
  };
}

function openaiToolCalls(turn: FakeTurn, counter: string): Array<Record<string, unknown>> {
  return (turn.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${counter}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
  }));
}

function sendOpenAITurn(res: ServerResponse, turn: FakeTurn, id: string, model: string): void {
  const toolCalls = openaiToolCalls(turn, id);
  sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: turn.text ?? null, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: openaiUsage(turn.usage ?? DEFAULT_USAGE),
  });
}

// Chat Completions streaming: text in two deltas, each tool call's arguments in two pieces, the usage
// chunk last when `stream_options.include_usage` asks for it, then `data: [DONE]`.
function streamOpenAI(res: ServerResponse, body: Record<string, unknown>, turn: FakeTurn, id: string, model: string): void {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
  const delta = (value: Record<string, unknown>, finish: string | null = null): unknown => ({ index: 0, delta: value, logprobs: null, finish_reason: finish });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk([delta({ role: 'assistant', content: '' })]));
  const text = turn.text ?? '';
  if (text !== '') {
    const half = Math.ceil(text.length / 2);
    res.write(chunk([delta({ content: text.slice(0, half) })]));
    if (text.length > half) res.write(chunk([delta({ content: text.slice(half) })]));
  }
  const toolCalls = openaiToolCalls(turn, id);
  toolCalls.forEach((call, index) => {
    const fn = call.function as { name: string; arguments: string };
    const half = Math.ceil(fn.arguments.length / 2);
    res.write(chunk([delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: fn.name, arguments: fn.arguments.slice(0, half) } }] })]));
    res.write(chunk([delta({ tool_calls: [{ index, function: { arguments: fn.arguments.slice(half) } }] })]));
  });
  res.write(chunk([delta({}, turn.truncated === true ? 'length' : toolCalls.length > 0 ? 'tool_calls' : 'stop')]));
  const options = body.stream_options;
  if (turn.omitUsage !== true && typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true) {
    res.write(chunk([], { usage: openaiUsage(turn.usage ?? DEFAULT_USAGE) }));
  }
  res.end('data: [DONE]\n\n');
}

function anthropicContent(turn: FakeTurn, counter: number): Array<Record<string, unknown>> {
  const content: Array<Record<string, unknown>> = [];
  if (turn.text !== undefined && turn.text !== '') content.push({ type: 'text', text: turn.text });
  (turn.toolCalls ?? []).forEach((call, index) => {
    content.push({ type: 'tool_use', id: call.id ?? `toolu_fake_${counter}_${index}`, name: call.name, input: call.arguments });
  });
  return content;
}

function anthropicUsage(usage: FakeUsage): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cachedInputTokens ?? 0,
    cache_creation_input_tokens: usage.cacheCreationInputTokens ?? 0,
  };
}

function sendAnthropicTurn(res: ServerResponse, turn: FakeTurn, id: string, model: string, counter: number): void {
  const content = anthropicContent(turn, counter);
  sendJson(res, 200, {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage(turn.usage ?? DEFAULT_USAGE),
  });
}

// Anthropic Messages streaming: message_start (input usage), one content block per text or tool_use (text
// and input JSON in two deltas each), message_delta (stop reason, output usage), message_stop.
function streamAnthropic(res: ServerResponse, turn: FakeTurn, id: string, model: string, counter: number): void {
  const usage = turn.usage ?? DEFAULT_USAGE;
  const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(
    event('message_start', {
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...anthropicUsage(usage), output_tokens: 1 } },
    }),
  );
  const content = anthropicContent(turn, counter);
  content.forEach((block, index) => {
    if (block.type === 'text') {
      const text = String(block.text);
      const half = Math.ceil(text.length / 2);
      res.write(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      res.write(event('content_block_delta', { index, delta: { type: 'text_delta', text: text.slice(0, half) } }));
      res.write(event('content_block_delta', { index, delta: { type: 'text_delta', text: text.slice(half) } }));
    } else {
      const json = typeof block.input === 'string' ? block.input : JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      res.write(event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      res.write(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } }));
      res.write(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } }));
    }
    res.write(event('content_block_stop', { index }));
  });
  const stopReason = turn.truncated === true ? 'max_tokens' : content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  res.write(event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.outputTokens } }));
  res.end(event('message_stop', {}));
}

// One body that both SDKs read: OpenAI's model object and list, Anthropic's ModelInfo and its not_found_error.
function answerModels(res: ServerResponse, id: string, models: readonly string[]): void {
  const entry = (name: string) => ({ id: name, object: 'model', type: 'model', created: 0, created_at: '2025-01-01T00:00:00Z', owned_by: 'fake', display_name: name });
  if (id === '') {
    sendJson(res, 200, { object: 'list', data: models.map(entry), has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null });
  } else if (models.includes(decodeURIComponent(id))) {
    sendJson(res, 200, entry(decodeURIComponent(id)));
  } else {
    sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `model: ${decodeURIComponent(id)}`, code: 'model_not_found' } });
  }
}
