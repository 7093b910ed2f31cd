import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EvaluatorSpec } from '../../src/config/types.js';
import { GoaldError } from '../../src/errors.js';
import {
  assertDifferentModels,
  createEvaluator,
  normalizeModelName,
  parseEvaluatorFlag,
} from '../../src/evaluator/create-evaluator.js';
import type { FakeLlm } from '../helpers/fake-llm.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { makeInput, NOT_YET } from './sample-input.js';

const OPENAI_KEY = 'sk-goald-create-test-Yy7Rk2Lq90Ab';
const ANTHROPIC_KEY = 'sk-ant-goald-create-test-Pm4Ws8Xc1Dd';

let fake: FakeLlm;

beforeEach(async () => {
  fake = await startFakeLlm();
});

afterEach(async () => {
  await fake.close();
});

function spec(overrides: Partial<EvaluatorSpec> = {}): EvaluatorSpec {
  return {
    provider: 'openai',
    model: 'gpt-judge-mini',
    baseURL: null,
    maxInputChars: 24_000,
    skipWhenChecksFail: true,
    timeoutMs: 5_000,
    retries: 0,
    ...overrides,
  };
}

function thrown(run: () => unknown): GoaldError {
  try {
    run();
  } catch (error) {
    if (error instanceof GoaldError) return error;
    throw error;
  }
  throw new Error('expected a GoaldError');
}

