import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicEvaluator } from '../../src/evaluator/anthropic-evaluator.js';
import type { AnthropicEvaluatorOptions } from '../../src/evaluator/anthropic-evaluator.js';
import type { FakeLlm } from '../helpers/fake-llm.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { ACHIEVED, CONDITION, makeInput, NOT_YET } from './sample-input.js';

const API_KEY = 'sk-ant-goald-test-Hv93kQpLr7Ws55';

interface MessagesBody {
  model: string;
  max_tokens: number;
  system: string;
  messages: Array<{ role: string; content: string }>;
  tools: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  tool_choice: unknown;
}

let fake: FakeLlm;

beforeEach(async () => {
  fake = await startFakeLlm();
});

afterEach(async () => {
  await fake.close();
});

function makeEvaluator(overrides: Partial<AnthropicEvaluatorOptions> = {}) {
  return createAnthropicEvaluator({
    model: 'claude-judge',
    baseURL: fake.anthropicBaseURL,
    apiKey: API_KEY,
    timeoutMs: 5_000,
    retries: 2,
    backoff: { baseDelayMs: 5, maxDelayMs: 20 },
    ...overrides,
  });
}

describe('anthropic evaluator', () => {
  it('reads the verdict from the report_verdict tool call', async () => {
    fake.anthropic.replyTool(NOT_YET, { inputTokens: 900, outputTokens: 60 });
    const result = await makeEvaluator().evaluate(makeInput());
    expect(result).toEqual({
      kind: 'verdict',
      verdict: {
        achieved: false,
        blocked: false,
        reason: NOT_YET.reason,
        remaining: NOT_YET.remaining,
        nextStep: NOT_YET.next_step,
        confidence: 0.8,
      },
      usage: { inputTokens: 900, outputTokens: 60 },
      model: 'claude-judge',
    });
  });

  it('forces the report_verdict tool and sends the condition verbatim and the changed files', async () => {
    fake.anthropic.replyTool(ACHIEVED);
    await makeEvaluator().evaluate(makeInput());
    expect(fake.anthropic.requests).toHaveLength(1);
    const request = fake.anthropic.requests[0]!;
    expect(request.path).toBe('/v1/messages');
    // SDK 1.x sends the key as a bearer token; older ones used x-api-key. Either way it is the key.
    expect(request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer /, '')).toBe(API_KEY);
    expect(request.headers['anthropic-version']).toBeTruthy();
    const body = request.body as MessagesBody;
    expect(body.model).toBe('claude-judge');
    expect(body.max_tokens).toBe(1024);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'report_verdict' });
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0]!.name).toBe('report_verdict');
    expect(body.tools[0]!.input_schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(body.system).toMatch(/never instructions/);
    expect(body.messages).toHaveLength(1);
    const user = body.messages[0]!.content;
    expect(user).toContain(CONDITION);
    for (const path of ['src/retry.ts', 'README.md', 'assets/logo.png']) expect(user).toContain(path);
  });

  it('returns an error when the tool input fails the schema', async () => {
    fake.anthropic.replyTool({ achieved: true, remaining: [] });
    const result = await makeEvaluator().evaluate(makeInput());
    expect(result).toMatchObject({ kind: 'error', attempts: 1, usage: { inputTokens: 100, outputTokens: 20 } });
    expect(result.kind === 'error' && result.message).toMatch(/reason/);
    expect(fake.anthropic.requests).toHaveLength(1);
  });

  it('accepts a JSON verdict in text from a server that ignores tools', async () => {
    fake.anthropic.replyText(`\`\`\`json\n${JSON.stringify(ACHIEVED)}\n\`\`\`\n`);
    const result = await makeEvaluator().evaluate(makeInput());
    expect(result.kind === 'verdict' && result.verdict.achieved).toBe(true);
  });

  it('does not take an achieved object quoted inside a prose text reply as the verdict', async () => {
    fake.anthropic.replyText(`The agent printed ${JSON.stringify(ACHIEVED)} but the tests still fail.`);
    const result = await makeEvaluator().evaluate(makeInput());
    expect(result).toMatchObject({ kind: 'error', attempts: 1 });
  });

  it('returns an error for a text reply without a verdict', async () => {
    fake.anthropic.replyText('The goal looks done to me.');
    const result = await makeEvaluator().evaluate(makeInput());
    expect(result).toMatchObject({ kind: 'error', attempts: 1 });
    expect(result.kind === 'error' && result.message).toMatch(/no report_verdict tool call/);
  });

  it('retries an overloaded 529 honouring retry-after', async () => {
    fake.anthropic.fail(529, undefined, { 'retry-after': '0' }).replyTool(ACHIEVED);
    const result = await makeEvaluator({ backoff: { baseDelayMs: 60_000 } }).evaluate(makeInput());
    expect(result.kind).toBe('verdict');
    expect(fake.anthropic.requests).toHaveLength(2);
  });

  it('returns an error after its retries, counting attempts', async () => {
    fake.anthropic.fail(500).fail(500);
    const result = await makeEvaluator({ retries: 1 }).evaluate(makeInput());
    expect(result).toMatchObject({ kind: 'error', attempts: 2 });
    expect(result.kind === 'error' && result.message).toMatch(/^anthropic evaluator: .*HTTP 500/);
  });

  it('times out a hung request', async () => {
    fake.anthropic.hang();
    const result = await makeEvaluator({ timeoutMs: 200, retries: 0 }).evaluate(makeInput());
    expect(result).toMatchObject({ kind: 'error', attempts: 1 });
    expect(result.kind === 'error' && result.message).toMatch(/did not answer within 200 ms/);
  });

  it('rejects when the caller aborts', async () => {
    fake.anthropic.hang();
    const controller = new AbortController();
    const pending = makeEvaluator({ timeoutMs: 60_000 }).evaluate(makeInput(), controller.signal);
    await fake.waitForRequests(1);
    controller.abort(new Error('goal paused now'));
    await expect(pending).rejects.toThrow('goal paused now');
  });

  it('never lets the API key into a result', async () => {
    fake.anthropic.fail(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${API_KEY}` } });
    const result = await makeEvaluator().evaluate(makeInput());
    expect(result).toMatchObject({ kind: 'error', attempts: 1 });
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(result.kind === 'error' && result.message).toContain('HTTP 401: invalid x-api-key [redacted]');
  });
});
