// Turning a start request into a running supervisor: validate everything first (so bad input writes
// nothing), then register the goal in the store and wire the real agent, evaluator, snapshotter and
// checks. Shared by `start --foreground` and the daemon.

import { createEmptySummary, openStore, newGoalId, resolveGoaldHome, toJson } from '../../state/index.js';
import { ensureTrustedHome } from '../../state/home-trust.js';
import type { GoalRecord, GoalWorktree, Store } from '../../state/types.js';
import { createAgent } from '../agents/registry.js';
import { findExecutable } from '../agents/which.js';
import { GoaldError } from '../errors.js';
import type { AgentAdapter } from '../agents/types.js';
import { systemClock, type Clock } from '../clock.js';
import { resolveGoalSettings, resolveUserConfigPath, type ResolveSettingsInput, type StartFlags } from '../config/resolve-settings.js';
import type { ConfigFile } from '../config/schema.js';
import type { EvaluatorSpec, GoalSettings } from '../config/types.js';
import { createNoneEvaluator } from '../evaluator/none-evaluator.js';
import { goaldPathsIn } from '../guard/goald-paths.js';
import type { Evaluator } from '../evaluator/types.js';
import { openGoalSandbox, type GoalSandbox } from '../sandbox/goal-sandbox.js';
import { createCheckRunner } from '../workspace/checks.js';
import { resolveWorkspace, type ResolvedWorkspace } from '../workspace/find-workspace.js';
import { createSnapshotter } from '../workspace/snapshot.js';
import type { Snapshotter } from '../workspace/types.js';
import { GoalSupervisor, type RestoredGoal, type SupervisorDeps } from './supervisor.js';
import type { SupervisorObserver } from './types.js';

export interface PreparedGoal {
  settings: GoalSettings;
  workspace: ResolvedWorkspace;
  agent: AgentAdapter;
  evaluator: Evaluator;
  warnings: string[];
  /** The workspace's goal.config.json the settings were read from (null: none; absent: rebuilt from a record). */
  workspaceConfig?: ConfigFile | null;
  /** A worktree goal's id, chosen before it is stored, and its worktree (src/worktree/worktree-goal.ts). */
  goalId?: string;
  worktree?: GoalWorktree;
}

/** Validates a start request end to end (workspace, config, agent, evaluator key, models); writes nothing. */
export async function prepareGoal(request: {
  condition: string | undefined;
  dir: string;
  flags: StartFlags;
  env: NodeJS.ProcessEnv;
  /** The daemon's own environment, when `env` also holds a request's variables (see resolveGoalSettings). */
  trustedEnv?: NodeJS.ProcessEnv;
  ancestry?: GoalSettings['ancestry'];
  loopConfig?: ResolveSettingsInput['loopConfig'];
  /** resolveWorkspace(dir) already under way (the CLI starts it while goald loads). */
  workspace?: Promise<ResolvedWorkspace>;
}): Promise<PreparedGoal & { sandbox: GoalSandbox }> {
  const workspace = await (request.workspace ?? resolveWorkspace(request.dir));
  const { settings, warnings, workspaceConfig } = await resolveGoalSettings({
    condition: request.condition,
    workspace: workspace.root,
    flags: request.flags,
    env: request.env,
    trustedEnv: request.trustedEnv,
    loopConfig: request.loopConfig,
  });
  if (request.ancestry) settings.ancestry = { ...settings.ancestry, ...request.ancestry };
  if (settings.isolation?.mode === 'worktree') {
    const { requireHeadCommit } = await import('../worktree/goal-worktree.js');
    await requireHeadCommit(workspace.root);
  }
  if (settings.agent.adapter === 'command') {
    const lookup = findExecutable(settings.agent.command, { cwd: workspace.root, env: request.env });
    if (lookup.status === 'missing') {
      throw new GoaldError('config', lookup.message, 'install it, put it on PATH, or fix --agent');
    }
  }
  // Bad sandbox paths, or `required` where bwrap does not work: refused here, before anything is written.
  const sandbox = await openGoalSandbox({
    settings: settings.sandbox,
    workspace,
    agent: settings.agent,
    goaldHome: resolveGoaldHome(request.trustedEnv ?? request.env),
    env: request.trustedEnv ?? request.env,
  });
  if (sandbox.warning !== null) warnings.push(sandbox.warning);
  const agent = await createAgent(settings.agent, request.env, request.trustedEnv);
  let evaluator: Evaluator;
  if (settings.evaluator.provider === 'none') evaluator = createNoneEvaluator();
  else {
    const { assertDifferentModels, createEvaluator } = await import('../evaluator/create-evaluator.js');
    evaluator = createEvaluator(settings.evaluator, request.env);
    assertDifferentModels(agent.model ?? settings.agent.model, evaluator.model, settings.allowSameModel);
  }
  // Last: the only check that may ask a server (the builtin agent's model), after every local one.
  await agent.preflight?.();
  return { settings, workspace, agent, evaluator, warnings, workspaceConfig, sandbox };
}

