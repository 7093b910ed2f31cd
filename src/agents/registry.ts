// The agent adapters by name: the generic `command` adapter, the structured ones (claude-code, codex,
// gemini, aider) and goald's own agent (builtin); `AgentName` follows from the keys.

import type { AdapterName, AgentSpec } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { buildAgentEnv } from '../secrets/child-env.js';
import { createAiderAgent } from './aider-agent.js';
import { createBuiltinAgent } from './builtin/builtin-agent.js';
import { createClaudeCodeAgent, findGoaldHookCommand } from './claude-code-agent.js';
import { createCodexAgent } from './codex-agent.js';
import { createCommandAgent } from './command-agent.js';
import { createGeminiAgent } from './gemini-agent.js';
import type { AgentAdapter } from './types.js';

/** Builds an adapter from the goal's agent settings and the environment the agent inherits. */
export type CreateAgent = (spec: AgentSpec, env: NodeJS.ProcessEnv) => AgentAdapter;

export const agentFactories = {
  command: (spec, env) => createCommandAgent({ command: spec.command, env }),
  'claude-code': (spec, env) =>
    createClaudeCodeAgent({
      executable: spec.command === '' ? 'claude' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
      hookCommand: findGoaldHookCommand(),
    }),
  codex: (spec, env) =>
    createCodexAgent({
      executable: spec.command === '' ? 'codex' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
      prices: spec.prices,
    }),
  gemini: (spec, env) =>
    createGeminiAgent({
      executable: spec.command === '' ? 'gemini' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
    }),
  aider: (spec, env) =>
    createAiderAgent({
      executable: spec.command === '' ? 'aider' : spec.command,
      args: spec.args,
      model: spec.model,
      session: spec.session,
      env,
    }),
  builtin: (spec, env) => createBuiltinAgent({ spec, env }),
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
export function createAgent(spec: AgentSpec, env: NodeJS.ProcessEnv = process.env, trustedEnv?: NodeJS.ProcessEnv): AgentAdapter {
  if (!isAgentName(spec.adapter)) {
    throw new GoaldError(
      'config',
      `adapter "${String(spec.adapter)}" is not available yet`,
      'use --agent "<shell command>"',
    );
  }
  return agentFactories[spec.adapter](spec, buildAgentEnv(env, spec, trustedEnv));
}
