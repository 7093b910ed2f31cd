// Resolves one goal's settings from its sources, highest first: flags > environment (GOALD_*) > the
// workspace's goal.config.json > the user's config.json > defaults. Each source becomes a partial
// layer (parsed and validated with its own names in messages), layers merge field by field, and small
// rule functions check the result. Nothing here prints, and API keys are not looked at (the evaluator
// factory checks them when it builds a client). The flags and GOALD_* variables, with their parsers, are
// the table in start-options.ts. Over 400 lines because each settings section (agent, evaluator, limits,
// checks, guard, sandbox, ...) has its own small layer reader and merge rule, kept together so precedence
// is read in one place.

import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { GoaldError } from '../errors.js';
import {
  DEFAULT_ADAPTER,
  DEFAULT_AGENT_EXECUTABLES,
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_EVALUATOR,
  DEFAULT_GUARD,
  DEFAULT_LIMITS,
  DEFAULT_NOISE_PATHS,
  DEFAULT_RECITATION_EVERY_TOOL_CALLS,
} from './defaults.js';
import { parseDuration } from './duration.js';
import { checkNameFor } from './flag-values.js';
import { CONFIG_FILE_NAME, loadConfigFile } from './load-config.js';
import { mergeSandbox, sandboxLayerFromConfig, sandboxLayerFromEnv, type SandboxLayer } from './sandbox-settings.js';
import { requireAgentCommand, requireEvaluatorModel, requireVerification } from './settings-rules.js';
import type { ConfigAgent, ConfigCheck, ConfigEvaluator, ConfigFile, ConfigLimits } from './schema.js';
import { applyStartEnv, applyStartFlags, type OptionLayer, type StartFlags } from './start-options.js';
import type { AgentSpec, BaseURLSource, CheckSpec, EvaluatorSpec, GoalSettings, GuardSettings, Limits, SandboxSettings } from './types.js';

// How the user's config file is named in messages.
const USER_CONFIG_HINT = '~/.config/goald/config.json';

export type { StartFlags } from './start-options.js';

export interface ResolveSettingsInput {
  /** The positional condition; when absent, the config's `goal`. */
  condition?: string | undefined;
  /** The git work tree's top level, already resolved. */
  workspace: string;
  flags: StartFlags;
  env: NodeJS.ProcessEnv;
  /**
   * The environment of the process that holds the API keys (the daemon's own; default `env`). An
   * OPENAI_BASE_URL / ANTHROPIC_BASE_URL in `env` that differs from it came with a socket request, and
   * becomes the evaluator's `baseURL` with `baseURLFrom: "request"`.
   */
  trustedEnv?: NodeJS.ProcessEnv | undefined;
  /** Default: `$XDG_CONFIG_HOME/goald/config.json`, else `~/.config/goald/config.json`. */
  userConfigPath?: string | undefined;
  /**
   * A layer between the environment and the workspace file: a config-declared loop's own checks, agent,
   * evaluator and limits, which override the file's top-level ones for that loop's runs.
   */
  loopConfig?: { config: ConfigFile; source: string } | undefined;
}

export interface ResolvedSettings {
  settings: GoalSettings;
  /** Things worth telling the user that do not stop the goal. */
  warnings: string[];
  /** Where values came from, highest precedence first (`flags: --max-turns`, a file path, `defaults`). */
  sources: string[];
  /** The workspace's goal.config.json as read (null: none); a goal's contract is sealed against it. */
  workspaceConfig: ConfigFile | null;
}

type AgentLayer = Partial<Omit<AgentSpec, 'model'>> & { model?: string };
type EvaluatorLayer = Partial<Omit<EvaluatorSpec, 'model' | 'baseURL'>> & { model?: string; baseURL?: string };

