// Scheduled reruns inside the daemon: CLI-created and config-declared loops, armed in the loop scheduler;
// each due run starts a fresh goal in the loop's workspace, or waits (one waiting run per loop) while a
// goal is active there.

import { createHash } from 'node:crypto';
import path from 'node:path';
import { newLoopId, toJson } from '../../state/index.js';
import type { GoalRecord, LoopRecord, Store } from '../../state/types.js';
import type { Clock } from '../clock.js';
import { CONFIG_FILE_NAME, loadConfigFile } from '../config/load-config.js';
import type { ConfigFile, ConfigLoop } from '../config/schema.js';
import { GoaldError } from '../errors.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { newLoopRecord } from './loop-record.js';
import { createLoopScheduler, SCHEDULER_FIELDS, type DueOutcome, type LoopScheduler } from './loop-scheduler.js';
import { resolveLoopRef } from './resolve-goal.js';
import { parseSchedule } from './schedule.js';
import type { CreateLoopRequest, StartGoalRequest } from './types.js';

/** What the loop host needs from the goal host. */
export interface LoopGoalStarter {
  /** Starts a fresh goal for this loop run, or reports that the workspace is busy. Throws on bad config. */
  startLoopRun(loop: LoopRecord, run: LoopRunRequest): Promise<{ outcome: 'started'; goal: GoalRecord } | { outcome: 'waiting' }>;
  /** Validates a start request without storing anything (throws GoaldError). */
  validateStart(request: StartGoalRequest, run: Pick<LoopRunRequest, 'loopConfig'>): Promise<void>;
}

export interface LoopRunRequest {
  request: StartGoalRequest;
  /** A config-declared loop's own settings layer. */
  loopConfig?: { config: ConfigFile; source: string };
}

/** Stored in LoopRecord.options. */
interface CliLoopOptions {
  kind: 'cli';
  request: StartGoalRequest;
}
interface ConfigLoopOptions {
  kind: 'config';
  index: number;
}

function loopOptionsOf(loop: LoopRecord): CliLoopOptions | ConfigLoopOptions | null {
  const options = loop.options;
  if (!options || typeof options !== 'object' || Array.isArray(options)) return null;
  if (options.kind === 'cli' && options.request && typeof options.request === 'object') {
    return options as unknown as CliLoopOptions;
  }
  if (options.kind === 'config' && typeof options.index === 'number') return { kind: 'config', index: options.index };
  return null;
}

// Config loops get a stable id from what declares them, so re-reading the file keeps their history.
function configLoopId(workspace: string, loop: ConfigLoop, index: number): string {
  const digest = createHash('sha256').update(`${workspace}\0${index}\0${loop.every}\0${loop.goal ?? ''}`).digest('hex');
  return `c${digest.slice(0, 11)}`;
}

/**
 * The settings layer a config-declared loop adds to each of its runs (its own checks, agent, evaluator,
 * limits), as `config` declares it now; undefined for a CLI loop or a declaration that is gone.
 */
export function declaredLoopLayer(loop: LoopRecord, config: ConfigFile | null): LoopRunRequest['loopConfig'] {
  const options = loopOptionsOf(loop);
  const declared = options?.kind === 'config' ? config?.loops?.[options.index] : undefined;
  if (options?.kind !== 'config' || !declared) return undefined;
  return { config: loopLayer(declared), source: `${path.join(loop.workspace, CONFIG_FILE_NAME)} (loops[${options.index}])` };
}

