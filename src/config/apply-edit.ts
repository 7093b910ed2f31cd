// What `goald edit`'s flags do to a goal's resolved settings (the flags: edit-options.ts).

import { GoaldError } from '../errors.js';
import type { EditFlags } from './edit-options.js';
import { uniqueCheckNames } from './resolve-settings.js';
import { requireEvaluatorModel, requireVerification } from './settings-rules.js';
import { applyStartFlags, type OptionLayer } from './start-options.js';
import type { GoalSettings } from './types.js';

/**
 * A goal's settings with the edit flags applied: limits replace limits, `--check` replaces every check,
 * `--evaluator` replaces provider and model (a base URL is kept only for the same provider). Bad values
 * are `usage` errors naming the flag; a result that cannot verify the goal is a `config` error.
 */
export function applyEditFlags(settings: GoalSettings, flags: EditFlags): { settings: GoalSettings; used: string[] } {
  const layer: OptionLayer = {};
  const used = applyStartFlags(flags, layer);
  const next: GoalSettings = {
    ...settings,
    limits: { ...settings.limits, ...layer.limits },
    checks: layer.checks === undefined ? settings.checks : uniqueCheckNames(layer.checks),
    evaluator: { ...settings.evaluator },
  };
  const choice = layer.evaluator;
  if (choice?.provider !== undefined) {
    const sameProvider = choice.provider === settings.evaluator.provider;
    next.evaluator.provider = choice.provider;
    next.evaluator.model = choice.provider === 'none' ? null : (choice.model ?? null);
    next.evaluator.baseURL = choice.provider !== 'none' && sameProvider ? settings.evaluator.baseURL : null;
  }
  requireEvaluatorModel(next.evaluator);
  requireVerification(next);
  return { settings: next, used };
}

/** Refuses an edit that names no setting (and no other action). */
export function requireSomeEdit(used: readonly string[], actions: { applyConfig: boolean }): void {
  if (used.length > 0 || actions.applyConfig) return;
  throw new GoaldError(
    'usage',
    'goald edit needs something to change',
    'pass --max-turns, --token-budget, --cost-budget, --wall-clock, --turn-timeout, --check or --evaluator (or --apply-config)',
  );
}
