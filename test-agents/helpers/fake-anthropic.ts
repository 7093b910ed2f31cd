// A fake Anthropic Messages API for driving the real Claude Code offline (ANTHROPIC_BASE_URL): a node:http
// server on 127.0.0.1:0 that answers each streaming `POST /v1/messages` from a script with the SSE events
// the real API sends (message_start, content_block_start/delta/stop with text_delta and input_json_delta,
// message_delta with the usage, message_stop), or with an error status and headers, or not at all (a hang,
// for the live-kill tests). Every request is recorded, so tests assert on what Claude Code sent.

import type { ServerResponse } from 'node:http';
import {
  answerFailure,
  answerNotFound,
  openEventStream,
  startFakeApiServer,
  type FailureReply,
  type RecordedRequest,
} from './fake-api-server.js';

export type { RecordedRequest } from './fake-api-server.js';

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

/** Token counts as the API reports them; cache reads/writes are apart from input. */
export interface ApiUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheCreation?: number;
}

export type AnthropicReply = { kind: 'message'; blocks: ContentBlock[]; usage: ApiUsage } | FailureReply;

/** Picks the reply to the `index`-th streaming request (0-based). */
export type AnthropicScript = (request: RecordedRequest, index: number) => AnthropicReply;

export interface FakeAnthropic {
  url: string;
  /** Streaming Messages requests, in order (Claude Code's model calls). */
  requests: RecordedRequest[];
  /** Non-streaming requests (side calls), answered plainly with 1 input and 1 output token each. */
  sideRequests: RecordedRequest[];
  /** The usage the server reported, summed over the replies it sent. */
  reported: Required<ApiUsage>;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1:0. */
export async function startFakeAnthropic(script: AnthropicScript): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = [];
  const sideRequests: RecordedRequest[] = [];
  const reported = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };

  const server = await startFakeApiServer((request, res) => {
    const { body } = request;
    if (request.method !== 'POST' || !request.url.startsWith('/v1/messages')) {
      answerNotFound(res);
      return;
    }
    if (body.stream !== true) {
      // Side calls (titles, token counts) are answered plainly and kept out of the script.
      sideRequests.push(request);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(plainMessage(String(body.model))));
      return;
    }
    const index = requests.length;
    requests.push(request);
    const reply = script(request, index);
    if (reply.kind !== 'message') {
      answerFailure(res, reply, { 'request-id': `req_${index}` });
      return;
    }
    reported.input += reply.usage.input;
    reported.output += reply.usage.output;
    reported.cacheRead += reply.usage.cacheRead ?? 0;
    reported.cacheCreation += reply.usage.cacheCreation ?? 0;
    streamMessage(res, String(body.model), index, reply);
  });

  return { url: server.origin, requests, sideRequests, reported, close: server.close };
}

function streamMessage(res: ServerResponse, model: string, index: number, reply: Extract<AnthropicReply, { kind: 'message' }>): void {
  const send = openEventStream(res, { 'request-id': `req_${index}` });
  const { usage } = reply;
  send('message_start', {
    message: {
      id: `msg_fake_${index}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        output_tokens: 1,
        cache_creation_input_tokens: usage.cacheCreation ?? 0,
        cache_read_input_tokens: usage.cacheRead ?? 0,
      },
    },
  });
  reply.blocks.forEach((block, blockIndex) => {
    if (block.type === 'text') {
      send('content_block_start', { index: blockIndex, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index: blockIndex, delta: { type: 'text_delta', text: block.text } });
    } else {
      const id = block.id ?? `toolu_fake_${index}_${blockIndex}`;
      send('content_block_start', { index: blockIndex, content_block: { type: 'tool_use', id, name: block.name, input: {} } });
      // The input arrives as JSON text in pieces, as from the real API.
      const json = JSON.stringify(block.input);
      const middle = Math.floor(json.length / 2);
      for (const part of [json.slice(0, middle), json.slice(middle)]) {
        send('content_block_delta', { index: blockIndex, delta: { type: 'input_json_delta', partial_json: part } });
      }
    }
    send('content_block_stop', { index: blockIndex });
  });
  const stopReason = reply.blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output } });
  send('message_stop', {});
  res.end();
}

function plainMessage(model: string): Record<string, unknown> {
  return {
    id: 'msg_fake_side',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

/** The text of everything in a request's messages (tool results and system reminders included). */
export function messagesText(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages ?? []);
}

/** How many assistant turns a request's conversation holds: where in the script Claude Code is. */
export function assistantTurns(request: RecordedRequest): number {
  const messages = request.body.messages;
  return Array.isArray(messages) ? messages.filter((message) => (message as { role?: unknown }).role === 'assistant').length : 0;
}
