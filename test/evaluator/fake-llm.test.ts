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
});