/** One source's contribution; absent fields leave the decision to lower layers. */
interface Layer extends OptionLayer {
  /** How the source is named in `sources`. */
  source: string;
  condition?: string;
  mission?: string;
  project?: string;
  agent?: AgentLayer;
  evaluator?: EvaluatorLayer;
  noisePaths?: string[];
  recitationEvery?: number;
  /** A file's or GOALD_SANDBOX's sandbox settings (the flag's are OptionLayer's `sandbox`). */
  sandboxLayer?: SandboxLayer;
}

/** The user's config file: `$XDG_CONFIG_HOME/goald/config.json`, else `~/.config/goald/config.json`. */
export function resolveUserConfigPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'goald', 'config.json');
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  return join(home, '.config', 'goald', 'config.json');
}

/** Resolves and validates a goal's settings; throws `usage` for bad flags, `config` for bad config. */
export async function resolveGoalSettings(input: ResolveSettingsInput): Promise<ResolvedSettings> {
  const warnings: string[] = [];
  const workspacePath = join(input.workspace, CONFIG_FILE_NAME);
  const userPath = resolve(input.userConfigPath ?? resolveUserConfigPath(input.env));
  const workspaceFile = await loadConfigFile(workspacePath);
  // A workspace at $HOME/.config/goald would read the same file twice; once is enough.
  const userFile = userPath === workspacePath ? { config: null, path: userPath } : await loadConfigFile(userPath);

  const flagLayer = layerFromFlags(input.flags);
  const envLayer = layerFromEnv(input.env);
  const loopFile = input.loopConfig ? [{ config: input.loopConfig.config, path: input.loopConfig.source }] : [];
  const fileLayers = [
    ...[...loopFile, workspaceFile].map((file) => ({ ...file, from: 'workspace-config' as const })),
    { ...userFile, from: 'user-config' as const },
  ].flatMap(({ config, path, from }) => (config === null ? [] : [layerFromConfig(config, path, from, warnings)]));
  const layers = [flagLayer, envLayer, ...fileLayers];

  const configChecks = fileLayers.find((layer) => layer.checks !== undefined);
  if (flagLayer.checks !== undefined && configChecks?.checks !== undefined && configChecks.checks.length > 0) {
    const count = configChecks.checks.length;
    warnings.push(`--check replaces the ${count} check${count === 1 ? '' : 's'} of ${configChecks.source}`);
  }

  const agent = mergeAgent(layers);
  const evaluator = mergeEvaluator(layers, warnings);
  takeRequestBaseURL(evaluator, input.env, input.trustedEnv ?? input.env);
  const settings: GoalSettings = {
    condition: resolveCondition(input.condition, fileLayers),
    workspace: input.workspace,
    checks: uniqueCheckNames(pick(layers, (layer) => layer.checks) ?? []),
    agent,
    evaluator,
    limits: mergeLimits(layers),
    ancestry: {},
    noisePaths: pick(layers, (layer) => layer.noisePaths) ?? [...DEFAULT_NOISE_PATHS],
    recitation: { everyToolCalls: pick(layers, (layer) => layer.recitationEvery) ?? DEFAULT_RECITATION_EVERY_TOOL_CALLS },
    allowSameModel: pick(layers, (layer) => layer.allowSameModel) ?? false,
    guard: mergeGuard(layers),
    sandbox: mergeSandbox(layers.map(sandboxLayerOf), warnings),
    keepBest: pick(layers, (layer) => layer.keepBest) ?? false,
  };
  // Absent unless some layer speaks of it: absent means in place (and settings stored before it agree).
  if (layers.some((layer) => layer.isolation !== undefined)) {
    settings.isolation = {
      mode: pick(layers, (layer) => layer.isolation?.mode) ?? 'in-place',
      author: pick(layers, (layer) => layer.isolation?.author) ?? null,
      discardOnFail: pick(layers, (layer) => layer.isolation?.discardOnFail) ?? false,
    };
  }
  const mission = pick(layers, (layer) => layer.mission);
  const project = pick(layers, (layer) => layer.project);
  if (mission !== undefined) settings.ancestry.mission = mission;
  if (project !== undefined) settings.ancestry.project = project;

  requireAgentCommand(settings.agent);
  requireEvaluatorModel(settings.evaluator);
  requireVerification(settings);

  const sources = layers.filter((layer) => layer.source !== '').map((layer) => layer.source);
  return { settings, warnings, sources: [...sources, 'defaults'], workspaceConfig: workspaceFile.config };
}

