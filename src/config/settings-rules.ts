// The rules a resolved GoalSettings must satisfy; each throws a `config` GoaldError naming the fix.

import { GoaldError } from '../errors.js';
import type { AgentSpec, EvaluatorSpec, GoalSettings } from './types.js';

/** The command adapter has no default command: something must say what to run (the builtin agent is goald). */
export function requireAgentCommand(agent: AgentSpec): void {
  if (agent.command.trim() === '' && agent.adapter !== 'builtin') {
    throw new GoaldError(
      'config',
      'no agent configured',
      'pass --agent "<shell command>" or set agent.command in goal.config.json',
    );
  }
}

/** openai and anthropic need a model name. */
export function requireEvaluatorModel(evaluator: EvaluatorSpec): void {
  if (evaluator.provider !== 'none' && evaluator.model === null) {
    throw new GoaldError(
      'config',
      `the ${evaluator.provider} evaluator has no model`,
      `pass --evaluator ${evaluator.provider}:<model> or set evaluator.model in goal.config.json`,
    );
  }
}

/** A goal must be verifiable: at least one check, or an evaluator. */
export function requireVerification(settings: Pick<GoalSettings, 'checks' | 'evaluator'>): void {
  if (settings.checks.length === 0 && settings.evaluator.provider === 'none') {
    throw new GoaldError(
      'config',
      'no way to verify the goal: no checks and evaluator "none"',
      'add --check "npm test" or choose --evaluator openai:<model>',
    );
  }
}
