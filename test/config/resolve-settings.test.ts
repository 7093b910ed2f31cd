import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_GUARD, DEFAULT_LIMITS, DEFAULT_NOISE_PATHS, DEFAULT_TEST_FILES } from '../../src/config/defaults.js';
import {
  resolveGoalSettings,
  resolveUserConfigPath,
  type ResolvedSettings,
  type StartFlags,
} from '../../src/config/resolve-settings.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { SETTING_OPTIONS } from '../../src/config/start-options.js';
import type { GoalSettings } from '../../src/config/types.js';
import { GoaldError } from '../../src/errors.js';
import { sampleFlags, sampleOf, settingAt } from '../cli/start-option-samples.js';

let dir: string;
let workspace: string;
let userConfigPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'goald-settings-'));
  workspace = join(dir, 'ws');
  userConfigPath = join(dir, 'user', 'config.json');
  await mkdir(workspace);
  await mkdir(join(dir, 'user'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Setup {
  condition?: string;
  flags?: StartFlags;
  env?: NodeJS.ProcessEnv;
  workspaceConfig?: ConfigFile;
  userConfig?: ConfigFile;
}

/** Writes the config files of `setup` (removing absent ones) and resolves. */
async function resolveWith(setup: Setup): Promise<ResolvedSettings> {
  await rm(join(workspace, 'goal.config.json'), { force: true });
  await rm(userConfigPath, { force: true });
  if (setup.workspaceConfig !== undefined) {
    await writeFile(join(workspace, 'goal.config.json'), JSON.stringify(setup.workspaceConfig));
  }
  if (setup.userConfig !== undefined) await writeFile(userConfigPath, JSON.stringify(setup.userConfig));
  return resolveGoalSettings({
    condition: 'condition' in setup ? setup.condition : 'tests pass',
    workspace,
    flags: setup.flags ?? {},
    env: setup.env ?? {},
    userConfigPath,
  });
}

/** The GoaldError a promise rejects with. */
async function errorOf(promise: Promise<unknown>): Promise<GoaldError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GoaldError)) throw new Error(`expected a GoaldError, got ${String(error)}`);
  return error;
}

const VALID: ConfigFile = { agent: { command: 'agent.sh' }, checks: [{ run: 'true' }] };

interface PrecedenceRow {
  field: string;
  flags: StartFlags;
  env: NodeJS.ProcessEnv;
  workspaceConfig: ConfigFile;
  userConfig: ConfigFile;
  /** Config that makes the settings valid without touching the field (merged under userConfig). */
  fill?: ConfigFile;
  read: (settings: GoalSettings) => unknown;
  /** With flags+env+workspace+user, env+workspace+user, workspace+user, user, nothing. */
  expected: [unknown, unknown, unknown, unknown, unknown];
}

