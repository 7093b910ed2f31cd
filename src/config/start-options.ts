// The options of `goald start`, which `goald loop` takes too: one table from which the CLI's commander
// options, the socket request's `flags` schema and the flag and GOALD_* layers of resolve-settings are all
// derived. Each option says its flag, how its value is read, its help text (defaults come from
// defaults.ts, never restated here) and the setting it fills. Over 400 lines because the table is the
// point: every start option, in one list, in the order `goald start --help` shows them.

import { GoaldError } from '../errors.js';
import { DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_LIMITS } from './defaults.js';
import { parseDuration, parsePositiveInt, toDurationText } from './duration.js';
import {
  ADAPTER_NAMES,
  checkNameFor,
  parseAdapter,
  parseCostBudget,
  parseEvaluator,
  parsePositiveDuration,
  parseWallClock,
  type EvaluatorChoice,
} from './flag-values.js';
import type { AdapterName, CheckSpec, GuardSettings, IsolationSettings, Limits, SandboxMode } from './types.js';

/** The part of a settings layer that start options (and their GOALD_* variables) fill. */
export interface OptionLayer {
  agent?: { adapter?: AdapterName; command?: string; model?: string };
  checks?: CheckSpec[];
  evaluator?: EvaluatorChoice;
  limits?: Partial<Limits>;
  allowSameModel?: boolean;
  guard?: Partial<GuardSettings>;
  sandbox?: { mode?: SandboxMode };
  isolation?: Partial<IsolationSettings>;
  keepBest?: boolean;
}

interface OptionBase<Key extends string> {
  /** The property in commander's parsed options, in StartFlags and in the socket request's `flags`. */
  key: Key;
  /** The long flag, e.g. `--max-turns`. */
  flag: `--${string}`;
  /** A one-letter alias, e.g. `-C`. */
  short?: `-${string}`;
  /** The help line, with the default (from defaults.ts) where there is one. */
  description: string;
}

/** An option that takes one value (`--max-turns 5`); `apply` parses it (errors name `what`) into the layer. */
interface ValueOption<Key extends string = string> extends OptionBase<Key> {
  kind: 'value';
  /** The value's name in help, e.g. `<n>`. */
  placeholder: `<${string}>`;
  /** The settings path it fills, e.g. `limits.maxTurns`. */
  setting: string;
  /** The GOALD_* variable that sets the same thing, one layer lower. */
  env?: `GOALD_${string}`;
  /** Values commander accepts (anything else is a usage error before parsing). */
  choices?: readonly string[];
  apply(layer: OptionLayer, text: string, what: string): void;
}

/** A repeatable option (`--check a --check b`). */
interface ListOption<Key extends string = string> extends OptionBase<Key> {
  kind: 'list';
  placeholder: `<${string}>`;
  setting: string;
  apply(layer: OptionLayer, texts: readonly string[], what: string): void;
}

/**
 * A flag without a value (`--allow-same-model`); only `true` counts as given. A `negated` one is a
 * `--no-x` flag: commander reads it as `x`, true unless given, so only `false` counts as given.
 */
interface SwitchOption<Key extends string = string> extends OptionBase<Key> {
  kind: 'switch';
  setting: string;
  negated?: true;
  apply(layer: OptionLayer): void;
}

/**
 * An option of the start request itself rather than of the goal's settings (`-C`, `--no-queue`) or of the
 * output (`--json`); the commands read it directly.
 */
interface RequestOption<Key extends string = string> extends OptionBase<Key> {
  kind: 'request';
  placeholder?: `<${string}>`;
}

export type SettingOption = ValueOption | ListOption | SwitchOption;
export type StartOption = SettingOption | RequestOption;