/**
 * The sandbox and agent a goal started in `workspace` would get (`goald sandbox check`): the same layers
 * as resolveGoalSettings, without needing a condition, checks or an evaluator.
 */
export async function resolveSandboxSettings(
  input: Pick<ResolveSettingsInput, 'workspace' | 'flags' | 'env' | 'userConfigPath'>,
): Promise<{ sandbox: SandboxSettings; agent: AgentSpec; warnings: string[] }> {
  const warnings: string[] = [];
  const workspacePath = join(input.workspace, CONFIG_FILE_NAME);
  const userPath = resolve(input.userConfigPath ?? resolveUserConfigPath(input.env));
  const files = [
    { ...(await loadConfigFile(workspacePath)), from: 'workspace-config' as const },
    ...(userPath === workspacePath ? [] : [{ ...(await loadConfigFile(userPath)), from: 'user-config' as const }]),
  ];
  const layers = [
    layerFromFlags(input.flags),
    layerFromEnv(input.env),
    ...files.flatMap(({ config, path, from }) => (config === null ? [] : [layerFromConfig(config, path, from, warnings)])),
  ];
  const sandbox = mergeSandbox(layers.map(sandboxLayerOf), warnings);
  return { sandbox, agent: mergeAgent(layers), warnings };
}

// A layer's sandbox settings: the flag's (the owner's) or a file's / GOALD_SANDBOX's.
function sandboxLayerOf(layer: Layer): SandboxLayer | undefined {
  return layer.sandbox === undefined ? layer.sandboxLayer : { ...layer.sandbox, owner: true };
}