const rows: PrecedenceRow[] = [
  {
    field: 'maxTurns',
    flags: { maxTurns: '7' },
    env: { GOALD_MAX_TURNS: '8' },
    workspaceConfig: { limits: { maxTurns: 9 } },
    userConfig: { limits: { maxTurns: 10 } },
    read: (s) => s.limits.maxTurns,
    expected: [7, 8, 9, 10, 20],
  },
  {
    field: 'tokenBudget',
    flags: { tokenBudget: '1000' },
    env: { GOALD_TOKEN_BUDGET: '2_000' },
    workspaceConfig: { limits: { tokenBudget: 3000 } },
    userConfig: { limits: { tokenBudget: 4000 } },
    read: (s) => s.limits.tokenBudget,
    expected: [1000, 2000, 3000, 4000, 500_000],
  },
  {
    field: 'turnTokenLimit',
    flags: { turnTokenLimit: '11' },
    env: { GOALD_TURN_TOKEN_LIMIT: '12' },
    workspaceConfig: { limits: { turnTokenLimit: 13 } },
    userConfig: { limits: { turnTokenLimit: 14 } },
    read: (s) => s.limits.turnTokenLimit,
    expected: [11, 12, 13, 14, 50_000],
  },
  {
    field: 'turnTimeout',
    flags: { turnTimeout: '1m' },
    env: { GOALD_TURN_TIMEOUT: '2m' },
    workspaceConfig: { limits: { turnTimeout: '3m' } },
    userConfig: { limits: { turnTimeout: 240_000 } },
    read: (s) => s.limits.turnTimeoutMs,
    expected: [60_000, 120_000, 180_000, 240_000, 1_800_000],
  },
  {
    field: 'cooldown',
    flags: { cooldown: '0' },
    env: { GOALD_COOLDOWN: '1s' },
    workspaceConfig: { limits: { cooldown: 3000 } },
    userConfig: { limits: { cooldown: '4s' } },
    read: (s) => s.limits.cooldownMs,
    expected: [0, 1000, 3000, 4000, 2000],
  },
  {
    field: 'costBudget',
    flags: { costBudget: '1.5' },
    env: { GOALD_COST_BUDGET: '2' },
    workspaceConfig: { limits: { costBudget: 3 } },
    userConfig: { limits: { costBudget: 4 } },
    read: (s) => s.limits.costBudgetUsd,
    expected: [1.5, 2, 3, 4, null],
  },
  {
    field: 'wallClock',
    flags: { wallClock: '1h' },
    env: { GOALD_WALL_CLOCK: '2h' },
    workspaceConfig: { limits: { wallClock: '3h' } },
    userConfig: { limits: { wallClock: '4h' } },
    read: (s) => s.limits.wallClockMs,
    expected: [3_600_000, 7_200_000, 10_800_000, 14_400_000, null],
  },
  {
    field: 'evaluator',
    flags: { evaluator: 'openai:f' },
    env: { GOALD_EVALUATOR: 'anthropic:e' },
    workspaceConfig: { evaluator: { provider: 'openai', model: 'w' } },
    userConfig: { evaluator: { provider: 'anthropic', model: 'u' } },
    read: (s) => `${s.evaluator.provider}:${s.evaluator.model}`,
    expected: ['openai:f', 'anthropic:e', 'openai:w', 'anthropic:u', 'none:null'],
  },
  {
    field: 'agent command',
    flags: { agent: 'flag.sh' },
    env: { GOALD_AGENT: 'env.sh' },
    workspaceConfig: { agent: { command: 'ws.sh' } },
    userConfig: { agent: { command: 'user.sh' } },
    fill: { checks: [{ run: 'true' }], agent: { command: 'fill.sh' } },
    read: (s) => s.agent.command,
    expected: ['flag.sh', 'env.sh', 'ws.sh', 'user.sh', 'fill.sh'],
  },
  {
    field: 'checks (no environment variable: env falls through)',
    flags: { check: ['f'] },
    env: {},
    workspaceConfig: { checks: [{ run: 'w' }] },
    userConfig: { checks: [{ run: 'u' }] },
    fill: { agent: { command: 'a' }, evaluator: { provider: 'openai', model: 'm' } },
    read: (s) => s.checks.map((check) => check.run),
    expected: [['f'], ['w'], ['w'], ['u'], []],
  },
];

describe('precedence: flags > environment > workspace > user > defaults', () => {
  it.each(rows)('$field', async (row) => {
    const fill = row.fill ?? VALID;
    const levels: Setup[] = [
      { flags: row.flags, env: row.env, workspaceConfig: row.workspaceConfig, userConfig: { ...fill, ...row.userConfig } },
      { env: row.env, workspaceConfig: row.workspaceConfig, userConfig: { ...fill, ...row.userConfig } },
      { workspaceConfig: row.workspaceConfig, userConfig: { ...fill, ...row.userConfig } },
      { userConfig: { ...fill, ...row.userConfig } },
      { userConfig: fill },
    ];
    const seen: unknown[] = [];
    for (const level of levels) seen.push(row.read((await resolveWith(level)).settings));
    expect(seen).toEqual(row.expected);
  });

  it('names the sources that contributed, highest first', async () => {
    const { sources } = await resolveWith({
      flags: { maxTurns: '3', check: ['npm test'] },
      env: { GOALD_AGENT: 'a.sh', GOALD_COOLDOWN: '1s', UNRELATED: 'x' },
      workspaceConfig: {},
      userConfig: {},
    });
    expect(sources).toEqual([
      'flags: --check, --max-turns',
      'environment: GOALD_AGENT, GOALD_COOLDOWN',
      join(workspace, 'goal.config.json'),
      userConfigPath,
      'defaults',
    ]);
  });
});