// A limit option: its default and its settings path come from the Limits key it sets.
function limitOption<const Key extends string, L extends keyof Limits>(spec: {
  key: Key;
  flag: `--${string}`;
  placeholder: `<${string}>`;
  limit: L;
  env: `GOALD_${string}`;
  parse: (text: string, what: string) => Limits[L];
  describe: (defaultValue: Limits[L]) => string;
}): ValueOption<Key> {
  return {
    kind: 'value',
    key: spec.key,
    flag: spec.flag,
    placeholder: spec.placeholder,
    setting: `limits.${spec.limit}`,
    env: spec.env,
    description: spec.describe(DEFAULT_LIMITS[spec.limit]),
    apply: (layer, text, what) => {
      (layer.limits ??= {})[spec.limit] = spec.parse(text, what);
    },
  };
}

/** A non-empty shell command; `what` names the flag or variable. */
function requireCommand(text: string, what: string, example: string): string {
  if (text.trim() === '') {
    throw new GoaldError('usage', `${what}: the command is empty`, `pass a shell command: ${example}`);
  }
  return text;
}

/** Every start option, in help order. */
export const START_OPTIONS = [
  {
    kind: 'request',
    key: 'dir',
    short: '-C',
    flag: '--dir',
    placeholder: '<dir>',
    description: 'run in this directory (default: the current one)',
  },
  {
    kind: 'value',
    key: 'agent',
    flag: '--agent',
    placeholder: '<cmd>',
    setting: 'agent.command',
    env: 'GOALD_AGENT',
    description: 'agent shell command; the prompt arrives on stdin, in $GOALD_PROMPT_FILE and as {prompt}',
    apply: (layer, text, what) => {
      const agent = (layer.agent ??= {});
      agent.command = requireCommand(text, what, '--agent "my-agent {prompt}"');
      // A command alone means the command adapter; with --adapter it is that adapter's executable.
      agent.adapter ??= 'command';
    },
  },
  {
    kind: 'value',
    key: 'adapter',
    flag: '--adapter',
    placeholder: '<name>',
    setting: 'agent.adapter',
    choices: ADAPTER_NAMES,
    description: 'structured agent adapter',
    apply: (layer, text, what) => {
      (layer.agent ??= {}).adapter = parseAdapter(text, what);
    },
  },
  {
    kind: 'value',
    key: 'model',
    flag: '--model',
    placeholder: '<model>',
    setting: 'agent.model',
    env: 'GOALD_MODEL',
    description: "the agent's model; for --adapter builtin openai:<model> (any Chat Completions server) or anthropic:<model>",
    apply: (layer, text, what) => {
      if (text.trim() === '') {
        throw new GoaldError('usage', `${what}: the model is empty`, 'pass a model, e.g. --model openai:qwen2.5-coder');
      }
      (layer.agent ??= {}).model = text.trim();
    },
  },
  {
    kind: 'list',
    key: 'check',
    flag: '--check',
    placeholder: '<cmd>',
    setting: 'checks',
    description: 'a check command whose exit 0 means pass (repeatable)',
    apply: (layer, texts, what) => {
      layer.checks = texts.map((run) => ({
        name: checkNameFor(run),
        run: requireCommand(run, what, '--check "npm test"'),
        timeoutMs: DEFAULT_CHECK_TIMEOUT_MS,
      }));
    },
  },
  {
    kind: 'value',
    key: 'evaluator',
    flag: '--evaluator',
    placeholder: '<spec>',
    setting: 'evaluator',
    env: 'GOALD_EVALUATOR',
    description: 'openai:<model> | anthropic:<model> | none',
    apply: (layer, text, what) => {
      layer.evaluator = parseEvaluator(text, what);
    },
  },
  limitOption({
    key: 'maxTurns',
    flag: '--max-turns',
    placeholder: '<n>',
    limit: 'maxTurns',
    env: 'GOALD_MAX_TURNS',
    parse: parsePositiveInt,
    describe: (turns) => `stop after this many turns (default ${turns})`,
  }),
  limitOption({
    key: 'tokenBudget',
    flag: '--token-budget',
    placeholder: '<n>',
    limit: 'tokenBudget',
    env: 'GOALD_TOKEN_BUDGET',
    parse: parsePositiveInt,
    describe: (tokens) => `total tokens of all turns and evaluator calls (default ${tokens})`,
  }),
  limitOption({
    key: 'turnTokenLimit',
    flag: '--turn-token-limit',
    placeholder: '<n>',
    limit: 'turnTokenLimit',
    env: 'GOALD_TURN_TOKEN_LIMIT',
    parse: parsePositiveInt,
    describe: (tokens) => `kill a turn that passes this many tokens (default ${tokens})`,
  }),
  limitOption({
    key: 'turnTimeout',
    flag: '--turn-timeout',
    placeholder: '<dur>',
    limit: 'turnTimeoutMs',
    env: 'GOALD_TURN_TIMEOUT',
    parse: parsePositiveDuration,
    describe: (ms) => `kill a turn that runs longer (default ${toDurationText(ms)})`,
  }),
  limitOption({
    key: 'costBudget',
    flag: '--cost-budget',
    placeholder: '<usd>',
    limit: 'costBudgetUsd',
    env: 'GOALD_COST_BUDGET',
    parse: parseCostBudget,
    describe: (usd) => `stop before spending more than this many US dollars${usd === null ? '' : ` (default ${usd})`}`,
  }),
  limitOption({
    key: 'wallClock',
    flag: '--wall-clock',
    placeholder: '<dur>',
    limit: 'wallClockMs',
    env: 'GOALD_WALL_CLOCK',
    parse: parseWallClock,
    describe: (ms) => `stop after this much active time (${ms === null ? 'e.g. 2h' : `default ${toDurationText(ms)}`})`,
  }),
  limitOption({
    key: 'cooldown',
    flag: '--cooldown',
    placeholder: '<dur>',
    limit: 'cooldownMs',
    env: 'GOALD_COOLDOWN',
    parse: parseDuration,
    describe: (ms) => `pause between turns (default ${toDurationText(ms)}; 0 for none)`,
  }),
  limitOption({
    // commander reads a `--no-x <value>` flag as `x` (true unless given, the text when given).
    key: 'progress',
    flag: '--no-progress',
    placeholder: '<n>',
    limit: 'noProgress',
    env: 'GOALD_NO_PROGRESS',
    parse: parsePositiveInt,
    describe: (turns) => `stop after this many turns that change files without fewer remaining items or failing tests (default ${turns})`,
  }),
  {
    kind: 'switch',
    key: 'allowSameModel',
    flag: '--allow-same-model',
    setting: 'allowSameModel',
    description: 'allow the evaluator to be the same model as the agent',
    apply: (layer) => {
      layer.allowSameModel = true;
    },
  },
  {
    kind: 'switch',
    // commander reads `--no-guard` as `guard`, true unless the flag is given.
    key: 'guard',
    flag: '--no-guard',
    negated: true,
    setting: 'guard.enabled',
    description: 'turn the tamper guard off for this goal (deleted or skipped tests, changed check scripts and protected paths are then not tamper)',
    apply: (layer) => {
      (layer.guard ??= {}).enabled = false;
    },
  },
  {
    kind: 'switch',
    // commander reads `--no-sandbox` as `sandbox`, true unless the flag is given.
    key: 'sandbox',
    flag: '--no-sandbox',
    negated: true,
    setting: 'sandbox.mode',
    description: "run this goal's agent turns and checks without the bubblewrap sandbox (sandbox: \"off\")",
    apply: (layer) => {
      layer.sandbox = { mode: 'off' };
    },
  },
  {
    kind: 'switch',
    key: 'worktree',
    flag: '--worktree',
    setting: 'isolation.mode',
    description: 'run the goal in its own git worktree on a new branch goald/<id> (isolation: "worktree"); your checkout is not touched',
    apply: (layer) => {
      (layer.isolation ??= {}).mode = 'worktree';
    },
  },
  {
    kind: 'switch',
    key: 'discardOnFail',
    flag: '--discard-on-fail',
    setting: 'isolation.discardOnFail',
    description: "a worktree goal that fails deletes its branch too (default: kept for inspection)",
    apply: (layer) => {
      (layer.isolation ??= {}).discardOnFail = true;
    },
  },
  {
    kind: 'switch',
    key: 'keepBest',
    flag: '--keep-best',
    setting: 'keepBest',
    description: "regression guard: when a turn passes fewer tests than the best turn so far, restore the best turn's files before the next turn",
    apply: (layer) => {
      layer.keepBest = true;
    },
  },
  {
    kind: 'request',
    key: 'queue',
    // commander reads `--no-queue` as `queue`, true unless the flag is given.
    flag: '--no-queue',
    description: 'refuse instead of queueing when a goal is active in the workspace',
  },
  {
    kind: 'request',
    key: 'json',
    flag: '--json',
    description: 'print one JSON event per line',
  },
] as const satisfies readonly StartOption[];

