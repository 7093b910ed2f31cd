// Builds the configured evaluator, reading API keys from the environment at that moment (they are never
// part of the settings), and the rules that decide which evaluators are acceptable: the key goes only to a
// trusted base URL (secrets/base-url-policy.ts), and the evidence is redacted before any model sees it.

import type { EvaluatorProvider, EvaluatorSpec } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { assertTrustedBaseURL } from '../secrets/base-url-policy.js';
import { redactJson } from '../secrets/redact.js';
import { createAnthropicEvaluator } from './anthropic-evaluator.js';
import { createNoneEvaluator } from './none-evaluator.js';
import { createOpenAIEvaluator } from './openai-evaluator.js';
import type { Evaluator } from './types.js';

const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

const KEY_VARIABLES = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;
const BASE_URL_VARIABLES = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL' } as const;
const DEFAULT_BASE_URLS = { openai: DEFAULT_OPENAI_BASE_URL, anthropic: DEFAULT_ANTHROPIC_BASE_URL } as const;

// Creates the evaluator a goal's settings ask for; throws GoaldError when its API key or model is missing.
export function createEvaluator(spec: EvaluatorSpec, env: NodeJS.ProcessEnv): Evaluator {
  if (spec.provider === 'none') return createNoneEvaluator();
  const provider = spec.provider;
  const keyVariable = KEY_VARIABLES[provider];
  const apiKey = env[keyVariable]?.trim() ?? '';
  if (apiKey === '') {
    throw new GoaldError(
      'missing-api-key',
      `the ${provider} evaluator needs ${keyVariable}, which is not set`,
      `export ${keyVariable}=... or choose --evaluator none (checks decide)`,
    );
  }
  const model = spec.model?.trim() ?? '';
  if (model === '') {
    throw new GoaldError(
      'config',
      `the ${provider} evaluator needs a model, and none was given`,
      provider === 'openai' ? 'for example --evaluator openai:gpt-4.1-mini' : 'for example --evaluator anthropic:claude-haiku-4-5',
    );
  }
  const envBaseURL = env[BASE_URL_VARIABLES[provider]]?.trim();
  const baseURL = spec.baseURL ?? (envBaseURL === undefined || envBaseURL === '' ? DEFAULT_BASE_URLS[provider] : envBaseURL);
  // A base URL from the environment given here is the daemon's own (resolution turns a request's into
  // spec.baseURL with baseURLFrom "request"); the provider's default needs no vouching either.
  const from = spec.baseURL === null || spec.baseURL === DEFAULT_BASE_URLS[provider] ? null : spec.baseURLFrom;
  assertTrustedBaseURL({ provider, keyVariable, baseURL, from, allowed: spec.allowedBaseURLs ?? [] });
  const options = {
    model,
    baseURL,
    apiKey,
    timeoutMs: spec.timeoutMs,
    retries: spec.retries,
    maxInputChars: spec.maxInputChars,
  };
  const evaluator = provider === 'openai' ? createOpenAIEvaluator(options) : createAnthropicEvaluator(options);
  return withRedactedEvidence(evaluator, { ...process.env, ...env });
}

// The agent may have printed a key (or written one into a file the patch shows): no model receives it.
function withRedactedEvidence(evaluator: Evaluator, env: NodeJS.ProcessEnv): Evaluator {
  return {
    provider: evaluator.provider,
    model: evaluator.model,
    evaluate: (input, signal) => evaluator.evaluate(redactJson(input, env), signal),
  };
}

// Refuses an evaluator that is the agent's own model (a model grading its own work is no independent
// check), unless the user allowed it. Unknown models on either side pass.
export function assertDifferentModels(
  agentModel: string | null,
  evaluatorModel: string | null,
  allowSameModel: boolean,
): void {
  if (allowSameModel || agentModel === null || evaluatorModel === null) return;
  const agent = normalizeModelName(agentModel);
  if (agent === '' || agent !== normalizeModelName(evaluatorModel)) return;
  throw new GoaldError(
    'same-model',
    `the evaluator model "${evaluatorModel}" is the agent's own model ("${agentModel}"); a model grading its own work is not an independent judge`,
    'choose a different model with --evaluator, or pass --allow-same-model to accept it',
  );
}

// Known provider prefixes written as `provider:model`. Only these are stripped, because a colon is also
// part of model names on local servers (`llama3:8b`).
const PROVIDER_PREFIX = /^(openai|anthropic|google|gemini|azure|bedrock|vertex|openrouter|ollama):/;

/** Lowercases a model name and drops a provider prefix (`openai/gpt-4.1`, `anthropic:claude-...`). */
export function normalizeModelName(model: string): string {
  const lower = model.trim().toLowerCase().replace(PROVIDER_PREFIX, '');
  const slash = lower.lastIndexOf('/');
  return slash === -1 ? lower : lower.slice(slash + 1);
}

// Parses the --evaluator flag: `openai:<model>`, `anthropic:<model>` or `none`.
export function parseEvaluatorFlag(value: string): { provider: EvaluatorProvider; model: string | null } {
  const trimmed = value.trim();
  if (trimmed.toLowerCase() === 'none') return { provider: 'none', model: null };
  const colon = trimmed.indexOf(':');
  const provider = colon === -1 ? '' : trimmed.slice(0, colon).toLowerCase();
  // The model keeps any further colons: `openai:llama3:8b` names a local server's model.
  const model = colon === -1 ? '' : trimmed.slice(colon + 1).trim();
  if ((provider === 'openai' || provider === 'anthropic') && model !== '') return { provider, model };
  throw new GoaldError(
    'usage',
    `--evaluator must be openai:<model>, anthropic:<model> or none; got ${JSON.stringify(value)}`,
    'for example --evaluator openai:gpt-4.1-mini, --evaluator anthropic:claude-haiku-4-5 or --evaluator none',
  );
}