describe('the start options table (config/start-options.ts)', () => {
  it.each(SETTING_OPTIONS.map((option) => [option.flag, option.setting, option] as const))(
    '%s sets %s',
    async (_flag, setting, option) => {
      const { settings, sources } = await resolveWith({ flags: sampleFlags(option), userConfig: VALID });
      expect(settingAt(settings, setting)).toEqual(sampleOf(option).expected);
      expect(sources[0]).toBe(`flags: ${option.flag}`);
      const without = await resolveWith({ userConfig: VALID });
      expect(settingAt(without.settings, setting)).not.toEqual(sampleOf(option).expected);
    },
  );

  const withEnv = SETTING_OPTIONS.flatMap((option) =>
    option.kind === 'value' && 'env' in option && option.env !== undefined ? [[option.env, option.setting, option] as const] : [],
  );

  it.each(withEnv)('%s sets %s one layer below the flag', async (name, setting, option) => {
    const { value, expected } = sampleOf(option);
    const { settings, sources } = await resolveWith({ env: { [name]: String(value) }, userConfig: VALID });
    expect(settingAt(settings, setting)).toEqual(expected);
    expect(sources[0]).toBe(`environment: ${name}`);
  });

  it.each(withEnv)('%s: a bad value is a config error naming the variable', async (name) => {
    const error = await errorOf(resolveWith({ env: { [name]: ' ' }, userConfig: VALID }));
    expect(error.code).toBe('config');
    expect(error.message).toMatch(new RegExp(`^${name}: `));
    expect(error.hint).toBeTruthy();
  });
});

describe('defaults', () => {
  it('fills everything not configured', async () => {
    const { settings, warnings } = await resolveWith({ flags: { agent: 'a.sh', check: ['npm test'] } });
    expect(warnings).toEqual([]);
    expect(settings).toEqual({
      condition: 'tests pass',
      workspace,
      checks: [{ name: 'npm test', run: 'npm test', timeoutMs: 600_000 }],
      agent: { adapter: 'command', command: 'a.sh', args: [], session: 'fresh', model: null, prices: {} },
      evaluator: {
        provider: 'none',
        model: null,
        baseURL: null,
        maxInputChars: 24_000,
        skipWhenChecksFail: true,
        timeoutMs: 60_000,
        retries: 2,
      },
      limits: { ...DEFAULT_LIMITS, repeatedDiff: { count: 3, window: 5 } },
      ancestry: {},
      noisePaths: [...DEFAULT_NOISE_PATHS],
      allowSameModel: false,
      recitation: { everyToolCalls: 10 },
      guard: { ...DEFAULT_GUARD, protect: [], testFiles: [...DEFAULT_TEST_FILES] },
      sandbox: { mode: 'auto', network: true, writable: [], readable: [], hidden: [], bwrap: null },
      keepBest: false,
    } satisfies GoalSettings);
  });

  it('agent.prices reach the settings (for CLIs that report no cost)', async () => {
    const price = { input: 1.5, cachedInput: 0.15, output: 6 };
    const { settings } = await resolveWith({
      flags: { check: ['t'] },
      workspaceConfig: { agent: { adapter: 'codex', model: 'my-model', prices: { 'my-model': price } } },
    });
    expect(settings.agent).toMatchObject({ adapter: 'codex', model: 'my-model', prices: { 'my-model': price } });
    const plain = await resolveWith({ flags: { agent: 'a.sh', check: ['t'] } });
    expect(plain.settings.agent.prices).toEqual({});
  });

  it('recitation cadence: the workspace file beats the user file beats the default', async () => {
    expect((await resolveWith({ flags: { agent: 'a.sh', check: ['t'] } })).settings.recitation.everyToolCalls).toBe(10);
    const both = await resolveWith({
      flags: { agent: 'a.sh', check: ['t'] },
      workspaceConfig: { recitation: { everyToolCalls: 3 } },
      userConfig: { recitation: { everyToolCalls: 7 } },
    });
    expect(both.settings.recitation.everyToolCalls).toBe(3);
    const user = await resolveWith({ flags: { agent: 'a.sh', check: ['t'] }, userConfig: { recitation: { everyToolCalls: 7 } } });
    expect(user.settings.recitation.everyToolCalls).toBe(7);
  });

  it('settings are fresh objects: mutating them does not touch the defaults', async () => {
    const first = await resolveWith({ flags: { agent: 'a.sh', check: ['t'] } });
    first.settings.limits.repeatedDiff.count = 99;
    first.settings.noisePaths.push('x');
    const second = await resolveWith({ flags: { agent: 'a.sh', check: ['t'] } });
    expect(second.settings.limits.repeatedDiff.count).toBe(3);
    expect(second.settings.noisePaths).not.toContain('x');
  });
});