/** The loops `config` declares in `workspace` whose schedule parses, each with its stable id; the others are logged. */
export function declaredLoopsOf(workspace: string, config: ConfigFile | null, log: (line: string) => void): Array<{ loop: ConfigLoop; index: number; id: string }> {
  const declared = (config?.loops ?? []).map((loop, index) => ({ loop, index, id: configLoopId(workspace, loop, index) }));
  return declared.filter(({ loop }) => {
    try {
      parseSchedule(loop.every);
      return true;
    } catch (error) {
      log(`${path.join(workspace, CONFIG_FILE_NAME)}: loops: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  });
}

/** A config-declared loop's next run, as its workspace's file declares it now (throws when it no longer does). */
export async function declaredLoopRun(loop: LoopRecord): Promise<LoopRunRequest & { loopConfig: NonNullable<LoopRunRequest['loopConfig']> }> {
  const configPath = path.join(loop.workspace, CONFIG_FILE_NAME);
  const { config } = await loadConfigFile(configPath);
  const loopConfig = declaredLoopLayer(loop, config);
  if (!loopConfig) throw new GoaldError('config', `${configPath} no longer declares loop ${loop.id}`);
  const request: StartGoalRequest = { dir: loop.workspace, flags: {}, env: {}, queue: false };
  if (loop.condition !== null) request.condition = loop.condition;
  return { request, loopConfig };
}

/** `goald loop stop` of a loop the workspace's file declares: it ends when the file no longer declares it. */
export function declaredLoopStopError(loop: LoopRecord): GoaldError {
  return new GoaldError('conflict', `loop ${loop.id} is declared in ${path.join(loop.workspace, CONFIG_FILE_NAME)}`, 'remove it from that file; the daemon picks the change up');
}

function loopLayer(loop: ConfigLoop): ConfigFile {
  const layer: ConfigFile = {};
  if (loop.checks) layer.checks = loop.checks;
  if (loop.agent) layer.agent = loop.agent;
  if (loop.evaluator) layer.evaluator = loop.evaluator;
  if (loop.limits) layer.limits = loop.limits;
  return layer;
}

export interface LoopHostOptions {
  store: Store;
  clock: Clock;
  goals: LoopGoalStarter;
  log: (line: string) => void;
}

export class LoopHost {
  private readonly store: Store;
  private readonly goals: LoopGoalStarter;
  private readonly log: (line: string) => void;
  private readonly scheduler: LoopScheduler;

  constructor(options: LoopHostOptions) {
    this.store = options.store;
    this.goals = options.goals;
    this.log = options.log;
    this.scheduler = createLoopScheduler({
      clock: options.clock,
      onDue: (loop) => this.runOnce(loop),
      onChange: (loop) => this.saveSchedulerFields(loop),
      onError: (loop, error) => this.log(`loop ${loop.id}: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  /** Arms every stored loop that is not stopped (missed runs catch up per the loop's policy). */
  async start(): Promise<void> {
    const { loops } = await this.store.read();
    for (const loop of loops.filter((candidate) => !candidate.stopped)) this.armSafely(loop);
    // A run that was waiting when the last daemon stopped is retried now (it waits again if the workspace is
    // still busy), not only at the loop's next slot, which may be a day away.
    for (const waiting of this.scheduler.waitingLoops()) {
      this.scheduler.fireNow(waiting.id).catch((error: unknown) => this.log(`loop ${waiting.id}: ${error instanceof Error ? error.message : String(error)}`));
    }
  }

  async stop(): Promise<void> {
    await this.scheduler.stopAll();
  }

  async list(): Promise<LoopRecord[]> {
    const { loops } = await this.store.read();
    return loops.map((loop) => ({ ...loop, ...this.schedulerView(loop.id) }));
  }

  /** `goald loop <every> [condition]`: validates everything, then stores and arms the loop. */
  async create(request: CreateLoopRequest): Promise<LoopRecord> {
    parseSchedule(request.every);
    const workspace = await resolveWorkspace(request.dir);
    const { every, catchUp, ...start } = request;
    await this.goals.validateStart(start, {});
    const now = new Date(Date.now()).toISOString();
    const loop = newLoopRecord({
      id: newLoopId(),
      workspace: workspace.root,
      every,
      condition: start.condition ?? null,
      options: toJson({ kind: 'cli', request: start }),
      source: 'cli',
      createdAt: now,
      catchUp: catchUp ?? 'once',
      name: null,
    });
    const armed = this.scheduler.arm(loop);
    await this.store.update((state) => {
      state.loops.push(armed);
    });
    this.log(`loop ${loop.id} every ${every} in ${loop.workspace}`);
    return armed;
  }

  /** `goald loop stop <loop>`: disarms it and keeps it (stopped) for history. */
  async remove(ref: string): Promise<LoopRecord> {
    const loop = await this.find(ref);
    if (loop.source === 'config') throw declaredLoopStopError(loop);
    // A run being started as the user stops the loop finishes starting first: nothing starts after this returns.
    await this.scheduler.disarm(loop.id);
    return this.markStopped(loop.id);
  }

  /** `goald loop run <loop>`: fires it now, off its cadence. */
  async fire(ref: string): Promise<{ loop: LoopRecord; outcome: DueOutcome }> {
    const loop = await this.find(ref);
    if (loop.stopped) throw new GoaldError('conflict', `loop ${loop.id} is stopped`, 'create a new one with goald loop');
    const outcome = await this.scheduler.fireNow(loop.id);
    return { loop: await this.find(loop.id), outcome };
  }

  /** A goal ended: record the loop's outcome and release waiting runs in that workspace. */
  async onGoalFinished(goal: GoalRecord): Promise<void> {
    if (goal.loopId !== null) {
      await this.store.update((state) => {
        const loop = state.loops.find((candidate) => candidate.id === goal.loopId);
        if (loop && loop.lastGoalId === goal.id) loop.lastOutcome = goal.status;
      });
    }
    for (const waiting of this.scheduler.waitingLoops(goal.workspace)) {
      void this.scheduler.fireNow(waiting.id);
    }
    // A worktree loop run waits for its loop's previous run, not for a workspace (worktree-loop-run.ts).
    if (goal.worktree !== undefined && goal.loopId !== null) {
      for (const waiting of this.scheduler.waitingLoops()) if (waiting.id === goal.loopId) void this.scheduler.fireNow(waiting.id);
    }
  }

  /** Re-reads a workspace's config-declared loops: adds new ones, stops removed ones, re-arms changed ones. */
  async syncConfigLoops(workspace: string, config: ConfigFile | null): Promise<void> {
    const valid = declaredLoopsOf(workspace, config, this.log);
    const ids = new Set(valid.map(({ id }) => id));
    const now = new Date().toISOString();
    const changed = await this.store.update((state) => {
      const touched: LoopRecord[] = [];
      for (const loop of state.loops) {
        if (loop.source === 'config' && loop.workspace === workspace && !ids.has(loop.id) && !loop.stopped) {
          loop.stopped = true;
          touched.push(loop);
        }
      }
      for (const { loop, index, id } of valid) {
        const existing = state.loops.find((candidate) => candidate.id === id);
        const condition = loop.goal ?? config?.goal ?? null;
        if (existing) {
          const unchanged =
            !existing.stopped && existing.condition === condition && existing.catchUp === (loop.catchUp ?? 'once') &&
            (existing.name ?? null) === (loop.name ?? null) && this.scheduler.get(id) !== undefined;
          if (unchanged) {
            existing.options = { kind: 'config', index };
            existing.configError = null;
            continue;
          }
          existing.stopped = false;
          existing.condition = condition;
          existing.catchUp = loop.catchUp ?? 'once';
          existing.options = { kind: 'config', index };
          existing.name = loop.name ?? null;
          existing.configError = null;
          touched.push(existing);
        } else {
          const record = newLoopRecord({
            id,
            workspace,
            every: loop.every,
            condition,
            options: { kind: 'config', index },
            source: 'config',
            createdAt: now,
            catchUp: loop.catchUp ?? 'once',
            name: loop.name ?? null,
          });
          state.loops.push(record);
          touched.push(record);
        }
      }
      return touched.map((loop) => ({ ...loop }));
    });
    for (const loop of changed) {
      if (loop.stopped) await this.scheduler.disarm(loop.id);
      // Re-armed with the scheduler's own fields: the stored copy may lag, and a stale past nextRunAt would
      // count as downtime and fire a catch-up run.
      else this.armSafely({ ...loop, ...this.schedulerView(loop.id) });
    }
  }

  /** Workspaces that have loops (the daemon watches their config). */
  async workspaces(): Promise<string[]> {
    const { loops } = await this.store.read();
    return [...new Set(loops.filter((loop) => !loop.stopped).map((loop) => loop.workspace))];
  }

  private schedulerView(loopId: string): Partial<LoopRecord> {
    const armed = this.scheduler.get(loopId);
    if (!armed) return {};
    return { nextRunAt: armed.nextRunAt, waiting: armed.waiting, runs: armed.runs, skipped: armed.skipped, lastRunAt: armed.lastRunAt };
  }

  private armSafely(loop: LoopRecord): void {
    try {
      this.scheduler.arm(loop);
    } catch (error) {
      this.log(`loop ${loop.id} not armed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async find(ref: string): Promise<LoopRecord> {
    const { loops } = await this.store.read();
    return resolveLoopRef(loops, ref);
  }

  private async markStopped(loopId: string): Promise<LoopRecord> {
    return this.store.update((state) => {
      const loop = state.loops.find((candidate) => candidate.id === loopId);
      if (!loop) throw new GoaldError('not-found', `no loop ${loopId}`);
      loop.stopped = true;
      loop.waiting = false;
      return { ...loop };
    });
  }

  private async saveSchedulerFields(update: LoopRecord): Promise<void> {
    await this.store.update((state) => {
      const loop = state.loops.find((candidate) => candidate.id === update.id);
      if (!loop) return;
      for (const field of SCHEDULER_FIELDS) {
        // Each scheduler field has the same type on both records.
        (loop as unknown as Record<string, unknown>)[field] = update[field];
      }
    });
  }

  private async runRequestFor(loop: LoopRecord): Promise<LoopRunRequest> {
    const options = loopOptionsOf(loop);
    if (options?.kind === 'cli') {
      const request = { ...options.request };
      if (loop.condition !== null) request.condition = loop.condition;
      return { request };
    }
    return declaredLoopRun(loop);
  }

  private async runOnce(loop: LoopRecord): Promise<DueOutcome> {
    let started: Awaited<ReturnType<LoopGoalStarter['startLoopRun']>>;
    try {
      started = await this.goals.startLoopRun(loop, await this.runRequestFor(loop));
    } catch (error) {
      // A run that cannot start (config broken, workspace gone) is skipped and shown on the loop.
      const message = error instanceof Error ? error.message : String(error);
      await this.store.update((state) => {
        const record = state.loops.find((candidate) => candidate.id === loop.id);
        if (record) record.configError = message;
      });
      throw error;
    }
    if (started.outcome === 'waiting') {
      this.log(`loop ${loop.id}: a goal is active in ${loop.workspace}; the run waits`);
      return 'waiting';
    }
    await this.store.update((state) => {
      const record = state.loops.find((candidate) => candidate.id === loop.id);
      if (record) {
        record.lastGoalId = started.goal.id;
        record.lastOutcome = 'active';
        record.configError = null;
      }
    });
    this.log(`loop ${loop.id}: started goal ${started.goal.id}`);
    return 'started';
  }
}