/** The switches only `goald start` has (not `goald loop`): where the goal runs, and whether to wait for it. */
export const START_COMMAND_SWITCHES = [
  { key: 'foreground', flag: '--foreground', description: 'run in this process instead of the daemon' },
  { key: 'wait', flag: '--wait', description: 'wait for the goal to finish; exit 0 when achieved, 1 when failed' },
] as const satisfies ReadonlyArray<{ key: string; flag: `--${string}`; description: string }>;

type TableEntry = (typeof START_OPTIONS)[number];
type KeysOf<Kind extends StartOption['kind']> = Extract<TableEntry, { kind: Kind }>['key'];

/** The settings options, as strings the way commander delivers them (and the socket request carries them). */
export type StartFlags = { [Key in KeysOf<'value'>]?: string } & { [Key in KeysOf<'list'>]?: string[] } & {
  [Key in KeysOf<'switch'>]?: boolean;
};

/** The options that fill settings: what the flag and environment layers and the request's `flags` cover. */
export const SETTING_OPTIONS: readonly Extract<TableEntry, SettingOption>[] = START_OPTIONS.filter(
  (option): option is Extract<TableEntry, SettingOption> => option.kind !== 'request',
);

/** Reads the settings options out of parsed options (commander's, or a validated request's `flags`). */
export function readStartFlags(raw: Readonly<Record<string, unknown>>): StartFlags {
  const flags: StartFlags = {};
  for (const option of SETTING_OPTIONS) {
    const value = raw[option.key];
    if (option.kind === 'value') {
      if (typeof value === 'string') flags[option.key] = value;
    } else if (option.kind === 'list') {
      if (!Array.isArray(value)) continue;
      const texts = value.filter((item: unknown): item is string => typeof item === 'string');
      // No entries is the same as not given (commander's default for a repeatable option).
      if (texts.length > 0 && texts.length === value.length) flags[option.key] = texts;
    } else if (typeof value === 'boolean') {
      flags[option.key] = value;
    }
  }
  return flags;
}