describe('condition', () => {
  it('uses the positional condition, trimmed', async () => {
    expect((await resolveWith({ condition: '  lint is clean ', userConfig: VALID })).settings.condition).toBe('lint is clean');
  });

  it("falls back to the workspace's goal, then the user's", async () => {
    const both = { condition: undefined, workspaceConfig: { goal: 'ws goal' }, userConfig: { ...VALID, goal: 'user goal' } };
    expect((await resolveWith(both)).settings.condition).toBe('ws goal');
    expect((await resolveWith({ condition: undefined, userConfig: { ...VALID, goal: 'user goal' } })).settings.condition).toBe(
      'user goal',
    );
  });

  it.each([
    ['whitespace only', { condition: ' \n\t ', userConfig: { ...VALID, goal: 'ignored' } }],
    ['absent with no config goal', { condition: undefined, userConfig: VALID }],
    ['an empty config goal', { condition: undefined, userConfig: { ...VALID, goal: '  ' } }],
  ])('%s is a usage error', async (_name, setup) => {
    const error = await errorOf(resolveWith(setup));
    expect(error.code).toBe('usage');
    expect(error.message).toBe('the goal condition is empty');
    expect(error.hint).toBe('pass it in quotes: goald start "all tests pass"');
  });
});

describe('bad flags and variables', () => {
  const cases: [string, Setup, string, string, string][] = [
    ['--max-turns', { flags: { maxTurns: 'abc' } }, 'usage', '--max-turns: "abc" is not a positive whole number', 'use a whole number greater than 0, e.g. 20'],
    ['--token-budget', { flags: { tokenBudget: '12abc' } }, 'usage', '--token-budget: "12abc" is not a positive whole number', 'use a whole number greater than 0, e.g. 20'],
    ['--turn-token-limit', { flags: { turnTokenLimit: '-1' } }, 'usage', '--turn-token-limit: "-1" is not a positive whole number', 'use a whole number greater than 0, e.g. 20'],
    ['--turn-timeout', { flags: { turnTimeout: 'abc' } }, 'usage', '--turn-timeout: "abc" is not a duration', 'use a number with ms, s, m, h or d, e.g. 90s or 30m'],
    ['--turn-timeout 0', { flags: { turnTimeout: '0' } }, 'usage', '--turn-timeout: must be longer than 0', 'use a duration such as 90s or 30m'],
    ['--cooldown', { flags: { cooldown: '2 s' } }, 'usage', '--cooldown: "2 s" is not a duration', 'use a number with ms, s, m, h or d, e.g. 90s or 30m'],
    ['--cost-budget', { flags: { costBudget: '1e999' } }, 'usage', '--cost-budget: "1e999" is not a number of 0 or more', 'use a number such as 5 or 2.50'],
    ['--wall-clock', { flags: { wallClock: 'forever' } }, 'usage', '--wall-clock: "forever" is not a duration', 'use a number with ms, s, m, h or d, e.g. 90s or 30m'],
    ['--evaluator provider', { flags: { evaluator: 'gemini:pro' } }, 'usage', '--evaluator: "gemini:pro" is not an evaluator', 'use openai:<model>, anthropic:<model> or none'],
    ['--evaluator without model', { flags: { evaluator: 'openai' } }, 'usage', '--evaluator: "openai" needs a model', 'use openai:<model>, e.g. openai:gpt-4.1-mini'],
    ['--evaluator empty model', { flags: { evaluator: 'anthropic:' } }, 'usage', '--evaluator: "anthropic" needs a model', 'use anthropic:<model>, e.g. anthropic:claude-sonnet-4-5'],
    ['--adapter', { flags: { adapter: 'cursor' } }, 'usage', '--adapter: "cursor" is not an adapter', 'use one of command, claude-code, codex, gemini, aider, builtin'],
    ['--agent empty', { flags: { agent: '  ' } }, 'usage', '--agent: the command is empty', 'pass a shell command: --agent "my-agent {prompt}"'],
    ['--check empty', { flags: { check: ['npm test', ''] } }, 'usage', '--check: the command is empty', 'pass a shell command: --check "npm test"'],
    ['GOALD_MAX_TURNS', { env: { GOALD_MAX_TURNS: '0' } }, 'config', 'GOALD_MAX_TURNS: "0" is not a positive whole number', 'use a whole number greater than 0, e.g. 20'],
    ['GOALD_TURN_TIMEOUT', { env: { GOALD_TURN_TIMEOUT: '30' } }, 'config', 'GOALD_TURN_TIMEOUT: "30" is not a duration', 'use a number with ms, s, m, h or d, e.g. 90s or 30m'],
    ['GOALD_EVALUATOR', { env: { GOALD_EVALUATOR: 'gpt-4' } }, 'config', 'GOALD_EVALUATOR: "gpt-4" is not an evaluator', 'use openai:<model>, anthropic:<model> or none'],
    ['GOALD_COST_BUDGET', { env: { GOALD_COST_BUDGET: '$5' } }, 'config', 'GOALD_COST_BUDGET: "$5" is not a number of 0 or more', 'use a number such as 5 or 2.50'],
  ];

  it.each(cases)('%s', async (_name, setup, code, message, hint) => {
    const error = await errorOf(resolveWith({ userConfig: VALID, ...setup }));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(error.hint).toBe(hint);
    expect(`${error.message} ${error.hint ?? ''}`).not.toContain('\n');
  });
});

