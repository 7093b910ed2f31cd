// The goal contract's pure rules: config fingerprints, what an edit changes, which budget failures an
// edit may reopen, and the edit flags' effect on settings (parsed by the start options' own parsers).

import { describe, expect, it } from 'vitest';
import { applyEditFlags, requireSomeEdit } from '../../src/config/apply-edit.js';
import { DEFAULT_GUARD, DEFAULT_LIMITS } from '../../src/config/defaults.js';
import type { GoalSettings, Limits } from '../../src/config/types.js';
import { changedConfigPaths, configHash, diffSettings, isBudgetBreaker, isWorkspaceConfigPath, raisesLimit } from '../../src/supervisor/contract.js';

function settings(over: Partial<GoalSettings> = {}): GoalSettings {
  return {
    condition: 'tests pass',
    workspace: '/ws',
    checks: [{ name: 'npm test', run: 'npm test', timeoutMs: 600_000 }],
    agent: { adapter: 'command', command: 'agent', args: [], session: 'fresh', model: 'gpt-4.1', prices: {} },
    evaluator: { provider: 'openai', model: 'gpt-4.1-mini', baseURL: 'http://127.0.0.1:9/v1', maxInputChars: 24_000, skipWhenChecksFail: true, timeoutMs: 60_000, retries: 2 },
    limits: { ...DEFAULT_LIMITS, maxTurns: 3 },
    ancestry: {},
    noisePaths: [],
    allowSameModel: false,
    recitation: { everyToolCalls: 10 },
    guard: { ...DEFAULT_GUARD, protect: [], testFiles: [...DEFAULT_GUARD.testFiles] },
    ...over,
  };
}

const limits = (over: Partial<Limits>): Limits => ({ ...DEFAULT_LIMITS, ...over });

describe('contract rules', () => {
  it('fingerprints a config by content, not key order; no file is null', () => {
    expect(configHash({ goal: 'a', limits: { maxTurns: 3, tokenBudget: 9 } })).toBe(configHash({ limits: { tokenBudget: 9, maxTurns: 3 }, goal: 'a' }));
    expect(configHash({ limits: { maxTurns: 3 } })).not.toBe(configHash({ limits: { maxTurns: 4 } }));
    expect(configHash(null)).toBeNull();
    expect(isWorkspaceConfigPath('goal.config.json')).toBe(true);
    expect(isWorkspaceConfigPath('sub/goal.config.json')).toBe(false);
  });

  it('names each changed setting of a config edit; arrays (checks, loops) change whole', () => {
    expect(
      changedConfigPaths(
        { checks: [{ run: 'npm test' }], limits: { maxTurns: 3 } },
        { checks: [{ run: 'true' }], limits: { maxTurns: 1000 }, loops: [{ every: '1m' }] },
      ),
    ).toEqual(['checks', 'limits.maxTurns', 'loops']);
    expect(changedConfigPaths(null, { limits: { maxTurns: 3 } })).toEqual(['limits.maxTurns']);
    expect(changedConfigPaths({ goal: 'x' }, { goal: 'x' })).toEqual([]);
  });

  it('diffs the contract part of settings, old → new; condition, workspace and agent are not part of it', () => {
    const before = settings();
    const after = settings({ condition: 'other', limits: { ...before.limits, maxTurns: 10, costBudgetUsd: 2 }, agent: { ...before.agent, command: 'x' } });
    expect(diffSettings(before, after)).toEqual([
      { setting: 'limits.costBudgetUsd', from: null, to: 2 },
      { setting: 'limits.maxTurns', from: 3, to: 10 },
    ]);
  });

  it('counts the tamper guard as part of the contract: turning it off is a recorded change', () => {
    const before = settings();
    const after = settings({ guard: { ...before.guard, enabled: false, testFiles: ['spec/**'] } });
    expect(diffSettings(before, after)).toEqual([
      { setting: 'guard.enabled', from: true, to: false },
      { setting: 'guard.testFiles', from: before.guard.testFiles, to: ['spec/**'] },
    ]);
  });

  it.each([
    ['max-turns', { maxTurns: 3 }, { maxTurns: 4 }, true],
    ['max-turns', { maxTurns: 3 }, { maxTurns: 3 }, false],
    ['max-turns', { maxTurns: 3 }, { maxTurns: 2 }, false],
    ['max-turns', { maxTurns: 3 }, { maxTurns: 0 }, true],
    ['token-budget', { tokenBudget: 100 }, { tokenBudget: 100, maxTurns: 99 }, false],
    ['token-budget', { tokenBudget: 100 }, { tokenBudget: 101 }, true],
    ['cost-budget', { costBudgetUsd: 1 }, { costBudgetUsd: null }, true],
    ['cost-budget', { costBudgetUsd: 1 }, { costBudgetUsd: 0.5 }, false],
    ['wall-clock', { wallClockMs: 60_000 }, { wallClockMs: 120_000 }, true],
    ['wall-clock', { wallClockMs: 60_000 }, { wallClockMs: 60_000 }, false],
  ] as const)('%s: %j → %j raises the limit: %s', (breaker, before, after, expected) => {
    expect(raisesLimit(breaker, limits(before), limits(after))).toBe(expected);
  });

  it('reopens only budget failures', () => {
    expect(['max-turns', 'token-budget', 'cost-budget', 'wall-clock'].every(isBudgetBreaker)).toBe(true);
    expect(['stopped', 'stagnation', 'agent-failures', 'tamper', null].some(isBudgetBreaker)).toBe(false);
  });
});

describe('edit flags', () => {
  it('replace limits and checks, parsed like start flags', () => {
    const { settings: next, used } = applyEditFlags(settings(), { maxTurns: '10', wallClock: '2h', costBudget: 'off', check: ['a', 'a'] });
    expect(used).toEqual(['--check', '--max-turns', '--cost-budget', '--wall-clock']);
    expect(next.limits).toMatchObject({ maxTurns: 10, wallClockMs: 7_200_000, costBudgetUsd: null, tokenBudget: DEFAULT_LIMITS.tokenBudget });
    expect(next.checks.map((check) => check.name)).toEqual(['a', 'a #2']);
  });

  it('keep the base URL only for the same evaluator provider', () => {
    expect(applyEditFlags(settings(), { evaluator: 'openai:gpt-5' }).settings.evaluator).toMatchObject({ provider: 'openai', model: 'gpt-5', baseURL: 'http://127.0.0.1:9/v1' });
    expect(applyEditFlags(settings(), { evaluator: 'anthropic:claude-x' }).settings.evaluator).toMatchObject({ provider: 'anthropic', model: 'claude-x', baseURL: null });
    expect(applyEditFlags(settings(), { evaluator: 'none' }).settings.evaluator).toMatchObject({ provider: 'none', model: null, baseURL: null });
  });

  it('refuse bad values naming the flag, and a goal left without verification', () => {
    expect(() => applyEditFlags(settings(), { maxTurns: '0' })).toThrow(/--max-turns/);
    expect(() => applyEditFlags(settings(), { turnTimeout: '0' })).toThrow(/--turn-timeout: must be longer than 0/);
    expect(() => applyEditFlags(settings({ checks: [] }), { evaluator: 'none' })).toThrow(/no way to verify the goal/);
    expect(() => requireSomeEdit([], { applyConfig: false })).toThrow(/needs something to change/);
    expect(() => requireSomeEdit([], { applyConfig: true })).not.toThrow();
  });
});
