// One sample value per settings option of the start options' table, with the setting it must produce:
// the CLI tests pass them as real flags, the resolve-settings tests as flags and GOALD_* variables. Every
// sample differs from what the option's setting is without it, so a flag that reached nothing fails.
// The samples fit together in one run: a gemini adapter (a fixture CLI), an evaluator the fake LLM serves.

import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { DEFAULT_CHECK_TIMEOUT_MS } from '../../src/config/defaults.js';
import { SETTING_OPTIONS, type StartFlags } from '../../src/config/start-options.js';

export interface StartOptionSample {
  /** What the flag is given: its text, its texts (repeatable), or true (a switch). */
  value: string | string[] | true;
  /** The setting at the option's `setting` path afterwards (asymmetric matchers allowed). */
  expected: unknown;
}

const geminiFixture = fileURLToPath(new URL('../fixtures/agents/bin/gemini', import.meta.url));

type SettingOption = (typeof SETTING_OPTIONS)[number];

const START_OPTION_SAMPLES: Record<keyof StartFlags, StartOptionSample> = {
  agent: { value: geminiFixture, expected: geminiFixture },
  adapter: { value: 'gemini', expected: 'gemini' },
  model: { value: 'gemini-2.5-pro', expected: 'gemini-2.5-pro' },
  check: {
    value: ['true', 'test -d .git'],
    expected: [
      { name: 'true', run: 'true', timeoutMs: DEFAULT_CHECK_TIMEOUT_MS },
      { name: 'test -d .git', run: 'test -d .git', timeoutMs: DEFAULT_CHECK_TIMEOUT_MS },
    ],
  },
  evaluator: { value: 'openai:judge-model', expected: expect.objectContaining({ provider: 'openai', model: 'judge-model' }) },
  maxTurns: { value: '2', expected: 2 },
  tokenBudget: { value: '400_000', expected: 400_000 },
  turnTokenLimit: { value: '40000', expected: 40_000 },
  turnTimeout: { value: '45s', expected: 45_000 },
  costBudget: { value: '2.5', expected: 2.5 },
  wallClock: { value: '3h', expected: 3 * 3_600_000 },
  cooldown: { value: '0', expected: 0 },
  // `--no-progress 6`: commander delivers it as `progress: '6'`.
  progress: { value: '6', expected: 6 },
  allowSameModel: { value: true, expected: true },
  // `--no-guard`: given as the flag alone; commander (and a socket request) deliver it as `guard: false`.
  guard: { value: true, expected: false },
  // `--no-sandbox`: delivered as `sandbox: false`, like `--no-guard`.
  sandbox: { value: true, expected: 'off' },
  worktree: { value: true, expected: 'worktree' },
  discardOnFail: { value: true, expected: true },
  keepBest: { value: true, expected: true },
};

/** The sample of `option`. */
export function sampleOf(option: SettingOption): StartOptionSample {
  return START_OPTION_SAMPLES[option.key];
}

/** The command-line arguments that give `option` its sample. */
function sampleArgs(option: SettingOption): string[] {
  const { value } = sampleOf(option);
  if (value === true) return [option.flag];
  return (typeof value === 'string' ? [value] : value).flatMap((text) => [option.flag, text]);
}

/** Every sample as command-line arguments, in table order. */
export function allSampleArgs(): string[] {
  return SETTING_OPTIONS.flatMap(sampleArgs);
}

/** The sample of `option` as StartFlags (what commander or a socket request delivers). */
export function sampleFlags(option: SettingOption): StartFlags {
  const { value } = sampleOf(option);
  if (option.kind === 'value' && typeof value === 'string') return { [option.key]: value };
  if (option.kind === 'list' && Array.isArray(value)) return { [option.key]: value };
  if (option.kind === 'switch' && value === true) return { [option.key]: !('negated' in option) };
  throw new Error(`the sample of ${option.flag} does not fit a ${option.kind} option`);
}

/** The value at a dot path (`limits.maxTurns`) of a settings object. */
export function settingAt(settings: unknown, dotted: string): unknown {
  return dotted
    .split('.')
    .reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? Reflect.get(node, key) : undefined), settings);
}