/** A new goal record for these settings (not yet stored). */
export function newGoalRecord(
  settings: GoalSettings,
  owner: NonNullable<GoalRecord['owner']>,
  options: { loopId?: string; now?: Date; id?: string; worktree?: GoalWorktree } = {},
): GoalRecord {
  const now = (options.now ?? new Date()).toISOString();
  return {
    ...(options.worktree ? { worktree: options.worktree } : {}),
    id: options.id ?? newGoalId(),
    condition: settings.condition,
    workspace: settings.workspace,
    status: 'active',
    phase: 'preparing',
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    finishedAt: null,
    reason: null,
    reasonMessage: null,
    pauseReason: null,
    loopId: options.loopId ?? null,
    settings: toJson(settings),
    machine: null,
    summary: createEmptySummary(),
    owner,
    runningAgent: null,
  };
}

/**
 * Creates a goal's evaluator. The module (and the OpenAI and Anthropic SDKs behind it, ~20 MB resident and
 * most of the code goald loads) loads on first use of a model evaluator, so an idle daemon never holds it
 * (bench/daemon.bench.ts measures the daemon's RSS), and a goal with `--evaluator none` never loads it.
 */
export async function createGoalEvaluator(spec: EvaluatorSpec, env: NodeJS.ProcessEnv): Promise<Evaluator> {
  if (spec.provider === 'none') return createNoneEvaluator();
  const { createEvaluator } = await import('../evaluator/create-evaluator.js');
  return createEvaluator(spec, env);
}

/** Wires the real collaborators of one goal. */
export async function buildSupervisor(options: {
  store: Store;
  goal: GoalRecord;
  prepared: Pick<PreparedGoal, 'settings' | 'workspace' | 'agent' | 'evaluator'>;
  observers: SupervisorObserver[];
  owner: 'daemon' | 'foreground';
  clock?: Clock;
  restored?: RestoredGoal;
  onTurnDelta?: SupervisorDeps['onTurnDelta'];
  /** The goal's snapshotter when the caller made it already (createGoalSnapshotter). */
  snapshotter?: Snapshotter;
  /** The goal's sandbox when the caller opened it already: prepareGoal's, for the same workspace, home and environment. */
  sandbox?: GoalSandbox;
}): Promise<GoalSupervisor> {
  const { store, goal, prepared } = options;
  const sandbox =
    options.sandbox ??
    (await openGoalSandbox({
      settings: prepared.settings.sandbox,
      workspace: prepared.workspace,
      agent: prepared.settings.agent,
      goaldHome: store.home,
      env: process.env,
    }));
  const snapshotter = options.snapshotter ?? (await createGoalSnapshotter(store, goal, prepared.workspace));
  const deps: SupervisorDeps = {
    store,
    clock: options.clock ?? systemClock,
    agent: prepared.agent,
    evaluator: prepared.evaluator,
    snapshotter,
    checks: createCheckRunner({
      workspace: prepared.workspace.root,
      checks: prepared.settings.checks,
      passEnv: prepared.settings.agent.passEnv,
    }),
    observers: options.observers,
    owner: options.owner,
    ...(options.onTurnDelta ? { onTurnDelta: options.onTurnDelta } : {}),
    goaldPaths: goaldPathsIn(prepared.workspace.root, { home: store.home, userConfig: resolveUserConfigPath(process.env) }),
    sandbox,
    ...(goal.worktree === undefined ? {} : (await import('../worktree/worktree-goal.js')).worktreeHooks(goal, store, snapshotter)),
    treeSource: { workspace: prepared.workspace.root, goalDir: store.goalDir(goal.id), objectsDir: prepared.workspace.objectsDir },
  };
  return new GoalSupervisor(goal, prepared.settings, deps, options.restored);
}

/** The snapshotter of a goal: its private index and objects in the goal's directory. */
export function createGoalSnapshotter(store: Store, goal: Pick<GoalRecord, 'id'>, workspace: ResolvedWorkspace): Promise<Snapshotter> {
  return createSnapshotter({
    workspace: workspace.root,
    gitDir: workspace.gitDir,
    commonDir: workspace.commonDir,
    objectsDir: workspace.objectsDir,
    stateDir: store.goalDir(goal.id),
    goaldHome: store.home,
  });
}

/** Opens the store of this user's GOALD_HOME (refused, exit 2, when another user owns or can write it). */
export async function openHomeStore(env: NodeJS.ProcessEnv): Promise<Store> {
  const home = resolveGoaldHome(env);
  ensureTrustedHome(home);
  return openStore(home);
}
