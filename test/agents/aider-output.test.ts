import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { createAiderOutputReader, parseAiderCount, readAiderLine } from '../../src/agents/aider-output.js';

const stream = (name: string): string => readFileSync(fileURLToPath(new URL(`../fixtures/streams/${name}`, import.meta.url)), 'utf8');

function readAll(text: string): ReturnType<ReturnType<typeof createAiderOutputReader>['summary']> {
  const reader = createAiderOutputReader();
  for (const line of text.split('\n')) reader.push(line);
  return reader.summary();
}

describe('parseAiderCount', () => {
  test.each([
    ['850', 850],
    ['1.2k', 1_200],
    ['12k', 12_000],
    ['9.6k', 9_600],
    ['2K', 2_000],
    ['1.1M', 1_100_000],
    ['3m', 3_000_000],
    ['1,234', 1_234],
    ['0', 0],
    ['k', null],
    ['1.2.3k', null],
    ['', null],
  ])('%j → %j', (text, expected) => {
    expect(parseAiderCount(text)).toBe(expected);
  });
});

describe('readAiderLine', () => {
  test.each([
    ['Tokens: 12k sent, 1.2k received.', { kind: 'tokens', tokens: { sent: 12_000, cacheWrite: 0, cacheHit: 0, received: 1_200 }, cost: null }],
    [
      'Tokens: 12k sent, 1.2k received. Cost: $0.01 message, $0.05 session.',
      { kind: 'tokens', tokens: { sent: 12_000, cacheWrite: 0, cacheHit: 0, received: 1_200 }, cost: { messageUsd: 0.01, sessionUsd: 0.05 } },
    ],
    [
      'Tokens: 2.4k sent, 1.1k cache write, 3.2k cache hit, 215 received.',
      { kind: 'tokens', tokens: { sent: 2_400, cacheWrite: 1_100, cacheHit: 3_200, received: 215 }, cost: null },
    ],
    [
      'Tokens: 15k sent, 2.1k cache write, 8.2k cache read; 4.5k Total (1.2k thinking, 3.3k returned)',
      { kind: 'tokens', tokens: { sent: 15_000, cacheWrite: 2_100, cacheHit: 8_200, received: 4_500 }, cost: null },
    ],
    ['Cost: $0.0082 message, $1,234.50 session.', { kind: 'cost', cost: { messageUsd: 0.0082, sessionUsd: 1_234.5 } }],
    ['\u001b[32mApplied edit to src/a b.ts\u001b[0m', { kind: 'edit', filePath: 'src/a b.ts' }],
    ['Main model: anthropic/claude-sonnet-4-20250514 with diff edit format, infinite output', { kind: 'model', model: 'anthropic/claude-sonnet-4-20250514' }],
    ['Model: gpt-4o with diff edit format', { kind: 'model', model: 'gpt-4o' }],
    ['litellm.RateLimitError: AnthropicException - {"type":"rate_limit_error"}', { kind: 'rate-limit', message: 'litellm.RateLimitError: AnthropicException - {"type":"rate_limit_error"}' }],
    ['Commit 4f2a9c1 feat: add --json flag', { kind: 'status' }],
    ['Weak model: anthropic/claude-3-5-haiku-20241022', { kind: 'status' }],
    ['Tokens: lots sent', { kind: 'text', text: 'Tokens: lots sent' }],
    ['The tests pass now.', { kind: 'text', text: 'The tests pass now.' }],
  ])('%j', (line, expected) => {
    expect(readAiderLine(line)).toEqual(expected);
  });
});

describe('createAiderOutputReader', () => {
  test('a recorded session: reports summed per turn, the session cost, edits, model, final message', () => {
    expect(readAll(stream('aider-session.txt'))).toEqual({
      reports: 2,
      sent: 26_000,
      cacheWrite: 2_400,
      cacheHit: 9_600,
      received: 1_556,
      // The last running total, not 0.05 + 0.0082.
      costUsd: 0.06,
      model: 'anthropic/claude-sonnet-4-20250514',
      toolCalls: [
        { name: 'edit', filePath: 'src/cli/commands/status.ts' },
        { name: 'edit', filePath: 'test/cli/status.test.ts' },
      ],
      finalMessage: 'The status command now prints one JSON object per goal with `--json`.',
      rateLimit: null,
    });
  });

  test('a model aider has no prices for: tokens, no cost', () => {
    expect(readAll(stream('aider-no-cost.txt'))).toMatchObject({
      reports: 2,
      sent: 4_800,
      received: 946,
      costUsd: null,
      model: 'openai/qwen2.5-coder-32b-instruct',
      toolCalls: [{ name: 'edit', filePath: 'README.md' }],
      finalMessage: 'Done: the README has a title.',
    });
  });

  test('without session figures the message costs are summed', () => {
    const reader = createAiderOutputReader();
    reader.push('Tokens: 1k sent, 10 received.');
    reader.push('Cost: $0.01 message, $0.01 session.');
    expect(reader.summary().costUsd).toBe(0.01);
  });

  test('a Cost line that does not follow a usage report is not counted', () => {
    expect(readAll('Tokens: 1k sent, 10 received.\nsome reply\nCost: $9.99 message, $9.99 session.').costUsd).toBeNull();
  });

  test('the summary is live: it can be read after each line', () => {
    const reader = createAiderOutputReader();
    reader.push('Tokens: 1k sent, 10 received.');
    expect(reader.summary()).toMatchObject({ sent: 1_000, received: 10 });
    reader.push('Tokens: 2k sent, 20 received.');
    expect(reader.summary()).toMatchObject({ sent: 3_000, received: 30, reports: 2 });
  });

  test('a rate limit counts only while no usage report came after it', () => {
    const limited = 'litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error"}}';
    expect(readAll(`Tokens: 1k sent, 10 received.\n${limited}\nRetrying in 0.2 seconds...`).rateLimit).toBe(limited);
    expect(readAll(`${limited}\nRetrying in 0.2 seconds...\nTokens: 1k sent, 10 received.`).rateLimit).toBeNull();
  });
});
