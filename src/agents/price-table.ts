// Prices of common OpenAI and Anthropic models, in USD per million tokens, for CLIs that report tokens but
// no cost (Codex). A cost priced here is marked computed (TurnResult.costComputed); a CLI's own reported
// cost always wins. Users override or extend the table with a map of the same shape.

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  /** Input tokens served from the prompt cache (OpenAI `cached_tokens`, Anthropic cache reads). */
  cachedInput: number;
  output: number;
  /** Input tokens written to the cache (Anthropic cache creation); priced as input when absent. */
  cacheWrite?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Token counts to price; the three are disjoint (cached input is not inside `inputTokens`). */
export interface PricedTokens {
  /** Uncached input tokens (cache writes included unless given apart). */
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  cacheWriteTokens?: number;
}

const PER_MILLION = 1_000_000;

/**
 * List prices as published by OpenAI (platform.openai.com/docs/pricing) and Anthropic
 * (docs.anthropic.com/en/docs/about-claude/pricing). Keys are model names or name prefixes: the longest key
 * that the model's name starts with applies, so `gpt-5-codex` and dated snapshots such as
 * `claude-sonnet-4-5-20250929` find their family's row.
 */
export const DEFAULT_PRICES: PriceTable = {
  // OpenAI
  'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-codex': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'gpt-5.1': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5.1-codex-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  o3: { input: 2, cachedInput: 0.5, output: 8 },
  'o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'codex-mini-latest': { input: 1.5, cachedInput: 0.375, output: 6 },
  // Anthropic (cache writes: 1.25 × input, the 5-minute cache)
  'claude-opus-4': { input: 15, cachedInput: 1.5, output: 75, cacheWrite: 18.75 },
  'claude-opus-4-1': { input: 15, cachedInput: 1.5, output: 75, cacheWrite: 18.75 },
  'claude-opus-4-5': { input: 5, cachedInput: 0.5, output: 25, cacheWrite: 6.25 },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 },
  'claude-3-5-sonnet': { input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, cachedInput: 0.1, output: 5, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, output: 4, cacheWrite: 1 },
};

/**
 * The price of a model from the default table merged with `overrides` (an override replaces the row of the
 * same name): the exact name, else the longest prefix; null for a model neither knows. Names compare
 * case-insensitively, and a provider prefix (`openai/gpt-5`) is ignored.
 */
export function findModelPrice(model: string, overrides: PriceTable = {}): ModelPrice | null {
  const name = model.trim().toLowerCase().replace(/^[a-z0-9_-]+\//, '');
  if (name === '') return null;
  const table = new Map<string, ModelPrice>();
  for (const [key, price] of [...Object.entries(DEFAULT_PRICES), ...Object.entries(overrides)]) {
    table.set(key.toLowerCase(), price);
  }
  return lookUp(name, table);
}

/** The USD cost of tokens at a price. */
export function priceTokens(tokens: PricedTokens, price: ModelPrice): number {
  const cacheWrites = tokens.cacheWriteTokens ?? 0;
  const usd =
    (tokens.inputTokens * price.input +
      tokens.cachedInputTokens * price.cachedInput +
      cacheWrites * (price.cacheWrite ?? price.input) +
      tokens.outputTokens * price.output) /
    PER_MILLION;
  // Floating-point noise (0.30000000000000004) would show in reports; a micro-dollar is far below any budget.
  return Math.round(usd * 1e9) / 1e9;
}

/** The USD cost of a model's tokens from the table (with overrides), or null when the model has no price. */
export function computeCost(model: string | null, tokens: PricedTokens, overrides: PriceTable = {}): number | null {
  if (model === null) return null;
  const price = findModelPrice(model, overrides);
  return price === null ? null : priceTokens(tokens, price);
}

function lookUp(name: string, table: ReadonlyMap<string, ModelPrice>): ModelPrice | null {
  const exact = table.get(name);
  if (exact !== undefined) return exact;
  let best: { key: string; price: ModelPrice } | null = null;
  for (const [lower, price] of table) {
    // A prefix counts only up to a separator: `o3` prices `o3-2025-04-16`, but neither `o3x` nor `gpt-5`
    // prices `gpt-5.5` (another model, another price).
    const boundary = name.charAt(lower.length);
    if (name.startsWith(lower) && (boundary === '-' || boundary === '@' || boundary === ':')) {
      if (best === null || lower.length > best.key.length) best = { key: lower, price };
    }
  }
  return best?.price ?? null;
}
