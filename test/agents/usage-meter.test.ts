import { describe, expect, test } from 'vitest';
import { createUsageMeter, estimateTokens, isUsageLine, parseUsageLine } from '../../src/agents/usage-meter.js';

describe('parseUsageLine', () => {
  test.each([
    ['GOALD_USAGE {"input_tokens":10,"output_tokens":5,"cost_usd":0.5}', { input_tokens: 10, output_tokens: 5, cost_usd: 0.5 }],
    ['GOALD_USAGE {"input_tokens":10,"output_tokens":5}', { input_tokens: 10, output_tokens: 5 }],
    ['GOALD_USAGE {"input_tokens":10,"output_tokens":5,"cost_usd":null}', { input_tokens: 10, output_tokens: 5, cost_usd: null }],
    ['GOALD_USAGE  {"input_tokens":0,"output_tokens":0} ', { input_tokens: 0, output_tokens: 0 }],
    ['GOALD_USAGE {"input_tokens":-1,"output_tokens":5}', null],
    ['GOALD_USAGE {"input_tokens":1.5,"output_tokens":5}', null],
    ['GOALD_USAGE {"input_tokens":"10","output_tokens":5}', null],
    ['GOALD_USAGE {not json', null],
    ['GOALD_USAGE', null],
    ['  GOALD_USAGE {"input_tokens":10,"output_tokens":5}', null],
    ['usage: GOALD_USAGE {"input_tokens":10,"output_tokens":5}', null],
  ])('%s', (line, expected) => {
    expect(parseUsageLine(line)).toEqual(expected);
  });

  test('malformed usage lines still count as usage lines (never the final message)', () => {
    expect(isUsageLine('GOALD_USAGE {not json')).toBe(true);
    expect(isUsageLine('GOALD_USAGE')).toBe(true);
    expect(isUsageLine('GOALD_USAGES are nice')).toBe(false);
  });
});

describe('createUsageMeter', () => {
  test('estimates chars / 4, rounded up', () => {
    const meter = createUsageMeter('x'.repeat(9));
    meter.addOutput('y'.repeat(5));
    expect(meter.usage()).toEqual({ inputTokens: 3, outputTokens: 2, totalTokens: 5, costUsd: null, estimated: true });
    expect(meter.liveTokens()).toBe(5);
    expect(estimateTokens(0)).toBe(0);
  });

  test('sums reports; cost is null until some report carries one', () => {
    const meter = createUsageMeter('prompt');
    meter.addReport({ input_tokens: 100, output_tokens: 10 });
    expect(meter.usage().costUsd).toBeNull();
    meter.addReport({ input_tokens: 50, output_tokens: 5, cost_usd: 0.25 });
    expect(meter.usage()).toEqual({ inputTokens: 150, outputTokens: 15, totalTokens: 165, costUsd: 0.25, estimated: false });
  });

  test('the live count is the larger of the estimate and the reports, never their sum', () => {
    const meter = createUsageMeter('x'.repeat(400));
    meter.addOutput('y'.repeat(400));
    expect(meter.liveTokens()).toBe(200);
    meter.addReport({ input_tokens: 150, output_tokens: 20 });
    expect(meter.liveTokens()).toBe(200);
    meter.addReport({ input_tokens: 100, output_tokens: 0 });
    expect(meter.liveTokens()).toBe(270);
  });
});
