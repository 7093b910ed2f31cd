// Before turn 1, the builtin agent's model server is asked whether it answers and knows the model (the
// models endpoints: no tokens spent), so a wrong base URL, a refused key or an unknown model is a one-line
// exit 2 at `goald start` rather than a failed turn. Only clear answers refuse: a server that is slow, or
// that does not implement the endpoint, passes and the turn finds out. Loaded on first use (the SDKs).

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { errorChain } from '../../error-chain.js';
import { GoaldError } from '../../errors.js';
import { apiErrorDetail } from '../../evaluator/describe-sdk-error.js';
import type { ModelSpec } from './model-spec.js';

// A server that takes longer than this to list its models is left to the turn to judge.
const CHECK_TIMEOUT_MS = 15_000;

/** Throws a `config` GoaldError when the server does not answer, refuses the key, or does not know the model. */
export async function checkModelServer(spec: ModelSpec, endpoint: { apiKey: string; baseURL: string }): Promise<void> {
  const host = hostOf(endpoint.baseURL);
  const variables = spec.provider === 'openai' ? { key: 'OPENAI_API_KEY', url: 'OPENAI_BASE_URL' } : { key: 'ANTHROPIC_API_KEY', url: 'ANTHROPIC_BASE_URL' };
  const classes = spec.provider === 'openai' ? OpenAI : Anthropic;
  const options = { apiKey: endpoint.apiKey, baseURL: endpoint.baseURL, maxRetries: 0, timeout: CHECK_TIMEOUT_MS };
  try {
    if (spec.provider === 'openai') await new OpenAI({ ...options, organization: null, project: null }).models.retrieve(spec.model);
    else await new Anthropic(options).models.retrieve(spec.model);
    return;
  } catch (error) {
    if (error instanceof classes.APIConnectionTimeoutError) return;
    if (error instanceof classes.APIConnectionError) {
      throw new GoaldError(
        'config',
        `the builtin agent's model server at ${host} does not answer${causeOf(error)}`,
        `start the server, or set ${variables.url} to its URL${spec.provider === 'openai' ? ' (ending in /v1)' : ''}`,
      );
    }
    if (!(error instanceof classes.APIError)) return;
    if (error.status === 401 || error.status === 403) {
      throw new GoaldError('config', `the model server at ${host} refused the key in ${variables.key} (HTTP ${error.status}: ${apiErrorDetail(error)})`, `check ${variables.key}`);
    }
    if (error.status !== 404) return;
    if (spec.provider === 'anthropic') {
      if (errorType(error.error) === 'not_found_error') {
        throw new GoaldError('config', `the model server at ${host} does not know the model "${spec.model}" (${apiErrorDetail(error)})`, 'pass a model it serves, e.g. --model anthropic:claude-sonnet-4-5');
      }
      return;
    }
  }
  await checkListedModels(spec.model, new OpenAI({ ...options, organization: null, project: null }), host);
}

// An OpenAI-compatible server without the retrieve route: its list decides. A server that lists one
// model serves whatever it loaded under any name (llama.cpp's server), so only a longer list refuses.
async function checkListedModels(model: string, client: OpenAI, host: string): Promise<void> {
  let ids: string[];
  try {
    ids = (await client.models.list()).data.map((entry) => entry.id);
  } catch {
    return;
  }
  if (ids.length <= 1 || ids.includes(model)) return;
  throw new GoaldError(
    'config',
    `the model server at ${host} does not serve the model "${model}"; it serves ${ids.slice(0, 8).join(', ')}${ids.length > 8 ? ', …' : ''}`,
    `pass one of them, e.g. --model openai:${ids[0] ?? '<model>'}`,
  );
}

function hostOf(baseURL: string): string {
  try {
    return new URL(baseURL).host;
  } catch {
    return baseURL;
  }
}

// ": connect ECONNREFUSED 127.0.0.1:9": the innermost cause, which says why.
function causeOf(error: Error): string {
  const message = errorChain(error.cause).at(-1)?.message ?? '';
  return message === '' ? '' : `: ${message}`;
}

function errorType(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const inner: unknown = body.error;
  if (typeof inner !== 'object' || inner === null || !('type' in inner)) return null;
  return typeof inner.type === 'string' ? inner.type : null;
}
