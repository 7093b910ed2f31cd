// Live configuration: the daemon watches goal.config.json in each workspace it runs goals or loops in. A
// valid edit applies from the next turn of the workspace's running goals and re-arms its declared loops;
// an invalid edit is recorded on the goals and loops (status shows it, the log says it) and the last good
// configuration stays in force.

import path from 'node:path';
import { z } from 'zod';
import { toJson } from '../../state/index.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { ConfigWatcher } from '../config/config-watcher.js';
import { CONFIG_FILE_NAME } from '../config/load-config.js';
import type { ConfigFile } from '../config/schema.js';
import type { GoalSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import type { GoalSupervisor } from '../supervisor/supervisor.js';
import { loadGoalRuntime } from './load-goal-runtime.js';
import type { LoopHost, LoopRunRequest } from './loop-host.js';
import { isLiveGoal } from './resolve-goal.js';
import { KeyedSerialQueue } from './serial-queue.js';

// GoalRecord.request as admission stores it; read back leniently (older records may lack it).
const storedRequestSchema = z.object({
  flags: z.record(z.string(), z.union([z.string(), z.array(z.string()), z.boolean()])).default({}),
  env: z.record(z.string(), z.string()).default({}),
});

export interface LiveConfigOptions {
  store: Store;
  /** The daemon's own environment: API keys come from here only. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** The loop host, created on first use. */
  loops(): Promise<LoopHost>;
  /** The supervisor of a goal running in this daemon. */
  supervisorOf(goalId: string): GoalSupervisor | undefined;
  /** True once the daemon is shutting down: no new watchers. */
  isClosing(): boolean;
}

/** The daemon's watchers of goal.config.json, one per workspace, and what their edits change. */
export class LiveConfig {
  private readonly options: LiveConfigOptions;
  private readonly watchers = new Map<string, Promise<ConfigWatcher>>();
  /** Config work of one workspace (the first read, then each edit) runs one at a time, in arrival order. */
  private readonly work = new KeyedSerialQueue<string>();

  constructor(options: LiveConfigOptions) {
    this.options = options;
  }

  /**
   * Starts watching the workspace's goal.config.json (once; not while shutting down). Resolves after the
   * first read of the file's loops (the watcher itself reports changes only); never rejects.
   */
  watch(workspace: string): Promise<void> {
    if (this.watchers.has(workspace) || this.options.isClosing()) return this.work.idle(workspace);
    const file = path.join(workspace, CONFIG_FILE_NAME);
    const report = (error: unknown): void => this.options.log(`${file}: could not apply: ${error instanceof Error ? error.message : String(error)}`);
    const watcher = loadGoalRuntime().then(({ watchConfigFile }) =>
      watchConfigFile(file, {
        onValid: (config) => {
          void this.work.run(workspace, () => this.apply(workspace, config)).catch(report);
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
        await this.readDeclaredLoops(workspace);
      })
      .catch(report);
  }

  /** Reads the workspace's declared loops again, in order with its other config work; rejects for an invalid file. */
  resync(workspace: string): Promise<void> {
    return this.work.run(workspace, () => this.readDeclaredLoops(workspace));
  }

  /** Closes every watcher. */
  async close(): Promise<void> {
    await Promise.all([...this.watchers.values()].map(async (watcher) => (await watcher).close()));
    this.watchers.clear();
  }

  // The loops goal.config.json declares now; an invalid file leaves the loops as they were.
  private async readDeclaredLoops(workspace: string): Promise<void> {
    const { loadConfigFile } = await loadGoalRuntime();
    const { config } = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME));
    await (await this.options.loops()).syncConfigLoops(workspace, config);
  }

  private async recordConfigError(workspace: string, message: string | null): Promise<void> {
    await this.options.store.update((state) => {
      for (const goal of state.goals) if (goal.workspace === workspace && isLiveGoal(goal)) goal.configError = message;
      for (const loop of state.loops) if (loop.workspace === workspace && !loop.stopped) loop.configError = message;
    });
  }

  private async apply(workspace: string, config: ConfigFile | null): Promise<void> {
    const { declaredLoopLayer, createCheckRunner, createGoalEvaluator } = await loadGoalRuntime();
    const { store, env, log } = this.options;
    await this.recordConfigError(workspace, null);
    await (await this.options.loops()).syncConfigLoops(workspace, config);
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
        // Stored as well: status shows the new limits, and a restarted daemon resumes the goal with them.
        await store.update((state) => {
          const record = state.goals.find((candidate) => candidate.id === goal.id);
          if (record) record.settings = toJson(settings);
        });
        log(`goal ${goal.id}: configuration updated; applies from the next turn`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log(`goal ${goal.id}: the new configuration was not applied: ${message}`);
        await store.update((state) => {
          const record = state.goals.find((candidate) => candidate.id === goal.id);
          if (record) record.configError = message;
        });
      }
    }
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
