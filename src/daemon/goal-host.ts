// The daemon's goal host: one supervisor per running goal, a queue per workspace (one active goal each),
// live event fan-out for `logs -f`, and crash recovery of goals a previous daemon left active.

import path from 'node:path';
import { z } from 'zod';
import { appendTurnRecord, readTurnRecords } from '../../state/index.js';
import type { GoalRecord, Json, LoopRecord, Store } from '../../state/types.js';
import { signalGroup } from '../process/process-group.js';
import { isProcessAlive, isSameProcess } from '../process/process-identity.js';
import { SIGKILL_GRACE_MS, terminateGroup } from '../process/terminate-group.js';
import { systemClock, type Clock } from '../clock.js';
import type { ConfigWatcher } from '../config/config-watcher.js';
import { CONFIG_FILE_NAME } from '../config/load-config.js';
import type { ConfigFile } from '../config/schema.js';
import type { GoalSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { createEventLogObserver, readEventLog } from '../supervisor/event-log.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import type { GoalSupervisor, RestoredGoal } from '../supervisor/supervisor.js';
import type { ProgressEvent, TurnRecord } from '../supervisor/types.js';
import type { LoopHost, LoopRunRequest } from './loop-host.js';
import { isLiveGoal, resolveGoalRef } from './resolve-goal.js';
import type { CreateLoopRequest, EventSubscription, GoalHost, StartGoalRequest, StartGoalResponse } from './types.js';

const QUEUED_PHASE = 'queued';

// GoalRecord.request as admit() stores it; read back leniently (older records may lack it).
const storedRequestSchema = z.object({
  flags: z.record(z.string(), z.union([z.string(), z.array(z.string()), z.boolean()])).default({}),
  env: z.record(z.string(), z.string()).default({}),
});

type Listener = (event: ProgressEvent) => void;
type Runtime = typeof import('./goal-runtime.js');

let runtimeModule: Promise<Runtime> | null = null;
/** The goal/loop machinery, imported on first use (see goal-runtime.ts). */
function runtime(): Promise<Runtime> {
  runtimeModule ??= import('./goal-runtime.js');
  return runtimeModule;
}

interface RunningGoal {
  supervisor: GoalSupervisor;
  done: Promise<void>;
}

export interface GoalHostOptions {
  store: Store;
  /** The daemon's own environment: API keys come from here only. */
  env: NodeJS.ProcessEnv;
  version: string;
  log: (line: string) => void;
  /** Called when a client asks the daemon to stop. */
  requestShutdown: () => void;
  clock?: Clock;
}

// A goal owned by a live foreground process is not ours to run or control.
function isForeignLive(goal: GoalRecord): boolean {
  return goal.owner?.kind === 'foreground' && goal.owner.pid !== process.pid && isProcessAlive(goal.owner.pid);
}

// A group a previous daemon recorded is ours while its leader is still the recorded process (start time
// checked against pid reuse), or, once the leader is gone, while the group itself still exists: Linux
// never hands out a pid that is still in use as a process group id.
function ownsLeftoverGroup(pid: number, startTime: string | null): boolean {
  if (isSameProcess(pid, startTime)) return true;
  return !isProcessAlive(pid) && signalGroup(pid, 0);
}

// Kills a recorded agent group (also one left SIGSTOPped by `pause --now`); false when it is not ours.
async function killLeftoverGroup(pid: number, startTime: string | null): Promise<boolean> {
  if (!ownsLeftoverGroup(pid, startTime)) return false;
  await terminateGroup(pid, { graceMs: SIGKILL_GRACE_MS });
  return true;
}

// The number of the turn a persisted machine snapshot was in (its context's `turn`); null when unreadable.
function machineTurnOf(machine: Json | null): number | null {
  if (machine === null || typeof machine !== 'object' || Array.isArray(machine)) return null;
  const context = machine.context;
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return null;
  return typeof context.turn === 'number' && context.turn > 0 ? context.turn : null;
}

export class DaemonGoalHost implements GoalHost {
  private readonly store: Store;
  private readonly env: NodeJS.ProcessEnv;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly options: GoalHostOptions;
  private readonly running = new Map<string, RunningGoal>();
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Prepared goals waiting in a workspace queue (kept in memory; rebuilt from the store after a restart). */
  private readonly prepared = new Map<string, PreparedGoal>();
  private readonly startedAt = new Date();
  /** Serializes start and dequeue decisions so two requests never both take a free workspace. */
  private admission: Promise<unknown> = Promise.resolve();
  /**
   * Settles once recover() has adopted the goals a previous daemon left; control requests wait for it, so
   * one that arrives while a goal is still being recovered finds it running rather than "not running here".
   */
  private readonly recovery: Promise<void>;
  private markRecovered: () => void = () => undefined;
  private shuttingDown = false;
  private loopHost: Promise<LoopHost> | null = null;
  private readonly watchers = new Map<string, Promise<ConfigWatcher>>();
  /** The tail of each workspace's config work (see inConfigOrder). */
  private readonly configWork = new Map<string, Promise<void>>();

  constructor(options: GoalHostOptions) {
    this.options = options;
    this.store = options.store;
    this.env = options.env;
    this.clock = options.clock ?? systemClock;
    this.log = options.log;
    this.recovery = new Promise((resolve) => {
      this.markRecovered = resolve;
    });
  }

  /** The loop host, created (and its scheduler loaded) on first use. */
  private loops(): Promise<LoopHost> {
    this.loopHost ??= runtime().then(({ LoopHost }) => new LoopHost({ store: this.store, clock: this.clock, goals: this, log: this.log }));
    return this.loopHost;
  }

  info(): ReturnType<GoalHost['info']> {
    return {
      pid: process.pid,
      version: this.options.version,
      startedAt: this.startedAt.toISOString(),
      home: this.store.home,
      goalsRunning: this.running.size,
    };
  }

  async listGoals(filter: { workspace?: string; status?: string[] } = {}): Promise<GoalRecord[]> {
    const { goals } = await this.store.read();
    return goals.filter(
      (goal) =>
        (filter.workspace === undefined || goal.workspace === filter.workspace) &&
        (filter.status === undefined || filter.status.length === 0 || filter.status.includes(goal.status)),
    );
  }

  async getGoal(ref: string): Promise<GoalRecord> {
    const { goals } = await this.store.read();
    return resolveGoalRef(goals, ref);
  }

  async startGoal(request: StartGoalRequest): Promise<StartGoalResponse> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    const prepared = await this.prepare(request);
    const admitted = await this.admit(prepared, request, { queue: request.queue, loopId: null });
    if (admitted.goal === null) throw new GoaldError('internal', 'the goal was neither started nor queued');
    return { goal: admitted.goal, queued: admitted.queued, warnings: prepared.warnings };
  }

  /** LoopGoalStarter: a fresh goal for a loop run, unless a goal is live in the workspace. */
  async startLoopRun(loop: LoopRecord, run: LoopRunRequest): Promise<{ outcome: 'started'; goal: GoalRecord } | { outcome: 'waiting' }> {
    if (this.shuttingDown) return { outcome: 'waiting' };
    const label = `loop ${loop.id}${loop.name ? ` "${loop.name}"` : ''} (every ${loop.every}), run ${loop.runs + 1}`;
    const prepared = await this.prepare(run.request, { ancestry: { loop: label }, loopConfig: run.loopConfig });
    const admitted = await this.admit(prepared, run.request, { queue: false, loopId: loop.id, waitIfBusy: true });
    return admitted.goal === null ? { outcome: 'waiting' } : { outcome: 'started', goal: admitted.goal };
  }

  /** LoopGoalStarter: validates a start request (for `goald loop`) without storing anything. */
  async validateStart(request: StartGoalRequest, run: Pick<LoopRunRequest, 'loopConfig'>): Promise<void> {
    await this.prepare(request, { loopConfig: run.loopConfig });
  }

  // Validates a start request end to end. API keys come from the daemon's env, never the request.
  private async prepare(
    request: StartGoalRequest,
    extra: { ancestry?: GoalSettings['ancestry']; loopConfig?: LoopRunRequest['loopConfig'] } = {},
  ): Promise<PreparedGoal> {
    const env: NodeJS.ProcessEnv = { ...this.env, ...request.env };
    try {
      const { prepareGoal } = await runtime();
      return await prepareGoal({
        condition: request.condition,
        dir: request.dir,
        flags: request.flags,
        env,
        ...(extra.ancestry ? { ancestry: extra.ancestry } : {}),
        ...(extra.loopConfig ? { loopConfig: extra.loopConfig } : {}),
      });
    } catch (error) {
      if (error instanceof GoaldError && error.code === 'missing-api-key') {
        throw new GoaldError(
          'missing-api-key',
          `${error.message} in the daemon's environment`,
          'export it, then restart the daemon (goald daemon stop) so it inherits it — or use --foreground',
        );
      }
      throw error;
    }
  }

  // Registers a prepared goal: runs it now, queues it behind the workspace's live goal, or refuses.
  private admit(
    prepared: PreparedGoal,
    request: StartGoalRequest,
    options: { queue: boolean; loopId: string | null; waitIfBusy?: boolean },
  ): Promise<{ goal: GoalRecord; queued: boolean } | { goal: null; queued: false }> {
    const admit = async (): Promise<{ goal: GoalRecord; queued: boolean } | { goal: null; queued: false }> => {
      const { newGoalRecord } = await runtime();
      const goal = newGoalRecord(prepared.settings, { kind: 'daemon', pid: process.pid }, options.loopId ? { loopId: options.loopId } : {});
      goal.request = JSON.parse(JSON.stringify({ condition: request.condition ?? null, flags: request.flags, env: request.env })) as Json;
      const queued = await this.store.update((state) => {
        const busy = state.goals.filter((other) => other.workspace === goal.workspace && isLiveGoal(other));
        const blocking = busy.filter((other) => other.owner?.kind === 'daemon' || isForeignLive(other));
        if (blocking.length > 0 && options.waitIfBusy) return null;
        if (blocking.length > 0 && !options.queue) {
          const first = blocking[0] as GoalRecord;
          throw new GoaldError(
            'conflict',
            `goal ${first.id} is already ${first.status} in ${goal.workspace}`,
            `wait for it, stop it (goald stop ${first.id}), or drop --no-queue to queue behind it`,
          );
        }
        if (blocking.length > 0) goal.phase = QUEUED_PHASE;
        state.goals.push(goal);
        return blocking.length > 0;
      });
      if (queued === null) return { goal: null, queued: false };
      if (queued) {
        this.prepared.set(goal.id, prepared);
        this.log(`goal ${goal.id} queued in ${goal.workspace}`);
      } else {
        await this.launch(goal, prepared);
      }
      return { goal, queued };
    };
    const result = this.admission.then(admit);
    this.admission = result.catch(() => undefined);
    return result;
  }

  async pauseGoal(ref: string, now: boolean): Promise<GoalRecord> {
    await this.afterRecovery();
    const goal = await this.getGoal(ref);
    const running = this.controllable(goal, 'pause');
    if (goal.status === 'paused') throw new GoaldError('conflict', `goal ${goal.id} is already paused`, `resume it with: goald resume ${goal.id}`);
    await running.supervisor.pause(now);
    return this.getGoal(goal.id);
  }

  async resumeGoal(ref: string): Promise<GoalRecord> {
    await this.afterRecovery();
    const goal = await this.getGoal(ref);
    const running = this.controllable(goal, 'resume');
    if (goal.status !== 'paused' && running.supervisor.status !== 'paused') {
      throw new GoaldError('conflict', `goal ${goal.id} is not paused (it is ${goal.status})`, 'only paused goals can be resumed');
    }
    await running.supervisor.resume();
    return this.getGoal(goal.id);
  }

  async stopGoal(ref: string): Promise<GoalRecord> {
    await this.afterRecovery();
    const goal = await this.getGoal(ref);
    if (!isLiveGoal(goal)) {
      throw new GoaldError('conflict', `goal ${goal.id} already ${goal.status}`, 'nothing to stop');
    }
    if (goal.phase === QUEUED_PHASE && !this.running.has(goal.id)) {
      await this.finishQueuedAsStopped(goal.id);
      return this.getGoal(goal.id);
    }
    const running = this.controllable(goal, 'stop');
    running.supervisor.stop('stopped by the user');
    await running.done;
    return this.getGoal(goal.id);
  }

  async subscribe(ref: string): Promise<EventSubscription> {
    const goal = await this.getGoal(ref);
    const past = await readEventLog(this.store.goalDir(goal.id));
    const finished = !isLiveGoal(goal) || past.some((event) => event.type === 'goal.finished');
    return {
      past,
      finished,
      follow: (listener) => {
        const set = this.listeners.get(goal.id) ?? new Set<Listener>();
        set.add(listener);
        this.listeners.set(goal.id, set);
        return () => {
          set.delete(listener);
          if (set.size === 0) this.listeners.delete(goal.id);
        };
      },
    };
  }

  async listLoops(): Promise<LoopRecord[]> {
    return (await this.loops()).list();
  }

  async createLoop(request: CreateLoopRequest): Promise<LoopRecord> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    const loop = await (await this.loops()).create(request);
    void this.watchWorkspace(loop.workspace);
    return loop;
  }

  async deleteLoop(ref: string): Promise<LoopRecord> {
    return (await this.loops()).remove(ref);
  }

  async runLoop(ref: string): Promise<{ loop: LoopRecord; outcome: 'started' | 'waiting' | 'skipped' }> {
    return (await this.loops()).fire(ref);
  }

  async syncLoops(dir: string): Promise<LoopRecord[]> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    const { resolveWorkspace } = await runtime();
    const { root } = await resolveWorkspace(dir);
    void this.watchWorkspace(root);
    // Read again in config order, so an invalid file reaches the caller (nothing changes then).
    await this.inConfigOrder(root, () => this.readDeclaredLoops(root));
    return (await (await this.loops()).list()).filter((loop) => loop.workspace === root && loop.source === 'config' && !loop.stopped);
  }

  async shutdown(): Promise<void> {
    this.options.requestShutdown();
  }

  /** Lets go of every running goal (agents killed, goals stay active for the next daemon). */
  async detachAll(): Promise<void> {
    this.shuttingDown = true;
    await this.afterRecovery(); // it launches nothing more once shutting down, but may be mid-write
    if (this.loopHost) await (await this.loopHost).stop();
    await Promise.all([...this.watchers.values()].map(async (watcher) => (await watcher).close()));
    this.watchers.clear();
    const pending = [...this.running.values()];
    for (const goal of pending) goal.supervisor.detach();
    await Promise.all(pending.map((goal) => goal.done));
  }

  /**
   * Adopts goals a previous daemon left active: kills leftover agents, records interrupted turns, resumes.
   * Called once by the daemon after its socket is up; control requests (pause, resume, stop) wait for it.
   */
  async recover(): Promise<void> {
    try {
      await this.recoverGoals();
    } finally {
      this.markRecovered();
    }
  }

  private async recoverGoals(): Promise<void> {
    const { goals } = await this.store.read();
    const adopted = goals.filter((goal) => isLiveGoal(goal) && !isForeignLive(goal));
    // Every leftover group at once: each may take the whole SIGTERM grace to die.
    await Promise.all(
      adopted.map(async (goal) => {
        if (!goal.runningAgent) return;
        const killed = await killLeftoverGroup(goal.runningAgent.pid, goal.runningAgent.startTime);
        if (killed) this.log(`goal ${goal.id}: killed the leftover agent group ${goal.runningAgent.pid}`);
      }),
    );
    for (const goal of adopted) {
      if (goal.owner?.kind === 'foreground') {
        await this.markOrphanedForeground(goal);
        continue;
      }
      if (goal.phase === QUEUED_PHASE) continue;
      try {
        await this.resumeAfterCrash(goal);
      } catch (error) {
        this.log(`goal ${goal.id}: could not be recovered: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const workspaces = new Set(goals.filter((goal) => goal.phase === QUEUED_PHASE).map((goal) => goal.workspace));
    for (const workspace of workspaces) await this.startNextQueued(workspace);
    // An idle daemon without loops never loads the scheduler (or the rest of the goal machinery).
    if ((await this.store.read()).loops.some((loop) => !loop.stopped)) {
      const loops = await this.loops();
      await loops.start();
      for (const workspace of await loops.workspaces()) void this.watchWorkspace(workspace);
    }
  }

  // Live configuration: a valid edit of goal.config.json applies from the next turn of the workspace's
  // goals and re-arms its loops; an invalid edit is reported (status, log) and the last good config stays.
  // Returns the first read of the file's loops (the watcher itself reports changes only).
  private watchWorkspace(workspace: string): Promise<void> {
    if (this.watchers.has(workspace) || this.shuttingDown) return this.configWork.get(workspace) ?? Promise.resolve();
    const file = path.join(workspace, CONFIG_FILE_NAME);
    const report = (error: unknown): void => this.log(`${file}: could not apply: ${error instanceof Error ? error.message : String(error)}`);
    const watcher = runtime().then(({ watchConfigFile }) => watchConfigFile(file, {
      onValid: (config) => {
        void this.inConfigOrder(workspace, () => this.applyConfig(workspace, config)).catch(report);
      },
      onInvalid: (error) => {
        this.log(`${file}: invalid edit ignored, the last good configuration stays in force: ${error.message}`);
        void this.inConfigOrder(workspace, () => this.recordConfigError(workspace, error.message)).catch(report);
      },
    }));
    this.watchers.set(workspace, watcher);
    // Read once the watcher is ready, so an edit made meanwhile is not lost: it is delivered after this.
    return this.inConfigOrder(workspace, async () => {
      await (await watcher).ready;
      await this.readDeclaredLoops(workspace);
    }).catch(report);
  }

  // The loops goal.config.json declares now; an invalid file leaves the loops as they were.
  private async readDeclaredLoops(workspace: string): Promise<void> {
    const { loadConfigFile } = await runtime();
    const { config } = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME));
    await (await this.loops()).syncConfigLoops(workspace, config);
  }

  // Config work of one workspace (the first read, then each edit) runs one at a time, in arrival order.
  private inConfigOrder(workspace: string, work: () => Promise<void>): Promise<void> {
    const result = (this.configWork.get(workspace) ?? Promise.resolve()).then(work);
    this.configWork.set(workspace, result.catch(() => undefined));
    return result;
  }

  private async recordConfigError(workspace: string, message: string | null): Promise<void> {
    await this.store.update((state) => {
      for (const goal of state.goals) if (goal.workspace === workspace && isLiveGoal(goal)) goal.configError = message;
      for (const loop of state.loops) if (loop.workspace === workspace && !loop.stopped) loop.configError = message;
    });
  }

  private async applyConfig(workspace: string, config: ConfigFile | null): Promise<void> {
    const { declaredLoopLayer, createCheckRunner, createGoalEvaluator } = await runtime();
    await this.recordConfigError(workspace, null);
    await (await this.loops()).syncConfigLoops(workspace, config);
    const { goals, loops } = await this.store.read();
    for (const goal of goals.filter((candidate) => candidate.workspace === workspace && this.running.has(candidate.id))) {
      const running = this.running.get(goal.id);
      if (!running) continue;
      try {
        // A run of a config-declared loop keeps that loop's own layer (its checks, limits, ...).
        const loop = loops.find((candidate) => candidate.id === goal.loopId);
        const settings = await this.reresolveSettings(goal, loop ? declaredLoopLayer(loop, config) : undefined);
        running.supervisor.applySettings(settings, {
          checks: createCheckRunner({ workspace: settings.workspace, checks: settings.checks }),
          evaluator: await createGoalEvaluator(settings.evaluator, this.env),
        });
        // Stored as well: status shows the new limits, and a restarted daemon resumes the goal with them.
        await this.store.update((state) => {
          const record = state.goals.find((candidate) => candidate.id === goal.id);
          if (record) record.settings = JSON.parse(JSON.stringify(settings)) as Json;
        });
        this.log(`goal ${goal.id}: configuration updated; applies from the next turn`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.log(`goal ${goal.id}: the new configuration was not applied: ${message}`);
        await this.store.update((state) => {
          const record = state.goals.find((candidate) => candidate.id === goal.id);
          if (record) record.configError = message;
        });
      }
    }
  }

  // The goal's settings as its original request would resolve them now (flags still beat the file).
  private async reresolveSettings(goal: GoalRecord, loopConfig: LoopRunRequest['loopConfig']): Promise<GoalSettings> {
    const { parseStoredSettings, resolveGoalSettings } = await runtime();
    const stored = parseStoredSettings(goal.settings);
    if (!stored.ok) throw new GoaldError('state-corrupt', `goal ${goal.id} has invalid stored settings (${stored.problem})`);
    const request = storedRequestSchema.safeParse(goal.request ?? {});
    const flags = request.success ? request.data.flags : {};
    const env = request.success ? request.data.env : {};
    const { settings } = await resolveGoalSettings({
      condition: goal.condition,
      workspace: goal.workspace,
      flags,
      env: { ...this.env, ...env },
      loopConfig,
    });
    // What a goal is, and where it came from, never changes mid-run.
    return { ...settings, condition: stored.settings.condition, ancestry: stored.settings.ancestry, agent: stored.settings.agent };
  }

  // A goal being recovered is not yet running here; a control request for it waits rather than failing.
  private afterRecovery(): Promise<void> {
    return this.recovery;
  }

  private controllable(goal: GoalRecord, action: string): RunningGoal {
    const running = this.running.get(goal.id);
    if (running) return running;
    if (!isLiveGoal(goal)) throw new GoaldError('conflict', `goal ${goal.id} already ${goal.status}`, `nothing to ${action}`);
    if (goal.phase === QUEUED_PHASE) {
      throw new GoaldError('conflict', `goal ${goal.id} is queued and has not started`, `stop it with: goald stop ${goal.id}`);
    }
    if (goal.owner?.kind === 'foreground') {
      throw new GoaldError(
        'conflict',
        `goal ${goal.id} runs in a foreground process (pid ${goal.owner.pid})`,
        'control it from that terminal (Ctrl-C stops it)',
      );
    }
    throw new GoaldError('conflict', `goal ${goal.id} is not running in this daemon`, 'restart the daemon to recover it');
  }

  private emit(goalId: string, event: ProgressEvent): void {
    for (const listener of this.listeners.get(goalId) ?? []) {
      try {
        listener(event);
      } catch {
        // a broken stream never disturbs the goal
      }
    }
  }

  private async launch(goal: GoalRecord, prepared: PreparedGoal, restored?: RestoredGoal): Promise<void> {
    if (this.shuttingDown) return; // the goal stays active in the store; the next daemon runs it
    const { buildSupervisor } = await runtime();
    const supervisor = await buildSupervisor({
      store: this.store,
      goal,
      prepared,
      owner: 'daemon',
      clock: this.clock,
      ...(restored ? { restored } : {}),
      observers: [createEventLogObserver(this.store.goalDir(goal.id)), { onEvent: (event) => this.emit(goal.id, event) }],
    });
    this.log(`goal ${goal.id} running in ${goal.workspace}`);
    const done = supervisor.run().then(
      (outcome) => {
        if (outcome) this.log(`goal ${goal.id} ${outcome.status}${outcome.failure ? ` (${outcome.failure.reason})` : ''}`);
      },
      async (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.log(`goal ${goal.id} crashed: ${message}`);
        await this.markFailed(goal.id, 'stopped', `goald hit an internal error: ${message}`);
      },
    );
    const entry: RunningGoal = {
      supervisor,
      done: done.finally(async () => {
        this.running.delete(goal.id);
        if (this.shuttingDown) return;
        await this.startNextQueued(goal.workspace);
        const finished = (await this.store.read()).goals.find((candidate) => candidate.id === goal.id);
        if (finished && !isLiveGoal(finished) && this.loopHost) await (await this.loopHost).onGoalFinished(finished);
      }),
    };
    void this.watchWorkspace(goal.workspace);
    this.running.set(goal.id, entry);
  }

  private async startNextQueued(workspace: string): Promise<void> {
    const next = async (): Promise<void> => {
      if (this.shuttingDown) return;
      const { goals } = await this.store.read();
      const live = goals.filter((goal) => goal.workspace === workspace && isLiveGoal(goal));
      if (live.some((goal) => goal.phase !== QUEUED_PHASE && (this.running.has(goal.id) || isForeignLive(goal)))) return;
      const candidate = live
        .filter((goal) => goal.phase === QUEUED_PHASE)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
      if (!candidate) return;
      try {
        const prepared = this.prepared.get(candidate.id) ?? (await this.materialize(candidate));
        this.prepared.delete(candidate.id);
        await this.store.update((state) => {
          const goal = state.goals.find((other) => other.id === candidate.id);
          if (goal) {
            goal.phase = 'preparing';
            goal.owner = { kind: 'daemon', pid: process.pid };
          }
        });
        await this.launch({ ...candidate, phase: 'preparing' }, prepared);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.log(`queued goal ${candidate.id} could not start: ${message}`);
        await this.markFailed(candidate.id, 'workspace-gone', message);
        void this.startNextQueued(workspace); // not awaited: it queues behind this very admission step
      }
    };
    const result = this.admission.then(next);
    this.admission = result.catch(() => undefined);
    return result;
  }

  // Rebuilds a goal's collaborators from its stored settings (after a restart, or for a queued goal).
  private async materialize(goal: GoalRecord): Promise<PreparedGoal> {
    const { parseStoredSettings, resolveWorkspace, createAgent, createGoalEvaluator } = await runtime();
    const parsed = parseStoredSettings(goal.settings);
    if (!parsed.ok) throw new GoaldError('state-corrupt', `goal ${goal.id} has invalid stored settings (${parsed.problem})`);
    const settings = parsed.settings;
    const workspace = await resolveWorkspace(settings.workspace);
    return {
      settings,
      workspace,
      agent: createAgent(settings.agent, this.env),
      evaluator: await createGoalEvaluator(settings.evaluator, this.env),
      warnings: [],
    };
  }

  private async resumeAfterCrash(goal: GoalRecord): Promise<void> {
    const prepared = await this.materialize(goal);
    const goalDir = this.store.goalDir(goal.id);
    const turns = (await readTurnRecords(goalDir)) as TurnRecord[];
    let lastTurn = turns.at(-1) ?? null;
    // The turn in flight when the daemon died: its agent (also when paused with --now), or its snapshot,
    // checks or evaluator call — unless its record was written just before the crash.
    const midTurn = ['running', 'checking', 'evaluating'].includes(goal.phase);
    const inFlight = goal.runningAgent?.turn ?? (midTurn ? machineTurnOf(goal.machine) : null);
    if (inFlight !== null && lastTurn && lastTurn.turn < inFlight) {
      // Recorded as interrupted so history shows it.
      const interrupted: TurnRecord = {
        ...lastTurn,
        turn: inFlight,
        startedAt: goal.updatedAt,
        finishedAt: new Date(this.clock.now()).toISOString(),
        agent: {
          outcome: 'interrupted',
          exitCode: null,
          signal: null,
          durationMs: 0,
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: null, estimated: true },
          finalMessage: '',
          error: 'interrupted: the daemon stopped during the turn',
        },
        files: [],
        patchId: null,
        evaluation: { kind: 'skipped', reason: 'interrupted' },
        tokens: 0,
        achieved: false,
        breakers: { ...lastTurn.breakers, turns: Math.max(lastTurn.breakers.turns, inFlight) },
        trip: null,
        status: goal.status,
        promptFile: `turn-${inFlight}.prompt.txt`,
        transcriptFile: `turn-${inFlight}.log`,
      };
      await appendTurnRecord(goalDir, interrupted);
      lastTurn = interrupted;
    }
    await this.store.update((state) => {
      const record = state.goals.find((other) => other.id === goal.id);
      if (record) {
        record.owner = { kind: 'daemon', pid: process.pid };
        record.runningAgent = null;
      }
    });
    this.log(`goal ${goal.id}: recovered (${goal.status}, was ${goal.phase})`);
    const restored: RestoredGoal | undefined =
      goal.machine === null ? undefined : { machine: goal.machine, lastTurn, initialTree: turns[0]?.tree ?? null };
    await this.launch({ ...goal, owner: { kind: 'daemon', pid: process.pid }, runningAgent: null }, prepared, restored);
  }

  private async markOrphanedForeground(goal: GoalRecord): Promise<void> {
    const pid = goal.owner?.pid ?? 0;
    await this.markFailed(goal.id, 'stopped', `its foreground process (pid ${pid}) exited without finishing it`);
  }

  private async finishQueuedAsStopped(goalId: string): Promise<void> {
    this.prepared.delete(goalId);
    await this.markFailed(goalId, 'stopped', 'stopped by the user while queued');
    const event: ProgressEvent = { type: 'goal.finished', id: goalId, status: 'failed', reason: 'stopped', breaker: null, turns: 0, tokens: 0 };
    createEventLogObserver(this.store.goalDir(goalId)).onEvent?.(event);
    this.emit(goalId, event);
  }

  private async markFailed(goalId: string, reason: 'stopped' | 'workspace-gone', message: string): Promise<void> {
    const now = new Date(this.clock.now()).toISOString();
    await this.store.update((state) => {
      const goal = state.goals.find((other) => other.id === goalId);
      if (!goal || !isLiveGoal(goal)) return;
      goal.status = 'failed';
      goal.phase = 'failed';
      goal.reason = reason;
      goal.reasonMessage = message;
      goal.finishedAt = now;
      goal.updatedAt = now;
      goal.runningAgent = null;
    });
  }
}
