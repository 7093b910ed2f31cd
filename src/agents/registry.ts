// The agent adapters by name: the generic `command` adapter, the structured ones (claude-code, codex,
// gemini, aider) and goald's own agent (builtin); `AgentName` follows from the keys.

import type { AdapterName, AgentSpec } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { buildAgentEnv } from '../secrets/child-env.js';
import { createCommandAgent } from './command-agent.js';
import type { AgentAdapter } from './types.js';

/** Builds an adapter from the goal's agent settings and the environment the agent inherits. */
export type CreateAgent = (spec: AgentSpec, env: NodeJS.ProcessEnv) => Promise<AgentAdapter>;

// Each structured adapter (its stream parser and the schemas of its CLI's output) loads when a goal uses
// it: a goal run by a shell command builds none of them, which is most of what `start` loads before its
// first agent runs that this goal never needs.
export const agentFactories = {
  command: async (spec, env) => createCommandAgent({ command: spec.command, env }),
  'claude-code': async (spec, env) => {
    const { createClaudeCodeAgent, findGoaldHookCommand } = await import('./claude-code-agent.js');
    return createClaudeCodeAgent({
      executable: spec.command === '' ? 'claude' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
      hookCommand: findGoaldHookCommand(),
    });
  },
  codex: async (spec, env) => {
    const { createCodexAgent } = await import('./codex-agent.js');
    return createCodexAgent({
      executable: spec.command === '' ? 'codex' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
      prices: spec.prices,
    });
  },
  gemini: async (spec, env) => {
    const { createGeminiAgent } = await import('./gemini-agent.js');
    return createGeminiAgent({
      executable: spec.command === '' ? 'gemini' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
    });
  },
  aider: async (spec, env) => {
    const { createAiderAgent } = await import('./aider-agent.js');
    return createAiderAgent({
      executable: spec.command === '' ? 'aider' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
    });
  },
  builtin: async (spec, env) => {
    const { createBuiltinAgent } = await import('./builtin/builtin-agent.js');
    return createBuiltinAgent({ spec, env });
  },
} satisfies Partial<Record<AdapterName, CreateAgent>>;

export type AgentName = keyof typeof agentFactories;

/** Whether an adapter name has an implementation yet. */
export function isAgentName(name: string): name is AgentName {
  return Object.hasOwn(agentFactories, name);
}

/**
 * Creates the adapter named by `spec.adapter`; a config error for adapters that do not exist yet. The
 * adapter inherits `env` without other vendors' credentials (src/secrets/child-env.ts); with `trustedEnv`
 * (the daemon's own), its vendor's variables come from there, never from a request.
 */
export async function createAgent(spec: AgentSpec, env: NodeJS.ProcessEnv = process.env, trustedEnv?: NodeJS.ProcessEnv): Promise<AgentAdapter> {
  if (!isAgentName(spec.adapter)) {
    throw new GoaldError(
      'config',
      `adapter "${String(spec.adapter)}" is not available yet`,
      'use --agent "<shell command>"',
    );
  }
  const environment = buildAgentEnv(env, spec, trustedEnv);
  const adapter = await agentFactories[spec.adapter](spec, environment);
  return adapter.environment === undefined ? Object.assign(adapter, { environment }) : adapter;
}