/**
 * Applies the given flags to `layer`; returns the flags used, in table order. Values are checked here, so
 * a bad one is a `usage` error naming its flag.
 */
export function applyStartFlags(flags: StartFlags, layer: OptionLayer): string[] {
  const used: string[] = [];
  for (const option of SETTING_OPTIONS) {
    if (option.kind === 'value') {
      const text = flags[option.key];
      if (text === undefined) continue;
      used.push(option.flag);
      option.apply(layer, text, option.flag);
    } else if (option.kind === 'list') {
      const texts = flags[option.key];
      if (texts === undefined || texts.length === 0) continue;
      used.push(option.flag);
      option.apply(layer, texts, option.flag);
    } else if (flags[option.key] === ('negated' in option ? false : true)) {
      used.push(option.flag);
      option.apply(layer);
    }
  }
  return used;
}

/**
 * Applies the GOALD_* variables of the value options to `layer` (an empty variable counts as unset);
 * returns the variables used. A bad value throws a `usage` error naming the variable (the caller decides
 * whether that is a configuration error).
 */
export function applyStartEnv(env: NodeJS.ProcessEnv, layer: OptionLayer): string[] {
  const used: string[] = [];
  for (const option of SETTING_OPTIONS) {
    if (option.kind !== 'value' || !('env' in option) || option.env === undefined) continue;
    const name = option.env;
    const text = env[name];
    if (text === undefined || text === '') continue;
    used.push(name);
    option.apply(layer, text, name);
  }
  return used;
}