describe('createEvaluator', () => {
  it("builds the 'none' evaluator, which leaves the decision to the checks", async () => {
    const evaluator = createEvaluator(spec({ provider: 'none', model: null }), {});
    expect(evaluator.provider).toBe('none');
    expect(evaluator.model).toBeNull();
    expect(await evaluator.evaluate(makeInput())).toEqual({ kind: 'skipped', reason: 'checks decide' });
  });

  for (const [provider, variable] of [
    ['openai', 'OPENAI_API_KEY'],
    ['anthropic', 'ANTHROPIC_API_KEY'],
  ] as const) {
    it(`names ${variable} when the ${provider} key is missing or empty`, () => {
      for (const env of [{}, { [variable]: '  ' }]) {
        const error = thrown(() => createEvaluator(spec({ provider }), env));
        expect(error.code).toBe('missing-api-key');
        expect(error.message).toBe(`the ${provider} evaluator needs ${variable}, which is not set`);
        expect(error.hint).toBe(`export ${variable}=... or choose --evaluator none (checks decide)`);
      }
    });
  }

  it('asks for a model when none is configured', () => {
    const error = thrown(() => createEvaluator(spec({ model: null }), { OPENAI_API_KEY: OPENAI_KEY }));
    expect(error.code).toBe('config');
    expect(error.message).not.toContain(OPENAI_KEY);
  });

  it('reaches OPENAI_BASE_URL from the environment with OPENAI_API_KEY', async () => {
    fake.openai.reply(NOT_YET);
    const evaluator = createEvaluator(spec(), { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: fake.openaiBaseURL });
    expect(evaluator).toMatchObject({ provider: 'openai', model: 'gpt-judge-mini' });
    const result = await evaluator.evaluate(makeInput());
    expect(result.kind).toBe('verdict');
    expect(fake.openai.requests[0]?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('lets the configured baseURL override the environment', async () => {
    const dead = await startFakeLlm();
    await dead.close();
    fake.anthropic.replyTool(NOT_YET);
    const evaluator = createEvaluator(spec({ provider: 'anthropic', model: 'claude-judge', baseURL: fake.anthropicBaseURL, baseURLFrom: 'user-config' }), {
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: dead.anthropicBaseURL,
    });
    const result = await evaluator.evaluate(makeInput());
    expect(result.kind).toBe('verdict');
    expect(fake.anthropic.requests).toHaveLength(1);
  });

  it('passes retries and maxInputChars through', async () => {
    fake.openai.fail(500).reply(NOT_YET);
    const evaluator = createEvaluator(spec({ retries: 0, maxInputChars: 5_000, baseURL: fake.openaiBaseURL, baseURLFrom: 'user-config' }), {
      OPENAI_API_KEY: OPENAI_KEY,
    });
    const result = await evaluator.evaluate(makeInput({ patch: 'p'.repeat(50_000) }));
    expect(result).toMatchObject({ kind: 'error', attempts: 1 });
    const body = fake.openai.requests[0]?.body as { messages: Array<{ content: string }> };
    expect(body.messages[1]!.content.length).toBeLessThanOrEqual(5_000);
  });

  it('keeps the key out of every result and error a failing server can provoke', async () => {
    fake.openai.fail(401, { error: { message: `bad key ${OPENAI_KEY}` } });
    fake.openai.fail(400, { error: { message: `model not found for key ${OPENAI_KEY}` } });
    fake.openai.replyText(`${OPENAI_KEY}`);
    fake.openai.reply({ achieved: OPENAI_KEY, reason: OPENAI_KEY });
    const evaluator = createEvaluator(spec({ baseURL: fake.openaiBaseURL, baseURLFrom: 'user-config' }), { OPENAI_API_KEY: OPENAI_KEY });
    for (let i = 0; i < 4; i += 1) {
      const result = await evaluator.evaluate(makeInput());
      expect(result.kind).toBe('error');
      expect(JSON.stringify(result)).not.toContain(OPENAI_KEY);
    }
  });
});

describe('createEvaluator: where the key may go', () => {
  const refusedSources: Array<EvaluatorSpec['baseURLFrom']> = ['workspace-config', 'request', undefined];
  for (const from of refusedSources) {
    it(`refuses a base URL from ${from ?? 'an unknown source'} (exit 2), naming the fix, before any request`, () => {
      const error = thrown(() => createEvaluator(spec({ baseURL: fake.openaiBaseURL, baseURLFrom: from }), { OPENAI_API_KEY: OPENAI_KEY }));
      expect(error.code).toBe('config');
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain(fake.openaiBaseURL);
      expect(error.message).not.toContain(OPENAI_KEY);
      expect(error.hint).toContain('evaluator.allowedBaseURLs');
      expect(fake.openai.requests).toHaveLength(0);
    });
  }

  it('sends the key to an untrusted base URL the user config allows (the URL itself, or its origin)', async () => {
    const origin = new URL(fake.openaiBaseURL).origin;
    for (const allowed of [`${fake.openaiBaseURL}/`, origin]) {
      fake.openai.reply(NOT_YET);
      const evaluator = createEvaluator(
        spec({ baseURL: fake.openaiBaseURL, baseURLFrom: 'workspace-config', allowedBaseURLs: [allowed] }),
        { OPENAI_API_KEY: OPENAI_KEY },
      );
      expect((await evaluator.evaluate(makeInput())).kind).toBe('verdict');
    }
    expect(fake.openai.requests).toHaveLength(2);
  });

  it('does not count another path or port of an allowed origin as allowed', () => {
    const url = new URL(fake.openaiBaseURL);
    const otherPort = `${url.protocol}//${url.hostname}:${Number(url.port) + 1}`;
    for (const allowed of [`${url.origin}/other`, otherPort]) {
      const error = thrown(() =>
        createEvaluator(spec({ baseURL: fake.openaiBaseURL, baseURLFrom: 'request', allowedBaseURLs: [allowed] }), {
          OPENAI_API_KEY: OPENAI_KEY,
        }),
      );
      expect(error.code).toBe('config');
    }
  });

  it("accepts the provider's default host from any source", () => {
    const evaluator = createEvaluator(spec({ baseURL: 'https://api.openai.com/v1', baseURLFrom: 'workspace-config' }), {
      OPENAI_API_KEY: OPENAI_KEY,
    });
    expect(evaluator.provider).toBe('openai');
  });

  it('redacts secrets the agent echoed before the evidence reaches the model', async () => {
    fake.openai.reply(NOT_YET);
    const evaluator = createEvaluator(spec(), { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: fake.openaiBaseURL });
    const stolen = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
    await evaluator.evaluate(makeInput({ agentFinalMessage: `your key is ${OPENAI_KEY}`, agentOutputTail: `token ${stolen}` }));
    const body = JSON.stringify(fake.openai.requests[0]?.body);
    expect(body).toContain('your key is [redacted:');
    expect(body).not.toContain(OPENAI_KEY);
    expect(body).not.toContain(stolen);
  });
});

describe('assertDifferentModels', () => {
  const refused: Array<[string, string]> = [
    ['gpt-4.1', 'gpt-4.1'],
    ['GPT-4.1', 'gpt-4.1'],
    ['openai/gpt-4.1', 'gpt-4.1'],
    ['gpt-4.1', 'openai:gpt-4.1'],
    ['anthropic/claude-sonnet-4-5', 'Claude-Sonnet-4-5'],
  ];
  for (const [agent, evaluator] of refused) {
    it(`refuses ${evaluator} judging ${agent}`, () => {
      const error = thrown(() => assertDifferentModels(agent, evaluator, false));
      expect(error.code).toBe('same-model');
      expect(error.message).toContain(evaluator);
      expect(error.hint).toContain('--allow-same-model');
    });
  }

  const allowed: Array<[string | null, string | null, boolean]> = [
    ['gpt-4.1', 'gpt-4.1-mini', false],
    ['claude-sonnet-4-5', 'gpt-4.1', false],
    ['llama3:8b', 'qwen2:8b', false],
    [null, 'gpt-4.1', false],
    ['gpt-4.1', null, false],
    [null, null, false],
    ['gpt-4.1', 'gpt-4.1', true],
  ];
  for (const [agent, evaluator, allow] of allowed) {
    it(`accepts ${String(evaluator)} judging ${String(agent)}${allow ? ' when allowed' : ''}`, () => {
      expect(() => assertDifferentModels(agent, evaluator, allow)).not.toThrow();
    });
  }

  it('normalizes names', () => {
    expect(normalizeModelName(' OpenAI/GPT-4.1 ')).toBe('gpt-4.1');
    expect(normalizeModelName('ollama:llama3:8b')).toBe('llama3:8b');
    expect(normalizeModelName('llama3:8b')).toBe('llama3:8b');
  });
});

describe('parseEvaluatorFlag', () => {
  const valid: Array<[string, { provider: string; model: string | null }]> = [
    ['none', { provider: 'none', model: null }],
    ['NONE', { provider: 'none', model: null }],
    ['openai:gpt-4.1-mini', { provider: 'openai', model: 'gpt-4.1-mini' }],
    ['anthropic:claude-haiku-4-5', { provider: 'anthropic', model: 'claude-haiku-4-5' }],
    ['openai:llama3:8b', { provider: 'openai', model: 'llama3:8b' }],
    ['OpenAI:gpt-4o', { provider: 'openai', model: 'gpt-4o' }],
  ];
  for (const [flag, expected] of valid) {
    it(`parses ${flag}`, () => {
      expect(parseEvaluatorFlag(flag)).toEqual(expected);
    });
  }

  for (const flag of ['', 'openai', 'openai:', 'gpt-4.1', 'google:gemini-2.5-pro', ':gpt-4.1']) {
    it(`refuses ${JSON.stringify(flag)} with a usage error`, () => {
      const error = thrown(() => parseEvaluatorFlag(flag));
      expect(error.code).toBe('usage');
      expect(error.message).toContain(JSON.stringify(flag));
      expect(error.hint).toContain('--evaluator openai:gpt-4.1-mini');
    });
  }
});
