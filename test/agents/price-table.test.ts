import { describe, expect, test } from 'vitest';
import { DEFAULT_PRICES, computeCost, findModelPrice, priceTokens } from '../../src/agents/price-table.js';

describe('findModelPrice', () => {
  test.each([
    ['gpt-5', 'gpt-5'],
    ['gpt-5-codex', 'gpt-5-codex'],
    ['gpt-5-mini-2025-08-07', 'gpt-5-mini'],
    ['GPT-4o-mini', 'gpt-4o-mini'],
    ['openai/gpt-4.1', 'gpt-4.1'],
    ['o3-2025-04-16', 'o3'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4'],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['claude-haiku-4-5', 'claude-haiku-4-5'],
  ])('%s is priced as %s', (model, key) => {
    expect(findModelPrice(model)).toBe(DEFAULT_PRICES[key]);
  });

  test.each(['gpt-5.5', 'o3x', 'llama-3-70b', ''])('%s has no price', (model) => {
    expect(findModelPrice(model)).toBeNull();
  });

  test('overrides win over the defaults and add models', () => {
    const overrides = { 'gpt-5': { input: 9, cachedInput: 1, output: 90 }, 'gpt-5.5': { input: 2, cachedInput: 0.2, output: 16 } };
    expect(findModelPrice('gpt-5', overrides)).toBe(overrides['gpt-5']);
    expect(findModelPrice('gpt-5.5', overrides)).toBe(overrides['gpt-5.5']);
    expect(findModelPrice('gpt-5-mini', overrides)).toBe(DEFAULT_PRICES['gpt-5-mini']);
  });
});

describe('priceTokens', () => {
  test('cached input is priced apart from input', () => {
    // 5 400 uncached × $1.25 + 600 cached × $0.125 + 60 output × $10, per million.
    const usd = priceTokens({ inputTokens: 5_400, cachedInputTokens: 600, outputTokens: 60 }, { input: 1.25, cachedInput: 0.125, output: 10 });
    expect(usd).toBe(0.007425);
  });

  test('cache writes use their own price, else the input price', () => {
    const tokens = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, cacheWriteTokens: 1_000_000 };
    expect(priceTokens(tokens, { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 })).toBe(3.75);
    expect(priceTokens(tokens, { input: 3, cachedInput: 0.3, output: 15 })).toBe(3);
  });

  test('no floating-point noise', () => {
    expect(priceTokens({ inputTokens: 100_000, cachedInputTokens: 200_000, outputTokens: 0 }, { input: 1, cachedInput: 1, output: 1 })).toBe(0.3);
  });
});

describe('computeCost', () => {
  test('unknown or missing model: null', () => {
    const tokens = { inputTokens: 10, cachedInputTokens: 0, outputTokens: 10 };
    expect(computeCost(null, tokens)).toBeNull();
    expect(computeCost('mystery-model', tokens)).toBeNull();
    expect(computeCost('gpt-4o', { inputTokens: 1_000_000, cachedInputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(13.75);
  });
});
