// What an agent or check process may see of goald's environment. The model vendors' credential variables
// (the evaluator's OPENAI_* and ANTHROPIC_*, and Google's GEMINI_* / GOOGLE_*) are removed, except the
// vendor the agent's own CLI talks to and the variables `agent.passEnv` names. Checks run code the agent
// wrote, so they get no vendor's variables at all beyond `agent.passEnv`. goald's own (GOALD_REDIS_URL) reach neither.

import { readCommandName } from '../agents/which.js';
import type { AgentSpec } from '../config/types.js';

export type CredentialVendor = 'openai' | 'anthropic' | 'google';

/** Each vendor's variables, as globs (`*` matches any run of characters). */
const VENDOR_VARIABLES: Readonly<Record<CredentialVendor, readonly string[]>> = {
  openai: ['OPENAI_*', 'AZURE_OPENAI_*'],
  anthropic: ['ANTHROPIC_*', 'CLAUDE_CODE_OAUTH_TOKEN'],
  google: ['GEMINI_*', 'GOOGLE_*'],
};

const ALL_VENDORS: readonly CredentialVendor[] = ['openai', 'anthropic', 'google'];

// goald's own credentials, which no agent or check ever sees, whatever `agent.passEnv` names: the cluster's
// Redis URL (its password) would let a turn rewrite its own goal's settings and records.
const GOALD_ONLY_VARIABLES = /^GOALD_REDIS_URL$/;

// The CLIs whose vendor is known, by executable name (also when run through the `command` adapter).
const VENDOR_OF_CLI: Readonly<Record<string, CredentialVendor>> = { claude: 'anthropic', codex: 'openai', gemini: 'google' };

// aider talks to whichever vendor its model belongs to; without a model it picks one by the keys it finds.
const VENDOR_OF_MODEL: ReadonlyArray<{ pattern: RegExp; vendor: CredentialVendor }> = [
  { pattern: /^(?:anthropic\/|claude|sonnet|opus|haiku)/i, vendor: 'anthropic' },
  { pattern: /^(?:openai\/|azure\/|gpt|chatgpt|o[1-9]|4o|4\.1)/i, vendor: 'openai' },
  { pattern: /^(?:gemini|google\/|vertex_ai\/|flash)/i, vendor: 'google' },
];

export interface ChildEnvPolicy {
  /** Vendors whose variables the process keeps. */
  keepVendors: readonly CredentialVendor[];
  /** Variable names or globs kept whatever the vendor (`agent.passEnv`). */
  passEnv: readonly string[];
}

/** The vendors whose credentials an agent's CLI needs: its own vendor, all of them when it cannot tell. */
export function vendorsOfAgent(spec: Pick<AgentSpec, 'adapter' | 'command' | 'model' | 'args'>): CredentialVendor[] {
  switch (spec.adapter) {
    case 'claude-code':
      return ['anthropic'];
    case 'codex':
      return ['openai'];
    case 'gemini':
      return ['google'];
    case 'aider': {
      const model = spec.model ?? modelFromArgs(spec.args);
      const vendor = model === null ? undefined : VENDOR_OF_MODEL.find(({ pattern }) => pattern.test(model))?.vendor;
      return vendor === undefined ? [...ALL_VENDORS] : [vendor];
    }
    case 'builtin': {
      // goald's own agent talks to the provider its model names (`openai:<model>`, `anthropic:<model>`).
      const provider = spec.model?.split(':')[0]?.trim().toLowerCase();
      return provider === 'openai' || provider === 'anthropic' ? [provider] : [];
    }
    case 'command': {
      const name = readCommandName(spec.command)?.split('/').at(-1);
      if (name === 'aider') return [...ALL_VENDORS];
      const vendor = name === undefined ? undefined : VENDOR_OF_CLI[name];
      return vendor === undefined ? [] : [vendor];
    }
  }
}

/** The environment of an agent or check process: `base` without the credentials the policy does not keep. */
function buildChildEnv(base: NodeJS.ProcessEnv, policy: ChildEnvPolicy): NodeJS.ProcessEnv {
  const removed = ALL_VENDORS.filter((vendor) => !policy.keepVendors.includes(vendor)).flatMap(
    (vendor) => VENDOR_VARIABLES[vendor],
  );
  const remove = globsToPattern(removed);
  const pass = globsToPattern(policy.passEnv);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (GOALD_ONLY_VARIABLES.test(name)) continue;
    if (remove !== null && remove.test(name) && (pass === null || !pass.test(name))) continue;
    env[name] = value;
  }
  return env;
}

/**
 * The environment of an agent: its vendor's credentials and `agent.passEnv`, no other vendor's. With
 * `trustedEnv` (the daemon's own, when `base` also holds a socket request's variables), every vendor
 * variable comes from it: a request's ANTHROPIC_BASE_URL must not send Claude Code's key elsewhere either.
 */
export function buildAgentEnv(
  base: NodeJS.ProcessEnv,
  spec: Pick<AgentSpec, 'adapter' | 'command' | 'model' | 'args' | 'passEnv'>,
  trustedEnv?: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv {
  const env = buildChildEnv(base, { keepVendors: vendorsOfAgent(spec), passEnv: spec.passEnv ?? [] });
  if (trustedEnv === undefined) return env;
  const vendor = globsToPattern(ALL_VENDORS.flatMap((name) => VENDOR_VARIABLES[name]));
  const trusted = buildChildEnv(trustedEnv, { keepVendors: vendorsOfAgent(spec), passEnv: spec.passEnv ?? [] });
  for (const name of Object.keys(env)) if (vendor?.test(name) === true) delete env[name];
  for (const [name, value] of Object.entries(trusted)) if (vendor?.test(name) === true) env[name] = value;
  return env;
}

/** The environment of a check: no vendor's credentials, only what `agent.passEnv` names. */
export function buildCheckEnv(base: NodeJS.ProcessEnv, passEnv: readonly string[] = []): NodeJS.ProcessEnv {
  return buildChildEnv(base, { keepVendors: [], passEnv });
}

function modelFromArgs(args: readonly string[]): string | null {
  for (const [index, arg] of args.entries()) {
    if (arg.startsWith('--model=')) return arg.slice('--model='.length);
    if (arg === '--model') return args[index + 1] ?? null;
  }
  return null;
}

// One anchored pattern for a list of globs (`*` any characters; names are matched whole, case-sensitively).
function globsToPattern(globs: readonly string[]): RegExp | null {
  if (globs.length === 0) return null;
  const alternatives = globs.map((glob) => glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*'));
  return new RegExp(`^(?:${alternatives.join('|')})$`);
}
