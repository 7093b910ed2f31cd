// A fake OpenAI Responses API for driving the real Codex offline (a custom `model_providers` entry with
// `wire_api = "responses"` in a temp CODEX_HOME; Codex ignores OPENAI_BASE_URL): a node:http server on
// 127.0.0.1:0 that answers each `POST /v1/responses` from a script with the SSE events the real API sends
// (response.created, response.output_item.added/done, response.output_text.delta, response.completed with
// the usage), function_call items for Codex's `exec_command`, custom_tool_call items for its freeform
// `apply_patch`, or with an error status, or not at all (a hang). Every request is recorded.

import type { ServerResponse } from 'node:http';
import {
  answerFailure,
  answerNotFound,
  openEventStream,
  startFakeApiServer,
  type FailureReply,
  type RecordedRequest,
} from './fake-api-server.js';

export type OutputItem =
  | { type: 'message'; text: string }
  /** A function tool call (`exec_command` takes `{"cmd": "..."}`). */
  | { type: 'function_call'; name: string; arguments: Record<string, unknown> }
  /** A freeform tool call (`apply_patch` takes the patch text itself). */
  | { type: 'custom_tool_call'; name: string; input: string };

/** Token counts as the Responses API reports them: cached and reasoning tokens are parts of the totals. */
export interface ResponsesUsage {
  input: number;
  cached?: number;
  output: number;
  reasoning?: number;
}

export type OpenAiReply = { kind: 'response'; items: OutputItem[]; usage: ResponsesUsage } | FailureReply;

export type OpenAiScript = (request: RecordedRequest, index: number) => OpenAiReply;

export interface FakeOpenAi {
  /** The base URL for the provider entry (ends in /v1). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** The usage the server reported, summed over the responses it sent. */
  reported: Required<ResponsesUsage>;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1:0. */
export async function startFakeOpenAi(script: OpenAiScript): Promise<FakeOpenAi> {
  const requests: RecordedRequest[] = [];
  const reported = { input: 0, cached: 0, output: 0, reasoning: 0 };

  const server = await startFakeApiServer((request, res) => {
    if (request.method !== 'POST' || !request.url.endsWith('/responses')) {
      answerNotFound(res);
      return;
    }
    const index = requests.length;
    requests.push(request);
    const reply = script(request, index);
    if (reply.kind !== 'response') {
      answerFailure(res, reply);
      return;
    }
    reported.input += reply.usage.input;
    reported.cached += reply.usage.cached ?? 0;
    reported.output += reply.usage.output;
    reported.reasoning += reply.usage.reasoning ?? 0;
    streamResponse(res, index, reply);
  });

  return { baseUrl: `${server.origin}/v1`, requests, reported, close: server.close };
}

function streamResponse(res: ServerResponse, index: number, reply: Extract<OpenAiReply, { kind: 'response' }>): void {
  const event = openEventStream(res);
  const send = (data: Record<string, unknown> & { type: string }): void => event(data.type, data);
  const responseId = `resp_fake_${index}`;
  send({ type: 'response.created', response: { id: responseId, object: 'response', status: 'in_progress', output: [] } });
  reply.items.forEach((item, outputIndex) => {
    const id = `item_fake_${index}_${outputIndex}`;
    const callId = `call_fake_${index}_${outputIndex}`;
    switch (item.type) {
      case 'message': {
        const done = { type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: item.text, annotations: [] }] };
        send({ type: 'response.output_item.added', output_index: outputIndex, item: { ...done, status: 'in_progress', content: [] } });
        send({ type: 'response.output_text.delta', item_id: id, output_index: outputIndex, content_index: 0, delta: item.text });
        send({ type: 'response.output_item.done', output_index: outputIndex, item: done });
        return;
      }
      case 'function_call': {
        const done = { type: 'function_call', id, call_id: callId, name: item.name, arguments: JSON.stringify(item.arguments), status: 'completed' };
        send({ type: 'response.output_item.added', output_index: outputIndex, item: { ...done, arguments: '', status: 'in_progress' } });
        send({ type: 'response.output_item.done', output_index: outputIndex, item: done });
        return;
      }
      case 'custom_tool_call': {
        const done = { type: 'custom_tool_call', id, call_id: callId, name: item.name, input: item.input, status: 'completed' };
        send({ type: 'response.output_item.added', output_index: outputIndex, item: { ...done, input: '', status: 'in_progress' } });
        send({ type: 'response.output_item.done', output_index: outputIndex, item: done });
        return;
      }
    }
  });
  const { usage } = reply;
  send({
    type: 'response.completed',
    response: {
      id: responseId,
      object: 'response',
      status: 'completed',
      output: [],
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached ?? 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
        total_tokens: usage.input + usage.output,
      },
    },
  });
  res.end();
}

/** The names of the tools Codex offered the model in a request. */
export function offeredTools(request: RecordedRequest): string[] {
  const tools = request.body.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => String((tool as { name?: unknown; type?: unknown }).name ?? (tool as { type?: unknown }).type));
}