describe('rules', () => {
  it('refuses a goal with no checks and no evaluator', async () => {
    const error = await errorOf(resolveWith({ flags: { agent: 'a.sh' } }));
    expect(error.code).toBe('config');
    expect(error.message).toBe('no way to verify the goal: no checks and evaluator "none"');
    expect(error.hint).toBe('add --check "npm test" or choose --evaluator openai:<model>');
  });

  it('an evaluator alone is enough verification', async () => {
    const { settings } = await resolveWith({ flags: { agent: 'a.sh', evaluator: 'anthropic:claude-x' } });
    expect(settings.checks).toEqual([]);
    expect(settings.evaluator).toMatchObject({ provider: 'anthropic', model: 'claude-x' });
  });

  it('refuses the command adapter without a command', async () => {
    const error = await errorOf(resolveWith({ flags: { check: ['t'] } }));
    expect(error.code).toBe('config');
    expect(error.message).toBe('no agent configured');
    expect(error.hint).toBe('pass --agent "<shell command>" or set agent.command in goal.config.json');
  });

  it('refuses an openai or anthropic evaluator without a model', async () => {
    const error = await errorOf(resolveWith({ userConfig: { ...VALID, evaluator: { provider: 'openai' } } }));
    expect(error.code).toBe('config');
    expect(error.message).toBe('the openai evaluator has no model');
    expect(error.hint).toBe('pass --evaluator openai:<model> or set evaluator.model in goal.config.json');
  });

  it('refuses a repeated-diff count larger than its window, naming the file', async () => {
    const error = await errorOf(resolveWith({ userConfig: { ...VALID, limits: { repeatedDiff: { count: 6, window: 5 } } } }));
    expect(error.code).toBe('config');
    expect(error.message).toBe(`${userConfigPath}: limits.repeatedDiff: count 6 is larger than window 5, so it can never trip`);
  });

  it.each([
    [{ limits: { turnTimeout: '0' } }, 'limits.turnTimeout'],
    [{ limits: { wallClock: 0 } }, 'limits.wallClock'],
    [{ evaluator: { timeout: '0s' } }, 'evaluator.timeout'],
    [{ checks: [{ run: 'x', timeout: '0' }] }, 'checks.0.timeout'],
  ] as [ConfigFile, string][])('refuses a zero duration where it would mean "immediately": %j', async (config, path) => {
    const error = await errorOf(resolveWith({ workspaceConfig: config, userConfig: VALID }));
    expect(error.code).toBe('config');
    expect(error.message).toBe(`${join(workspace, 'goal.config.json')}: ${path}: must be longer than 0`);
  });

  it('reports an invalid config file with its path', async () => {
    await writeFile(userConfigPath, '{ "limits": { "maxTurns": "many" } }');
    const error = await errorOf(
      resolveGoalSettings({ condition: 'x', workspace, flags: {}, env: {}, userConfigPath }),
    );
    expect(error.code).toBe('config');
    expect(error.message).toBe(`${userConfigPath}: limits.maxTurns: expected a whole number of 1 or more`);
  });
});

