// The builtin agent's model, written `openai:<model>` (any Chat Completions server: OpenAI, vLLM, Ollama,
// llama.cpp's server) or `anthropic:<model>`, and where its key and base URL come from. Checked when the
// adapter is created, so bad input is a one-line exit 2 before turn 1.

import { GoaldError } from '../../errors.js';

export type ProviderName = 'openai' | 'anthropic';

export interface ModelSpec {
  provider: ProviderName;
  /** The model name as the server knows it (may hold colons: `openai:llama3:8b`). */
  model: string;
}

/** The environment variables each provider reads, as the evaluator reads them. */
const PROVIDER_VARIABLES: Readonly<Record<ProviderName, { key: string; baseURL: string; defaultBaseURL: string }>> = {
  openai: { key: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL', defaultBaseURL: 'https://api.openai.com/v1' },
  anthropic: { key: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL', defaultBaseURL: 'https://api.anthropic.com' },
};

const EXAMPLE = '--model openai:qwen2.5-coder (any OpenAI-compatible server) or --model anthropic:claude-sonnet-4-5';

/** Parses agent.model for the builtin adapter; a `config` error naming the fix when it is not usable. */
export function parseModelSpec(text: string | null): ModelSpec {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') {
    throw new GoaldError('config', 'the builtin agent needs a model, and none was given', `pass ${EXAMPLE}`);
  }
  const colon = trimmed.indexOf(':');
  const provider = colon === -1 ? '' : trimmed.slice(0, colon).toLowerCase();
  const model = colon === -1 ? '' : trimmed.slice(colon + 1).trim();
  if (provider !== 'openai' && provider !== 'anthropic') {
    throw new GoaldError(
      'config',
      `the builtin agent's model must start with openai: or anthropic:; got ${JSON.stringify(trimmed)}`,
      `pass ${EXAMPLE}`,
    );
  }
  if (model === '') {
    throw new GoaldError('config', `the builtin agent's model "${trimmed}" names no model after "${provider}:"`, `pass ${EXAMPLE}`);
  }
  return { provider, model };
}

/** The API key and base URL for a provider from the agent's environment; `missing-api-key` when unset. */
export function readEndpoint(spec: ModelSpec, env: NodeJS.ProcessEnv): { apiKey: string; baseURL: string } {
  const variables = PROVIDER_VARIABLES[spec.provider];
  const apiKey = env[variables.key]?.trim() ?? '';
  if (apiKey === '') {
    throw new GoaldError(
      'missing-api-key',
      `the builtin agent's ${spec.provider} model needs ${variables.key}, which is not set`,
      `export ${variables.key}=... (a local server accepts any value, e.g. ${variables.key}=local)`,
    );
  }
  const baseURL = env[variables.baseURL]?.trim();
  return { apiKey, baseURL: baseURL === undefined || baseURL === '' ? variables.defaultBaseURL : baseURL };
}