/** The first value a layer defines, highest precedence first. */
function pick<T>(layers: readonly Layer[], read: (layer: Layer) => T | undefined): T | undefined {
  for (const layer of layers) {
    const value = read(layer);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The condition: the positional one, else the config's `goal`; never empty. */
function resolveCondition(positional: string | undefined, fileLayers: readonly Layer[]): string {
  const condition = (positional ?? pick(fileLayers, (layer) => layer.condition) ?? '').trim();
  if (condition === '') {
    throw new GoaldError('usage', 'the goal condition is empty', 'pass it in quotes: goald start "all tests pass"');
  }
  return condition;
}

// ---- layers -------------------------------------------------------------------------------------------

/** Parses the flags (usage errors name the flag). */
function layerFromFlags(flags: StartFlags): Layer {
  const layer: Layer = { source: '' };
  const used = applyStartFlags(flags, layer);
  if (used.length > 0) layer.source = `flags: ${used.join(', ')}`;
  return layer;
}

/** Reads the GOALD_* variables (config errors name the variable). */
function layerFromEnv(env: NodeJS.ProcessEnv): Layer {
  const layer: Layer = { source: '' };
  const used = asConfigError(() => applyStartEnv(env, layer));
  const sandbox = sandboxLayerFromEnv(env);
  if (sandbox !== undefined) {
    layer.sandboxLayer = sandbox;
    used.push('GOALD_SANDBOX');
  }
  if (used.length > 0) layer.source = `environment: ${used.join(', ')}`;
  return layer;
}

/**
 * Normalizes a validated config file (durations to ms, check names) into a layer. Settings that hand out
 * credentials (agent.passEnv, evaluator.allowedBaseURLs) count only in the user's own file.
 */
function layerFromConfig(config: ConfigFile, path: string, from: BaseURLSource, warnings: string[]): Layer {
  const layer: Layer = { source: path };
  if (from !== 'user-config') {
    for (const [key, value] of [['agent.passEnv', config.agent?.passEnv], ['evaluator.allowedBaseURLs', config.evaluator?.allowedBaseURLs], ['notify', config.notify], ['cluster', config.cluster]] as const) {
      if (value !== undefined) warnings.push(`${path}: ${key} is ignored; only your user config (${USER_CONFIG_HINT}) can set it`);
    }
  }
  if (config.goal !== undefined) layer.condition = config.goal;
  if (config.mission !== undefined) layer.mission = config.mission;
  if (config.project !== undefined) layer.project = config.project;
  if (config.checks !== undefined) layer.checks = config.checks.map((check, i) => checkFromConfig(check, path, i));
  if (config.agent !== undefined) layer.agent = agentFromConfig(config.agent, from);
  if (config.evaluator !== undefined) layer.evaluator = evaluatorFromConfig(config.evaluator, path, from);
  if (config.limits !== undefined) layer.limits = limitsFromConfig(config.limits, path);
  if (config.noisePaths !== undefined) layer.noisePaths = [...config.noisePaths];
  if (config.recitation?.everyToolCalls !== undefined) layer.recitationEvery = config.recitation.everyToolCalls;
  if (config.guard !== undefined) layer.guard = guardFromConfig(config.guard);
  if (config.keepBest !== undefined) layer.keepBest = config.keepBest;
  if (config.sandbox !== undefined) layer.sandboxLayer = sandboxLayerFromConfig(config.sandbox, path, from === 'user-config', warnings);
  if (config.isolation !== undefined || config.worktree !== undefined) {
    layer.isolation = {
      ...(config.isolation === undefined ? {} : { mode: config.isolation }),
      ...(config.worktree?.author === undefined ? {} : { author: config.worktree.author.trim() }),
      ...(config.worktree?.discardOnFail === undefined ? {} : { discardOnFail: config.worktree.discardOnFail }),
    };
  }
  return layer;
}

function checkFromConfig(check: ConfigCheck, path: string, index: number): CheckSpec {
  const timeoutMs =
    check.timeout === undefined
      ? DEFAULT_CHECK_TIMEOUT_MS
      : configDuration(check.timeout, `${path}: checks.${index}.timeout`, { positive: true });
  return { name: check.name?.trim() || checkNameFor(check.run), run: check.run, timeoutMs };
}

/** A config agent with a `command` but no `adapter` means the default adapter, `command`. */
function agentFromConfig(agent: ConfigAgent, from: BaseURLSource): AgentLayer {
  const layer: AgentLayer = {};
  if (from === 'user-config' && agent.passEnv !== undefined) layer.passEnv = [...agent.passEnv];
  if (agent.command !== undefined && agent.command.trim() !== '') {
    layer.command = agent.command;
    layer.adapter = DEFAULT_ADAPTER;
  }
  if (agent.adapter !== undefined) layer.adapter = agent.adapter;
  if (agent.args !== undefined) layer.args = [...agent.args];
  if (agent.session !== undefined) layer.session = agent.session;
  if (agent.model !== undefined && agent.model.trim() !== '') layer.model = agent.model;
  if (agent.prices !== undefined) layer.prices = { ...agent.prices };
  if (agent.maxIterations !== undefined) layer.maxIterations = agent.maxIterations;
  if (agent.verificationRetries !== undefined) layer.verificationRetries = agent.verificationRetries;
  if (agent.maxContextTokens !== undefined) layer.maxContextTokens = agent.maxContextTokens;
  if (agent.commands !== undefined) layer.commands = { allow: [...(agent.commands.allow ?? [])], deny: [...(agent.commands.deny ?? [])] };
  return layer;
}

function evaluatorFromConfig(evaluator: ConfigEvaluator, path: string, from: BaseURLSource): EvaluatorLayer {
  const layer: EvaluatorLayer = {};
  if (evaluator.provider !== undefined) layer.provider = evaluator.provider;
  if (evaluator.model !== undefined && evaluator.model.trim() !== '') layer.model = evaluator.model;
  if (evaluator.baseURL !== undefined) {
    layer.baseURL = evaluator.baseURL;
    layer.baseURLFrom = from;
  }
  if (from === 'user-config' && evaluator.allowedBaseURLs !== undefined) layer.allowedBaseURLs = [...evaluator.allowedBaseURLs];
  if (evaluator.maxInputChars !== undefined) layer.maxInputChars = evaluator.maxInputChars;
  if (evaluator.skipWhenChecksFail !== undefined) layer.skipWhenChecksFail = evaluator.skipWhenChecksFail;
  if (evaluator.timeout !== undefined) {
    layer.timeoutMs = configDuration(evaluator.timeout, `${path}: evaluator.timeout`, { positive: true });
  }
  if (evaluator.retries !== undefined) layer.retries = evaluator.retries;
  return layer;
}

function limitsFromConfig(limits: ConfigLimits, path: string): Partial<Limits> {
  const out: Partial<Limits> = {};
  const at = (key: string): string => `${path}: limits.${key}`;
  if (limits.maxTurns !== undefined) out.maxTurns = limits.maxTurns;
  if (limits.tokenBudget !== undefined) out.tokenBudget = limits.tokenBudget;
  if (limits.turnTokenLimit !== undefined) out.turnTokenLimit = limits.turnTokenLimit;
  if (limits.turnTimeout !== undefined) {
    out.turnTimeoutMs = configDuration(limits.turnTimeout, at('turnTimeout'), { positive: true });
  }
  if (limits.costBudget !== undefined) out.costBudgetUsd = limits.costBudget;
  if (limits.wallClock !== undefined) {
    out.wallClockMs =
      limits.wallClock === null ? null : configDuration(limits.wallClock, at('wallClock'), { positive: true });
  }
  if (limits.cooldown !== undefined) {
    out.cooldownMs = configDuration(limits.cooldown, at('cooldown'), { positive: false });
  }
  if (limits.repeatedDiff !== undefined) {
    const { count, window } = limits.repeatedDiff;
    if (count > window) {
      throw new GoaldError(
        'config',
        `${at('repeatedDiff')}: count ${count} is larger than window ${window}, so it can never trip`,
        'use a count no larger than the window, e.g. { "count": 3, "window": 5 }',
      );
    }
    out.repeatedDiff = { ...limits.repeatedDiff };
  }
  if (limits.oscillation !== undefined) out.oscillation = limits.oscillation;
  if (limits.stagnation !== undefined) out.stagnation = limits.stagnation;
  if (limits.evaluatorFailures !== undefined) out.evaluatorFailures = limits.evaluatorFailures;
  if (limits.agentFailures !== undefined) out.agentFailures = limits.agentFailures;
  if (limits.blockedVerdicts !== undefined) out.blockedVerdicts = limits.blockedVerdicts;
  if (limits.permissionDenials !== undefined) out.permissionDenials = limits.permissionDenials;
  if (limits.tamper !== undefined) out.tamper = limits.tamper;
  if (limits.noProgress !== undefined) out.noProgress = limits.noProgress;
  return out;
}

function guardFromConfig(guard: NonNullable<ConfigFile['guard']>): Partial<GuardSettings> {
  const out: Partial<GuardSettings> = {};
  if (guard.enabled !== undefined) out.enabled = guard.enabled;
  if (guard.protect !== undefined) out.protect = [...guard.protect];
  if (guard.testFiles !== undefined) out.testFiles = [...guard.testFiles];
  if (guard.deletedTests !== undefined) out.deletedTests = guard.deletedTests;
  if (guard.skipMarkers !== undefined) out.skipMarkers = guard.skipMarkers;
  if (guard.checkScripts !== undefined) out.checkScripts = guard.checkScripts;
  return out;
}

// ---- merging ------------------------------------------------------------------------------------------

/**
 * The adapter comes from the highest layer that names one (default `command`). The other agent fields
 * come only from layers that name the same adapter or none: a workspace's `command` for the command
 * adapter must not become the executable of `--adapter codex`, while a layer that only sets `model`,
 * `args` or `session` applies to whichever adapter is chosen.
 */
function mergeAgent(layers: readonly Layer[]): AgentSpec {
  const adapter = pick(layers, (layer) => layer.agent?.adapter) ?? DEFAULT_ADAPTER;
  const agreeing = layers.filter((layer) => layer.agent?.adapter === undefined || layer.agent.adapter === adapter);
  const executable = adapter === 'command' ? '' : DEFAULT_AGENT_EXECUTABLES[adapter];
  const passEnv = pick(layers, (layer) => layer.agent?.passEnv);
  return {
    adapter,
    command: pick(agreeing, (layer) => layer.agent?.command) ?? executable,
    args: [...(pick(agreeing, (layer) => layer.agent?.args) ?? [])],
    session: pick(agreeing, (layer) => layer.agent?.session) ?? 'fresh',
    model: pick(agreeing, (layer) => layer.agent?.model) ?? null,
    prices: { ...(pick(agreeing, (layer) => layer.agent?.prices) ?? {}) },
    ...builtinAgentFields(agreeing),
    // Whatever the adapter: these are the user's decision about credentials, not the adapter's settings.
    ...(passEnv === undefined ? {} : { passEnv: [...passEnv] }),
  };
}

/** The builtin agent's fields, from the highest agreeing layer that sets each; absent when none does. */
function builtinAgentFields(layers: readonly Layer[]): Pick<AgentSpec, 'maxIterations' | 'verificationRetries' | 'maxContextTokens' | 'commands'> {
  const fields: Pick<AgentSpec, 'maxIterations' | 'verificationRetries' | 'maxContextTokens' | 'commands'> = {};
  const maxIterations = pick(layers, (layer) => layer.agent?.maxIterations);
  if (maxIterations !== undefined) fields.maxIterations = maxIterations;
  const verificationRetries = pick(layers, (layer) => layer.agent?.verificationRetries);
  if (verificationRetries !== undefined) fields.verificationRetries = verificationRetries;
  const maxContextTokens = pick(layers, (layer) => layer.agent?.maxContextTokens);
  if (maxContextTokens !== undefined) fields.maxContextTokens = maxContextTokens;
  const commands = pick(layers, (layer) => layer.agent?.commands);
  if (commands !== undefined) fields.commands = { allow: [...commands.allow], deny: [...commands.deny] };
  return fields;
}

/** Like mergeAgent: the provider decides which layers' model and baseURL apply; the rest merge freely. */
function mergeEvaluator(layers: readonly Layer[], warnings: string[]): EvaluatorSpec {
  const provider = pick(layers, (layer) => layer.evaluator?.provider) ?? DEFAULT_EVALUATOR.provider;
  const agreeing = layers.filter(
    (layer) => layer.evaluator?.provider === undefined || layer.evaluator.provider === provider,
  );
  const model = pick(agreeing, (layer) => layer.evaluator?.model) ?? null;
  if (provider === 'none' && model !== null) {
    warnings.push(`the evaluator model "${model}" is ignored: no evaluator provider is set (openai or anthropic)`);
  }
  const baseURLLayer = provider === 'none' ? undefined : agreeing.find((layer) => layer.evaluator?.baseURL !== undefined);
  const allowedBaseURLs = pick(layers, (layer) => layer.evaluator?.allowedBaseURLs);
  return {
    provider,
    model: provider === 'none' ? null : model,
    baseURL: baseURLLayer?.evaluator?.baseURL ?? null,
    ...(baseURLLayer?.evaluator?.baseURLFrom === undefined ? {} : { baseURLFrom: baseURLLayer.evaluator.baseURLFrom }),
    ...(allowedBaseURLs === undefined ? {} : { allowedBaseURLs: [...allowedBaseURLs] }),
    maxInputChars: pick(layers, (layer) => layer.evaluator?.maxInputChars) ?? DEFAULT_EVALUATOR.maxInputChars,
    skipWhenChecksFail:
      pick(layers, (layer) => layer.evaluator?.skipWhenChecksFail) ?? DEFAULT_EVALUATOR.skipWhenChecksFail,
    timeoutMs: pick(layers, (layer) => layer.evaluator?.timeoutMs) ?? DEFAULT_EVALUATOR.timeoutMs,
    retries: pick(layers, (layer) => layer.evaluator?.retries) ?? DEFAULT_EVALUATOR.retries,
  };
}

/**
 * A provider base URL variable that a socket request brought (it differs from the daemon's own) becomes
 * the evaluator's baseURL, marked as the request's, unless a config file chose one (files beat it).
 */
function takeRequestBaseURL(evaluator: EvaluatorSpec, env: NodeJS.ProcessEnv, trustedEnv: NodeJS.ProcessEnv): void {
  if (evaluator.provider === 'none' || evaluator.baseURL !== null) return;
  const variable = evaluator.provider === 'openai' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL';
  const requested = env[variable]?.trim() ?? '';
  if (requested === '' || requested === (trustedEnv[variable]?.trim() ?? '')) return;
  evaluator.baseURL = requested;
  evaluator.baseURLFrom = 'request';
}

/** Each limit from the highest layer that sets it, else its default. */
function mergeLimits(layers: readonly Layer[]): Limits {
  const limit = <K extends keyof Limits>(key: K): Limits[K] =>
    pick(layers, (layer) => layer.limits?.[key]) ?? DEFAULT_LIMITS[key];
  return {
    maxTurns: limit('maxTurns'),
    tokenBudget: limit('tokenBudget'),
    turnTokenLimit: limit('turnTokenLimit'),
    turnTimeoutMs: limit('turnTimeoutMs'),
    costBudgetUsd: limit('costBudgetUsd'),
    wallClockMs: limit('wallClockMs'),
    cooldownMs: limit('cooldownMs'),
    repeatedDiff: { ...limit('repeatedDiff') },
    oscillation: limit('oscillation'),
    stagnation: limit('stagnation'),
    evaluatorFailures: limit('evaluatorFailures'),
    agentFailures: limit('agentFailures'),
    blockedVerdicts: limit('blockedVerdicts'),
    permissionDenials: limit('permissionDenials'),
    tamper: limit('tamper'),
    noProgress: limit('noProgress'),
  };
}

/** Each guard setting from the highest layer that sets it (`--no-guard` is the flag layer's), else its default. */
function mergeGuard(layers: readonly Layer[]): GuardSettings {
  const setting = <K extends keyof GuardSettings>(key: K): GuardSettings[K] =>
    pick(layers, (layer) => layer.guard?.[key]) ?? DEFAULT_GUARD[key];
  return {
    enabled: setting('enabled'),
    protect: [...setting('protect')],
    testFiles: [...setting('testFiles')],
    deletedTests: setting('deletedTests'),
    skipMarkers: setting('skipMarkers'),
    checkScripts: setting('checkScripts'),
  };
}

/** Makes check names unique (`npm test`, `npm test #2`): they key results in progress and history. */
export function uniqueCheckNames(checks: readonly CheckSpec[]): CheckSpec[] {
  const seen = new Map<string, number>();
  return checks.map((check) => {
    const count = (seen.get(check.name) ?? 0) + 1;
    seen.set(check.name, count);
    return count === 1 ? { ...check } : { ...check, name: `${check.name} #${count}` };
  });
}

/** A config-file duration (already schema-checked): a string such as "30m", or whole milliseconds. */
function configDuration(value: string | number, what: string, rule: { positive: boolean }): number {
  const ms = typeof value === 'number' ? value : asConfigError(() => parseDuration(value, what));
  if (rule.positive && ms === 0) {
    throw new GoaldError('config', `${what}: must be longer than 0`, 'use a duration such as "90s" or "30m"');
  }
  return ms;
}

/** Re-labels a parse error as a configuration error (environment and files are not command-line usage). */
function asConfigError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof GoaldError && error.code === 'usage') {
      throw new GoaldError('config', error.message, error.hint, { cause: error });
    }
    throw error;
  }
}