describe('checks', () => {
  it('--check replaces the config checks, with a warning', async () => {
    const { settings, warnings } = await resolveWith({
      flags: { check: ['npm run lint'] },
      workspaceConfig: { checks: [{ run: 'a' }, { run: 'b' }] },
      userConfig: VALID,
    });
    expect(settings.checks.map((check) => check.run)).toEqual(['npm run lint']);
    expect(warnings).toEqual([`--check replaces the 2 checks of ${join(workspace, 'goal.config.json')}`]);
  });

  it('names checks by their command, cut to 40 characters, and keeps names unique', async () => {
    const long = 'npx vitest run test/e2e --reporter verbose --bail 1';
    const { settings } = await resolveWith({ flags: { agent: 'a', check: [long, 'npm   test', 'npm test'] } });
    expect(settings.checks.map((check) => check.name)).toEqual([
      'npx vitest run test/e2e --reporter ve...',
      'npm test',
      'npm test #2',
    ]);
    expect(settings.checks[0]?.run).toBe(long);
  });

  it('config checks keep their name and timeout', async () => {
    const { settings } = await resolveWith({
      userConfig: { agent: { command: 'a' }, checks: [{ name: 'unit', run: 'npm test', timeout: '90s' }, { run: 'tsc' }] },
    });
    expect(settings.checks).toEqual([
      { name: 'unit', run: 'npm test', timeoutMs: 90_000 },
      { name: 'tsc', run: 'tsc', timeoutMs: 600_000 },
    ]);
  });
});

describe('agent', () => {
  it('--adapter alone runs that adapter with its usual executable, ignoring a command meant for another', async () => {
    const { settings } = await resolveWith({
      flags: { adapter: 'codex' },
      workspaceConfig: { agent: { adapter: 'command', command: 'foo.sh', model: 'x' } },
      userConfig: VALID,
    });
    expect(settings.agent).toEqual({ adapter: 'codex', command: 'codex', args: [], session: 'fresh', model: null , prices: {} });
  });

  it('--adapter with --agent takes the executable from --agent', async () => {
    const { settings } = await resolveWith({ flags: { adapter: 'claude-code', agent: '/opt/bin/claude' }, userConfig: VALID });
    expect(settings.agent).toMatchObject({ adapter: 'claude-code', command: '/opt/bin/claude' });
  });

  it('an agent config without an adapter applies to whichever adapter is chosen', async () => {
    const { settings } = await resolveWith({
      flags: { adapter: 'claude-code' },
      workspaceConfig: { agent: { model: 'claude-sonnet-4-5', args: ['--verbose'], session: 'resume' } },
      userConfig: { checks: [{ run: 'true' }] },
    });
    expect(settings.agent).toEqual({
      adapter: 'claude-code',
      command: 'claude',
      args: ['--verbose'],
      session: 'resume',
      model: 'claude-sonnet-4-5',
      prices: {},
    });
  });

  it('--agent beats a structured adapter from config', async () => {
    const { settings } = await resolveWith({
      flags: { agent: 'my-agent {prompt}' },
      workspaceConfig: { agent: { adapter: 'gemini', args: ['-y'] } },
      userConfig: { checks: [{ run: 'true' }] },
    });
    expect(settings.agent).toEqual({ adapter: 'command', command: 'my-agent {prompt}', args: [], session: 'fresh', model: null, prices: {} });
  });

  it('--allow-same-model is carried through', async () => {
    expect((await resolveWith({ flags: { allowSameModel: true }, userConfig: VALID })).settings.allowSameModel).toBe(true);
  });
});

