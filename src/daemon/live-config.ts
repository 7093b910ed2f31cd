// Live configuration: the daemon watches goal.config.json in each workspace it runs goals or loops in.
//
// The goal contract is sealed (issue 9): goald cannot tell the agent's hand from the owner's, so an edit
// applies on its own only when no turn of the workspace runs (paused, cooling down, queued, between loop
// runs). An edit seen while a turn runs, or present in a turn's delta, is HELD: it changes no setting and
// arms no loop; `status`, `show` and the `config.held` event name the settings it would change; the owner
// applies it with `goald edit <goal> --apply-config`, or reverts the file. While an edit is held, later
// edits join it (the file still holds the unapproved change); the held state is stored on the goals, so
// a restarted daemon keeps holding it.
//
// An edit that applies is re-resolved per goal from its original request (flags and `goald edit` values
// still beat the file; condition, ancestry and agent are kept), takes effect at the next turn boundary,
// re-arms the workspace's declared loops and is recorded in each goal's edit history. An invalid edit is
// recorded on the goals and loops (status shows it, the log says it) and the last good configuration stays
// in force.

import path from 'node:path';
import { z } from '../zod.js';
import { toJson } from '../../state/index.js';
import type { GoalEdit, GoalRecord, HeldConfig, Store } from '../../state/types.js';
import type { ConfigWatcher } from '../config/config-watcher.js';
import { CONFIG_FILE_NAME } from '../config/load-config.js';
import type { ConfigFile } from '../config/schema.js';
import type { GoalSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { changedConfigPaths, configHash, diffSettings, heldEditError, isWorkspaceConfigPath } from '../supervisor/contract.js';
import type { GoalSupervisor } from '../supervisor/supervisor.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { loadGoalRuntime } from './load-goal-runtime.js';
import type { LoopHost, LoopRunRequest } from './loop-host.js';
import { isLiveGoal } from './resolve-goal.js';
import { KeyedSerialQueue } from './serial-queue.js';

// GoalRecord.request as admission stores it; read back leniently (older records may lack it).
const storedRequestSchema = z.object({
  flags: z.record(z.string(), z.union([z.string(), z.array(z.string()), z.boolean()])).default({}),
  env: z.record(z.string(), z.string()).default({}),
});

/** The turn of a workspace that runs now: its goal and number. */
export interface TurnInFlight {
  goalId: string;
  turn: number;
}

export interface LiveConfigOptions {
  store: Store;
  /** The daemon's own environment: API keys come from here only. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** The loop host, created on first use. */
  loops(): Promise<LoopHost>;
  /** The supervisor of a goal running in this daemon. */
  supervisorOf(goalId: string): GoalSupervisor | undefined;
  /** The turn running in the workspace now, if any (from its start until its verdict). */
  turnInFlight(workspace: string): TurnInFlight | null;
  /** Records an event in a goal's event log and tells its followers. */
  announce(goalId: string, event: ProgressEvent): void;
  /** True once the daemon is shutting down: no new watchers. */
  isClosing(): boolean;
}

/** What the daemon holds in force for one workspace's goal.config.json. */
interface WorkspaceConfig {
  /** The fingerprint in force, and the config itself (undefined when only the fingerprint survived a restart). */
  hash: string | null;
  config: ConfigFile | null | undefined;
  /** An edit waiting for the owner, or null. */
  held: HeldConfig | null;
}

/** Why a config is being considered: the watcher saw the file change, or a turn's delta contains it. */
type Trigger = { kind: 'watch' } | { kind: 'delta'; goalId: string; turn: number };

/** The daemon's watchers of goal.config.json, one per workspace, and what their edits change. */
export class LiveConfig {
  private readonly options: LiveConfigOptions;
  private readonly watchers = new Map<string, Promise<ConfigWatcher>>();
  private readonly workspaces = new Map<string, WorkspaceConfig>();
  /** Config work of one workspace (the first read, then each edit) runs one at a time, in arrival order. */
  private readonly work = new KeyedSerialQueue<string>();

  constructor(options: LiveConfigOptions) {
    this.options = options;
  }

  /**
   * Starts watching the workspace's goal.config.json (once; not while shutting down). Resolves after the
   * first read of the file (its loops are armed unless an edit is held); never rejects.
   */
  watch(workspace: string): Promise<void> {
    if (this.watchers.has(workspace) || this.options.isClosing()) return this.work.idle(workspace);
    const file = path.join(workspace, CONFIG_FILE_NAME);
    const report = (error: unknown): void => this.options.log(`${file}: could not apply: ${error instanceof Error ? error.message : String(error)}`);
    const watcher = loadGoalRuntime().then(({ watchConfigFile }) =>
      watchConfigFile(file, {
        onValid: (config) => {
          void this.work.run(workspace, () => this.consider(workspace, config, { kind: 'watch' })).catch(report);
        },
        onInvalid: (error) => {
          this.options.log(`${file}: invalid edit ignored, the last good configuration stays in force: ${error.message}`);
          void this.work.run(workspace, () => this.recordConfigError(workspace, error.message)).catch(report);
        },
      }),
    );
    this.watchers.set(workspace, watcher);
    // Read once the watcher is ready, so an edit made meanwhile is not lost: it is delivered after this.
    return this.work
      .run(workspace, async () => {
        await (await watcher).ready;
        await this.initialize(workspace);
      })
      .catch(report);
  }

  /**
   * Reads the workspace's declared loops again, in order with its other config work (`goald loop sync`);
   * rejects for an invalid file, and while an edit of it is held.
   */
  resync(workspace: string): Promise<void> {
    return this.work.run(workspace, async () => {
      const state = await this.stateOf(workspace);
      if (state.held !== null) throw heldEditError(workspace, await this.heldGoalOf(workspace));
      const { loadConfigFile } = await loadGoalRuntime();
      const { config } = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME));
      await (await this.options.loops()).syncConfigLoops(workspace, config);
      this.workspaces.set(workspace, { hash: configHash(config), config, held: null });
    });
  }

  /**
   * A turn's delta: when it contains goal.config.json, the file as it is now is held unless it is the
   * config in force (the turn's supervisor awaits this before its checks and verdict count).
   */
  async onTurnDelta(goalId: string, workspace: string, turn: number, files: readonly string[]): Promise<void> {
    if (!files.some(isWorkspaceConfigPath)) return;
    await this.work.run(workspace, async () => {
      const { loadConfigFile } = await loadGoalRuntime();
      let config: ConfigFile | null;
      try {
        config = (await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME))).config;
      } catch (error) {
        // An invalid file applies nothing; the watcher reports it.
        this.options.log(`goal ${goalId}: turn ${turn} left an invalid ${CONFIG_FILE_NAME}: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      await this.consider(workspace, config, { kind: 'delta', goalId, turn });
    });
  }

  /**
   * Refuses (a `conflict` naming the fix) while the workspace's file holds an edit nobody approved: a goal
   * or loop run started now would run with it, so an agent's edit would become the next goal's contract.
   * A file already back to the config in force is not held, whether or not the watcher has seen it yet.
   */
  refuseWhileHeld(workspace: string): Promise<void> {
    return this.work.run(workspace, async () => {
      const state = await this.stateOf(workspace);
      if (state.held === null) return;
      const { loadConfigFile } = await loadGoalRuntime();
      const current = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME)).then(
        (loaded) => configHash(loaded.config),
        () => undefined,
      );
      if (current === state.hash) {
        this.options.log(`${path.join(workspace, CONFIG_FILE_NAME)}: back to the configuration in force; the held edit is dropped`);
        await this.release(workspace);
        return;
      }
      throw heldEditError(workspace, await this.heldGoalOf(workspace));
    });
  }

  /** Stores the part of a new goal's contract its settings lack: the config file it started with and its loops. */
  seal(goalId: string, workspace: string): Promise<void> {
    return this.work.run(workspace, async () => {
      const { loadConfigFile } = await loadGoalRuntime();
      const config = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME)).then(
        (loaded) => loaded.config,
        () => null,
      );
      const sealedAt = new Date().toISOString();
      await this.options.store.update((state) => {
        const goal = state.goals.find((candidate) => candidate.id === goalId);
        if (goal && goal.contract === undefined) goal.contract = { configHash: configHash(config), loops: toJson(config?.loops ?? null), sealedAt };
      });
    });
  }

  /**
   * `goald edit <goal> --apply-config`: applies the held edit of the goal's workspace file as it is now
   * (settings of its live goals, its declared loops); resolves with what changed for `goalId`.
   */
  applyHeld(goalId: string, workspace: string): Promise<GoalEdit | null> {
    return this.work.run(workspace, async () => {
      const state = await this.stateOf(workspace);
      if (state.held === null) {
        throw new GoaldError('conflict', `no edit of ${path.join(workspace, CONFIG_FILE_NAME)} is held for goal ${goalId}`, 'goald status shows held config edits; a file edit made while no turn runs applies by itself');
      }
      const { loadConfigFile } = await loadGoalRuntime();
      const { config } = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME));
      const edits = await this.apply(workspace, config, 'goald edit --apply-config');
      await this.release(workspace);
      return edits.get(goalId) ?? null;
    });
  }

  /** Closes every watcher. */
  async close(): Promise<void> {
    await Promise.all([...this.watchers.values()].map(async (watcher) => (await watcher).close()));
    this.watchers.clear();
  }

  // The first read: the held state a previous daemon stored, else the file as it is (its loops armed).
  private async initialize(workspace: string): Promise<void> {
    const { loadConfigFile } = await loadGoalRuntime();
    const { config } = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME));
    const held = await this.storedHeld(workspace);
    if (held !== null && held.inForceHash !== configHash(config)) {
      this.workspaces.set(workspace, { hash: held.inForceHash, config: undefined, held });
      this.options.log(`${path.join(workspace, CONFIG_FILE_NAME)}: an edit is still held (${held.settings.join(', ')}); its loops stay as they were`);
      return;
    }
    this.workspaces.set(workspace, { hash: configHash(config), config, held: null });
    if (held !== null) await this.release(workspace); // reverted while no daemon ran
    await (await this.options.loops()).syncConfigLoops(workspace, config);
  }

  private async stateOf(workspace: string): Promise<WorkspaceConfig> {
    const known = this.workspaces.get(workspace);
    if (known) return known;
    await this.initialize(workspace);
    const state = this.workspaces.get(workspace);
    if (!state) throw new GoaldError('internal', `no configuration state for ${workspace}`);
    return state;
  }

  // The held edit stored on the workspace's newest goal that has one (held state outlives a daemon).
  private async storedHeld(workspace: string): Promise<HeldConfig | null> {
    const { goals } = await this.options.store.read();
    const holding = goals
      .filter((goal) => goal.workspace === workspace && goal.heldConfig)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0];
    return holding?.heldConfig ?? null;
  }

  private async heldGoalOf(workspace: string): Promise<string | null> {
    const { goals } = await this.options.store.read();
    const holding = goals.filter((goal) => goal.workspace === workspace && goal.heldConfig).sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0];
    return holding?.id ?? null;
  }

  // Applies, holds or ignores one valid version of the file.
  private async consider(workspace: string, config: ConfigFile | null, trigger: Trigger): Promise<void> {
    const state = await this.stateOf(workspace);
    await this.recordConfigError(workspace, null);
    const hash = configHash(config);
    if (hash === state.hash) {
      if (state.held !== null) {
        this.options.log(`${path.join(workspace, CONFIG_FILE_NAME)}: back to the configuration in force; the held edit is dropped`);
        await this.release(workspace);
      }
      return;
    }
    const running = trigger.kind === 'delta' ? { goalId: trigger.goalId, turn: trigger.turn } : this.options.turnInFlight(workspace);
    if (state.held !== null || running !== null) {
      await this.hold(workspace, state, config, hash, running);
      return;
    }
    await this.apply(workspace, config, 'goal.config.json');
  }

  private async hold(workspace: string, state: WorkspaceConfig, config: ConfigFile | null, hash: string | null, running: TurnInFlight | null): Promise<void> {
    if (state.held?.hash === hash) return;
    const settings = state.config === undefined ? (state.held?.settings ?? []) : changedConfigPaths(state.config, config);
    const held: HeldConfig = {
      hash,
      inForceHash: state.hash,
      since: new Date().toISOString(),
      turn: running?.turn ?? state.held?.turn ?? null,
      settings,
    };
    state.held = held;
    const goalIds = await this.options.store.update((stored) => {
      const marked: string[] = [];
      for (const goal of stored.goals) {
        if (goal.workspace !== workspace || !(isLiveGoal(goal) || goal.id === running?.goalId)) continue;
        goal.heldConfig = held;
        marked.push(goal.id);
      }
      return marked;
    });
    const where = running ? `during turn ${running.turn} of goal ${running.goalId}` : 'while an earlier edit was held';
    this.options.log(
      `${path.join(workspace, CONFIG_FILE_NAME)}: edited ${where}: held, not applied (${settings.join(', ') || 'no setting'}); ` +
        `the owner applies it with goald edit ${running?.goalId ?? goalIds[0] ?? '<goal>'} --apply-config`,
    );
    for (const goalId of goalIds) this.options.announce(goalId, { type: 'config.held', id: goalId, turn: held.turn, settings });
  }

  // The held edit is gone (applied, or the file is back to the config in force).
  private async release(workspace: string): Promise<void> {
    const state = this.workspaces.get(workspace);
    if (state) state.held = null;
    await this.options.store.update((stored) => {
      for (const goal of stored.goals) if (goal.workspace === workspace && goal.heldConfig) goal.heldConfig = null;
    });
  }

  private async recordConfigError(workspace: string, message: string | null): Promise<void> {
    await this.options.store.update((state) => {
      for (const goal of state.goals) if (goal.workspace === workspace && isLiveGoal(goal)) goal.configError = message;
      for (const loop of state.loops) if (loop.workspace === workspace && !loop.stopped) loop.configError = message;
    });
  }

  // Puts `config` in force: its declared loops, and the settings of the workspace's running goals from their
  // next turn. Resolves with each goal's recorded edit.
  private async apply(workspace: string, config: ConfigFile | null, by: GoalEdit['by']): Promise<Map<string, GoalEdit>> {
    const { declaredLoopLayer, createCheckRunner, createGoalEvaluator, parseStoredSettings } = await loadGoalRuntime();
    const { store, env, log } = this.options;
    const edits = new Map<string, GoalEdit>();
    await (await this.options.loops()).syncConfigLoops(workspace, config);
    this.workspaces.set(workspace, { hash: configHash(config), config, held: this.workspaces.get(workspace)?.held ?? null });
    const { goals, loops } = await store.read();
    for (const goal of goals.filter((candidate) => candidate.workspace === workspace)) {
      const supervisor = this.options.supervisorOf(goal.id);
      if (!supervisor) continue;
      try {
        // A run of a config-declared loop keeps that loop's own layer (its checks, limits, ...).
        const loop = loops.find((candidate) => candidate.id === goal.loopId);
        const settings = await this.reresolveSettings(goal, loop ? declaredLoopLayer(loop, config) : undefined);
        supervisor.applySettings(settings, {
          checks: createCheckRunner({ workspace: settings.workspace, checks: settings.checks, passEnv: settings.agent.passEnv }),
          evaluator: await createGoalEvaluator(settings.evaluator, env),
        });
        const before = parseStoredSettings(goal.settings);
        const edit: GoalEdit = { at: new Date().toISOString(), by, changes: before.ok ? diffSettings(before.settings, settings) : [], resumed: false };
        // Stored as well: status shows the new limits, and a restarted daemon resumes the goal with them.
        await store.update((state) => {
          const record = state.goals.find((candidate) => candidate.id === goal.id);
          if (!record) return;
          record.settings = toJson(settings);
          if (edit.changes.length > 0 || by !== 'goal.config.json') record.edits = [...(record.edits ?? []), edit];
        });
        edits.set(goal.id, edit);
        log(`goal ${goal.id}: configuration updated; applies from the next turn`);
        if (edit.changes.length > 0 || by !== 'goal.config.json') {
          this.options.announce(goal.id, { type: 'goal.edited', id: goal.id, by, settings: edit.changes.map((change) => change.setting), resumed: false });
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log(`goal ${goal.id}: the new configuration was not applied: ${message}`);
        await store.update((state) => {
          const record = state.goals.find((candidate) => candidate.id === goal.id);
          if (record) record.configError = message;
        });
      }
    }
    return edits;
  }

  // The goal's settings as its original request would resolve them now (flags still beat the file).
  private async reresolveSettings(goal: GoalRecord, loopConfig: LoopRunRequest['loopConfig']): Promise<GoalSettings> {
    const { parseStoredSettings, resolveGoalSettings } = await loadGoalRuntime();
    const stored = parseStoredSettings(goal.settings);
    if (!stored.ok) throw new GoaldError('state-corrupt', `goal ${goal.id} has invalid stored settings (${stored.problem})`);
    const request = storedRequestSchema.safeParse(goal.request ?? {});
    const flags = request.success ? request.data.flags : {};
    const env = request.success ? request.data.env : {};
    const { settings } = await resolveGoalSettings({
      condition: goal.condition,
      workspace: goal.workspace,
      flags,
      env: { ...this.options.env, ...env },
      trustedEnv: this.options.env,
      loopConfig,
    });
    // What a goal is, and where it came from, never changes mid-run.
    return { ...settings, condition: stored.settings.condition, ancestry: stored.settings.ancestry, agent: stored.settings.agent };
  }
}
