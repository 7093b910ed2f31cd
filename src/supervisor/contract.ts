// The goal contract (issue 9: the worker must not grade its own homework): what a goal runs with is fixed
// in its record when it starts, and changes only through the owner (`goald edit`) or an edit of
// goal.config.json made while no turn of the workspace runs. These are the pure parts: a config's
// fingerprint, what an edit changes, and which failed goals an edit may reopen.

import path from 'node:path';
import type { BreakerName } from '../../machines/goal.machine.js';
import { toJson } from '../../state/json.js';
import type { GoalRecord, HeldConfig, Json, SettingChange } from '../../state/types.js';
import { CONFIG_FILE_NAME } from '../config/load-config.js';
import type { ConfigFile } from '../config/schema.js';
import type { GoalSettings, Limits } from '../config/types.js';
import { GoaldError } from '../errors.js';

/** The breakers whose failure `goald edit --resume` may undo by raising the limit, with that limit and flag. */
export const BUDGET_BREAKERS = {
  'max-turns': { limit: 'maxTurns', flag: '--max-turns' },
  'token-budget': { limit: 'tokenBudget', flag: '--token-budget' },
  'cost-budget': { limit: 'costBudgetUsd', flag: '--cost-budget' },
  'wall-clock': { limit: 'wallClockMs', flag: '--wall-clock' },
} as const satisfies Partial<Record<BreakerName, { limit: keyof Limits; flag: `--${string}` }>>;

export type BudgetBreaker = keyof typeof BUDGET_BREAKERS;

/** Whether a failure reason is a budget breaker (the only failures `--resume` reopens). */
export function isBudgetBreaker(reason: string | null): reason is BudgetBreaker {
  return reason !== null && Object.hasOwn(BUDGET_BREAKERS, reason);
}

/** Whether `next` raises the limit `breaker` tripped on (`null` = off counts as raised; 0 or less is off too). */
export function raisesLimit(breaker: BudgetBreaker, before: Limits, next: Limits): boolean {
  const key = BUDGET_BREAKERS[breaker].limit;
  const old = before[key];
  const now = next[key];
  if (now === null || now <= 0) return old !== null && old > 0;
  return old !== null && old > 0 && now > old;
}

/** A fingerprint of a parsed goal.config.json (null: no file); equal configs have equal fingerprints. */
export function configHash(config: ConfigFile | null): string | null {
  if (config === null) return null;
  // Loaded on first use: `start --foreground` imports this module but hashes only when an edit is held.
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash('sha256').update(canonicalJson(config)).digest('hex');
}

/** Whether a path of a turn's delta (relative to the workspace) is the workspace's goal.config.json. */
export function isWorkspaceConfigPath(file: string): boolean {
  return file === CONFIG_FILE_NAME || file === `./${CONFIG_FILE_NAME}`;
}

/**
 * The unapproved edit of a workspace's goal.config.json stored on its newest goal that holds one, unless
 * the file (`currentHash`) is back to the config in force; null when nothing is held.
 */
export function heldEditOf(goals: readonly GoalRecord[], workspace: string, currentHash: string | null): { held: HeldConfig; goalId: string } | null {
  const holding = goals.filter((goal) => goal.workspace === workspace && goal.heldConfig).sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0];
  const held = holding?.heldConfig;
  if (holding === undefined || !held || held.inForceHash === currentHash) return null;
  return { held, goalId: holding.id };
}

/** The one-line refusal for an action that would put a held edit in force behind the owner's back. */
export function heldEditError(workspace: string, goalId: string | null): GoaldError {
  return new GoaldError(
    'conflict',
    `${path.join(workspace, CONFIG_FILE_NAME)} has an edit made during a turn that is held, not applied`,
    `apply it with goald edit ${goalId ?? '<goal>'} --apply-config, or revert the file`,
  );
}

/**
 * The settings a goal's contract consists of (its condition, workspace, ancestry and agent never change).
 * The guard is part of it: an edit that turns it off or narrows its test globs is recorded and announced
 * like one that raises a limit.
 */
function contractView(settings: GoalSettings): Json {
  const { checks, evaluator, limits, noisePaths, allowSameModel, recitation, guard } = settings;
  return toJson({ checks, evaluator, limits, noisePaths, allowSameModel, recitation, guard });
}

/** What changes between two settings of one goal: one entry per changed leaf (`limits.maxTurns`; arrays whole). */
export function diffSettings(before: GoalSettings, after: GoalSettings): SettingChange[] {
  return diffJson(contractView(before), contractView(after));
}

/** The setting paths an edit of goal.config.json touches (`limits.maxTurns`, `checks`, `loops`). */
export function changedConfigPaths(before: ConfigFile | null, after: ConfigFile | null): string[] {
  return diffJson(toJson(before ?? {}), toJson(after ?? {})).map((change) => change.setting);
}

/** Leaf-by-leaf differences of two JSON values; objects recurse, arrays and scalars compare whole. */
function diffJson(before: Json, after: Json, prefix = ''): SettingChange[] {
  // A section only one side has (`limits` added) is compared field by field against an empty one.
  const left = before === null && isObject(after) ? {} : before;
  const right = after === null && isObject(before) ? {} : after;
  if (isObject(left) && isObject(right)) {
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
    return keys.flatMap((key) => diffJson(left[key] ?? null, right[key] ?? null, prefix === '' ? key : `${prefix}.${key}`));
  }
  return canonicalJson(before) === canonicalJson(after) ? [] : [{ setting: prefix === '' ? '(all)' : prefix, from: before, to: after }];
}

function isObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** JSON with object keys sorted, so equal values serialize equally. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    return Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)));
  });
}
