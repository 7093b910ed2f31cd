// The shared fake LLM server's own contract, as other suites (supervisor, e2e) rely on it over plain HTTP.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeLlm } from '../helpers/fake-llm.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { NOT_YET } from './sample-input.js';

let fake: FakeLlm;

beforeEach(async () => {
  fake = await startFakeLlm();
});

afterEach(async () => {
  await fake.close();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${fake.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Custom': 'Yes' },
    body: JSON.stringify(body),
  });
}

describe('startFakeLlm', () => {
  it('exposes the base URLs each SDK expects', () => {
    expect(fake.openaiBaseURL).toBe(`${fake.origin}/v1`);
    expect(fake.url).toBe(fake.openaiBaseURL);
    expect(fake.anthropicBaseURL).toBe(fake.origin);
    expect(fake.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers 418 when nothing is scripted, then serves the queue before the default', async () => {
    expect((await post('/v1/chat/completions', { model: 'm' })).status).toBe(418);
    fake.openai.setDefault(NOT_YET).replyText('first');
    const first = (await (await post('/v1/chat/completions', { model: 'm' })).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    const second = (await (await post('/v1/chat/completions', { model: 'm' })).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    expect(first.choices[0]?.message.content).toBe('first');
    expect(JSON.parse(second.choices[0]?.message.content ?? '')).toEqual(NOT_YET);
  });

  it('records requests with lowercased headers and parsed bodies, per provider and overall', async () => {
    fake.anthropic.replyTool({ achieved: true });
    await post('/v1/messages', { model: 'claude' });
    expect(fake.anthropic.requests).toHaveLength(1);
    expect(fake.openai.requests).toHaveLength(0);
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/v1/messages', body: { model: 'claude' } });
    expect(fake.requests[0]?.headers['x-custom']).toBe('Yes');
  });

  it('sends scripted failures with their headers', async () => {
    fake.openai.fail(429, undefined, { 'retry-after': '3' });
    const response = await post('/v1/chat/completions', {});
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toMatchObject({ error: { type: 'rate_limit_exceeded' } });
  });

  it('rejects json_schema requests without consuming the queue while asked to', async () => {
    fake.openai.rejectJsonSchema().reply(NOT_YET);
    const rejected = await post('/v1/chat/completions', { response_format: { type: 'json_schema', json_schema: {} } });
    expect(rejected.status).toBe(400);
    expect(fake.openai.pending).toBe(1);
    expect((await post('/v1/chat/completions', {})).status).toBe(200);
  });

  it('forgets everything on reset', async () => {
    fake.openai.setDefault(NOT_YET).reply(NOT_YET).rejectJsonSchema();
    await post('/v1/chat/completions', {});
    fake.reset();
    expect(fake.requests).toHaveLength(0);
    expect(fake.openai.pending).toBe(0);
    expect((await post('/v1/chat/completions', { response_format: { type: 'json_schema' } })).status).toBe(418);
  });

  it('streams a scripted Chat Completions turn: deltas, tool call pieces, usage last, then [DONE]', async () => {
    fake.openai.replyToolCalls([{ id: 'call_a', name: 'read_file', arguments: { path: 'x.ts' } }], { text: 'Reading.', usage: { inputTokens: 7, outputTokens: 3, cachedInputTokens: 2 } });
    const response = await post('/v1/chat/completions', { model: 'm', stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = (await response.text()).split('\n\n').filter((block) => block.startsWith('data: ')).map((block) => block.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as { choices: Array<{ delta: { content?: string; tool_calls?: Array<{ function?: { arguments?: string } }> } }>; usage?: unknown });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    const args = chunks.map((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '').join('');
    expect(text).toBe('Reading.');
    expect(JSON.parse(args)).toEqual({ path: 'x.ts' });
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 2 } });
  });

  it('streams a scripted Messages turn as Anthropic events, and decides replies from the request when asked', async () => {
    fake.anthropic.respond((body) => ({ text: `you said ${String(body.model)}` }));
    const response = await post('/v1/messages', { model: 'claude', stream: true });
    const types = [...(await response.text()).matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('serves the models routes only when told', async () => {
    expect((await fetch(`${fake.origin}/v1/models`)).status).toBe(404);
    fake.setModels(['a', 'b']);
    expect(await (await fetch(`${fake.origin}/v1/models`)).json()).toMatchObject({ data: [{ id: 'a' }, { id: 'b' }] });
    expect((await fetch(`${fake.origin}/v1/models/b`)).status).toBe(200);
    expect(await (await fetch(`${fake.origin}/v1/models/c`)).json()).toMatchObject({ error: { type: 'not_found_error' } });
  });
});