describe('evaluator', () => {
  it('model and baseURL come only from layers of the chosen provider; the rest merges per field', async () => {
    const { settings } = await resolveWith({
      flags: { evaluator: 'anthropic:claude-x' },
      workspaceConfig: {
        evaluator: { provider: 'openai', model: 'gpt', baseURL: 'http://127.0.0.1:1/v1', maxInputChars: 1000 },
      },
      userConfig: { ...VALID, evaluator: { retries: 0, timeout: '5s', skipWhenChecksFail: false } },
    });
    expect(settings.evaluator).toEqual({
      provider: 'anthropic',
      model: 'claude-x',
      baseURL: null,
      maxInputChars: 1000,
      skipWhenChecksFail: false,
      timeoutMs: 5000,
      retries: 0,
    });
  });

  it('a model from a layer without a provider fills in for a provider chosen elsewhere', async () => {
    const { settings } = await resolveWith({
      workspaceConfig: { evaluator: { model: 'local-model', baseURL: 'http://127.0.0.1:8080/v1' } },
      userConfig: { ...VALID, evaluator: { provider: 'openai', model: 'gpt-4.1-mini' } },
    });
    expect(settings.evaluator).toMatchObject({ provider: 'openai', model: 'local-model', baseURL: 'http://127.0.0.1:8080/v1' });
  });

  it('--evaluator none turns off a configured evaluator', async () => {
    const { settings, warnings } = await resolveWith({
      flags: { evaluator: 'none' },
      userConfig: { ...VALID, evaluator: { provider: 'openai', model: 'gpt-4.1-mini' } },
    });
    expect(settings.evaluator).toMatchObject({ provider: 'none', model: null, baseURL: null });
    expect(warnings).toEqual([]);
  });

  it('warns about a model with no provider anywhere', async () => {
    const { settings, warnings } = await resolveWith({ userConfig: { ...VALID, evaluator: { model: 'gpt' } } });
    expect(settings.evaluator.provider).toBe('none');
    expect(warnings).toEqual(['the evaluator model "gpt" is ignored: no evaluator provider is set (openai or anthropic)']);
  });

  it('splits the model at the first colon only', async () => {
    const { settings } = await resolveWith({ flags: { evaluator: 'openai:org/model:8b' }, userConfig: VALID });
    expect(settings.evaluator.model).toBe('org/model:8b');
  });
});

describe('limits, noise paths and ancestry', () => {
  it('`off` turns off a configured cost budget and wall clock', async () => {
    const { settings } = await resolveWith({
      flags: { costBudget: 'off', wallClock: 'off' },
      userConfig: { ...VALID, limits: { costBudget: 5, wallClock: '2h' } },
    });
    expect(settings.limits.costBudgetUsd).toBeNull();
    expect(settings.limits.wallClockMs).toBeNull();
  });

  it('config-only limits merge per field across files', async () => {
    const { settings } = await resolveWith({
      workspaceConfig: { limits: { stagnation: 2, repeatedDiff: { count: 2, window: 4 } } },
      userConfig: { ...VALID, limits: { stagnation: 9, oscillation: 7, agentFailures: 1, blockedVerdicts: 5 } },
    });
    expect(settings.limits).toMatchObject({
      stagnation: 2,
      repeatedDiff: { count: 2, window: 4 },
      oscillation: 7,
      agentFailures: 1,
      blockedVerdicts: 5,
      evaluatorFailures: 3,
    });
  });

  it('noisePaths from the workspace replace the user list, which replaces the defaults', async () => {
    const resolved = await resolveWith({
      workspaceConfig: { noisePaths: ['*.snap'] },
      userConfig: { ...VALID, noisePaths: ['*.tmp'] },
    });
    expect(resolved.settings.noisePaths).toEqual(['*.snap']);
    expect((await resolveWith({ userConfig: { ...VALID, noisePaths: ['*.tmp'] } })).settings.noisePaths).toEqual(['*.tmp']);
  });

  it('mission and project come from config; ancestry.goal stays unset', async () => {
    const { settings } = await resolveWith({
      workspaceConfig: { project: 'goald' },
      userConfig: { ...VALID, mission: 'ship reliable tools', project: 'ignored' },
    });
    expect(settings.ancestry).toEqual({ mission: 'ship reliable tools', project: 'goald' });
  });
});

describe('resolveUserConfigPath', () => {
  it.each([
    [{ XDG_CONFIG_HOME: '/x', HOME: '/h' }, '/x/goald/config.json'],
    [{ XDG_CONFIG_HOME: '', HOME: '/h' }, '/h/.config/goald/config.json'],
    [{ XDG_CONFIG_HOME: 'relative', HOME: '/h' }, '/h/.config/goald/config.json'],
    [{ HOME: '/h' }, '/h/.config/goald/config.json'],
  ] as [NodeJS.ProcessEnv, string][])('%j → %s', (env, expected) => {
    expect(resolveUserConfigPath(env)).toBe(expected);
  });

  it('is where resolveGoalSettings looks by default', async () => {
    await mkdir(join(dir, 'xdg', 'goald'), { recursive: true });
    await writeFile(join(dir, 'xdg', 'goald', 'config.json'), JSON.stringify({ ...VALID, limits: { maxTurns: 4 } }));
    const { settings } = await resolveGoalSettings({
      condition: 'x',
      workspace,
      flags: {},
      env: { XDG_CONFIG_HOME: join(dir, 'xdg') },
    });
    expect(settings.limits.maxTurns).toBe(4);
  });
});

