import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { isGeminiUsageLimit, parseGeminiOutput } from '../../src/agents/gemini-output.js';

const stream = (name: string): string => readFileSync(fileURLToPath(new URL(`../fixtures/streams/${name}`, import.meta.url)), 'utf8');

describe('parseGeminiOutput', () => {
  test('a successful run: response, session, tokens summed over models, the main model, tool calls', () => {
    const output = parseGeminiOutput(stream('gemini-success.json'));
    expect(output).toEqual({
      response: expect.stringMatching(/^I added the `--json` flag/),
      sessionId: '5c1f8a0e-2b7d-4f3a-9e61-0d4c2b8a7f19',
      model: 'gemini-2.5-pro',
      tokens: {
        // prompt + tool: 182734 + 0 + 9203 + 28
        inputTokens: 191_965,
        // candidates + thoughts: 3121 + 2617 + 41 + 46
        outputTokens: 5_825,
        // the CLI's totals: 188472 + 9318
        totalTokens: 197_790,
        cachedTokens: 141_050,
      },
      toolCalls: [
        { name: 'read_file' },
        { name: 'read_file' },
        { name: 'replace' },
        { name: 'replace' },
        { name: 'run_shell_command' },
        { name: 'run_shell_command' },
      ],
      error: null,
    });
  });

  test("the CLI's totals add up: total = prompt + candidates + thoughts + tool", () => {
    const output = parseGeminiOutput(stream('gemini-success.json'));
    expect(output?.tokens?.totalTokens).toBe((output?.tokens?.inputTokens ?? 0) + (output?.tokens?.outputTokens ?? 0));
  });

  test('an error run: the error object, no response, no tokens', () => {
    expect(parseGeminiOutput(stream('gemini-auth-error.json'))).toEqual({
      response: null,
      sessionId: 'b2b90938-611f-4bd0-adf6-829e14549653',
      model: null,
      tokens: null,
      toolCalls: [],
      error: { type: 'Error', message: expect.stringMatching(/^Please set an Auth method/), code: 41 },
    });
  });

  test('the compact form on one line parses the same', () => {
    const compact = JSON.stringify(JSON.parse(stream('gemini-success.json')));
    expect(parseGeminiOutput(compact)).toEqual(parseGeminiOutput(stream('gemini-success.json')));
  });

  test('noise before the JSON (a wrapper banner) is skipped', () => {
    const output = parseGeminiOutput(`Loaded cached credentials.\nnvm: using node v20\n${stream('gemini-success.json')}`);
    expect(output?.sessionId).toBe('5c1f8a0e-2b7d-4f3a-9e61-0d4c2b8a7f19');
  });

  test.each([
    ['empty', ''],
    ['plain text', 'The capital of France is Paris.\n'],
    ['a JSON array', '[1, 2, 3]'],
    ['cut off mid-object', stream('gemini-success.json').slice(0, 400)],
  ])('no JSON object (%s) → null', (_, text) => {
    expect(parseGeminiOutput(text)).toBeNull();
  });

  test('odd fields are tolerated: missing or non-numeric counts count as 0', () => {
    const output = parseGeminiOutput(
      JSON.stringify({
        response: 'ok',
        stats: { models: { m: { tokens: { prompt: 10, candidates: 'many' } } }, tools: { byName: { x: { count: -1 } } } },
      }),
    );
    expect(output).toMatchObject({
      response: 'ok',
      model: 'm',
      tokens: { inputTokens: 10, outputTokens: 0, totalTokens: 10, cachedTokens: 0 },
      toolCalls: [],
    });
  });
});

describe('isGeminiUsageLimit', () => {
  test.each([
    [{ type: 'TerminalQuotaError', message: 'You have exhausted your daily quota on this model.', code: 429 }, true],
    [{ type: 'Error', message: '[API Error: got status: 429 Too Many Requests]', code: 1 }, true],
    [{ type: 'ApiError', message: 'Quota exceeded for quota metric', code: null }, true],
    [{ type: 'Error', message: 'RESOURCE_EXHAUSTED', code: 1 }, true],
    [{ type: 'Error', message: 'Please set an Auth method', code: 41 }, false],
    [{ type: 'FatalTurnLimitedError', message: 'Reached max session turns for this session.', code: 53 }, false],
  ])('%j → %s', (error, expected) => {
    expect(isGeminiUsageLimit(error)).toBe(expected);
  });
});