describe('agent command without adapter', () => {
  it('means the command adapter, so it does not leak into a structured adapter chosen elsewhere', async () => {
    const { settings } = await resolveWith({
      workspaceConfig: { agent: { adapter: 'aider' } },
      userConfig: { ...VALID, agent: { command: 'my-agent.sh', model: 'gpt-x' } },
    });
    expect(settings.agent).toMatchObject({ adapter: 'aider', command: 'aider', model: null });
  });
});

describe('credentials: where a base URL came from, and who may pass keys', () => {
  const LOCAL = 'http://127.0.0.1:8080/v1';
  const OPENAI = { provider: 'openai', model: 'gpt-4.1-mini' } as const;

  it('marks a base URL by the file that set it: the user config, or the workspace file', async () => {
    const fromUser = await resolveWith({ userConfig: { ...VALID, evaluator: { ...OPENAI, baseURL: LOCAL } } });
    expect(fromUser.settings.evaluator).toMatchObject({ baseURL: LOCAL, baseURLFrom: 'user-config' });
    const fromWorkspace = await resolveWith({
      workspaceConfig: { evaluator: { baseURL: LOCAL } },
      userConfig: { ...VALID, evaluator: OPENAI },
    });
    expect(fromWorkspace.settings.evaluator).toMatchObject({ baseURL: LOCAL, baseURLFrom: 'workspace-config' });
  });

  it("takes a request's OPENAI_BASE_URL as the request's when it differs from the daemon's own", async () => {
    await writeFile(userConfigPath, JSON.stringify({ ...VALID, evaluator: OPENAI }));
    const resolveEnv = (env: NodeJS.ProcessEnv, trustedEnv: NodeJS.ProcessEnv): Promise<ResolvedSettings> =>
      resolveGoalSettings({ condition: 'tests pass', workspace, flags: {}, env, trustedEnv, userConfigPath });
    const redirected = await resolveEnv({ OPENAI_BASE_URL: LOCAL }, {});
    expect(redirected.settings.evaluator).toMatchObject({ baseURL: LOCAL, baseURLFrom: 'request' });
    // The daemon's own value, forwarded back by the client that started it: nothing to vouch for.
    const same = await resolveEnv({ OPENAI_BASE_URL: LOCAL }, { OPENAI_BASE_URL: LOCAL });
    expect(same.settings.evaluator.baseURL).toBeNull();
    expect(same.settings.evaluator.baseURLFrom).toBeUndefined();
  });

  it('reads agent.passEnv and evaluator.allowedBaseURLs from the user config only; a workspace file gets a warning', async () => {
    const { settings, warnings } = await resolveWith({
      workspaceConfig: { agent: { passEnv: ['ANTHROPIC_*'] }, evaluator: { allowedBaseURLs: ['http://evil.example'] } },
      userConfig: { ...VALID, agent: { command: 'agent.sh', passEnv: ['OPENAI_API_KEY'] }, evaluator: { ...OPENAI, allowedBaseURLs: [LOCAL] } },
    });
    expect(settings.agent.passEnv).toEqual(['OPENAI_API_KEY']);
    expect(settings.evaluator.allowedBaseURLs).toEqual([LOCAL]);
    expect(warnings).toEqual([
      expect.stringMatching(/goal\.config\.json: agent\.passEnv is ignored; only your user config/),
      expect.stringMatching(/goal\.config\.json: evaluator\.allowedBaseURLs is ignored; only your user config/),
    ]);
  });

  it("reads cluster from the user config only: a workspace file's Redis or remote is ignored, with a warning", async () => {
    const { warnings } = await resolveWith({
      workspaceConfig: { cluster: { redis: 'redis://evil.example:6379', remote: 'https://evil.example/repo.git' } },
      userConfig: VALID,
    });
    expect(warnings).toEqual([expect.stringMatching(/goal\.config\.json: cluster is ignored; only your user config/)]);
  });
});
