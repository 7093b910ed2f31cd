// The daemon's goal host: the GoalHost API the routes call. It runs one supervisor per running goal, fans
// their events out to `logs -f` subscribers, and controls them; admission and the workspace queues, crash
// recovery and live configuration live beside it (workspace-queue.ts, goal-recovery.ts, live-config.ts).
// Over 400 lines because it is the one place each socket route's goal action is written (about twenty
// short methods: start, loop runs, pause, resume, stop, edit, prune, streams, detach); each concern that
// grew past a method moved beside it.

import { stopUnrecoveredHint } from '../../state/not-recovered.js';
import type { PruneResult } from '../../state/prune-goals.js';
import type { GoalRecord, GoalRollback, LoopRecord, Store } from '../../state/types.js';
import { systemClock, type Clock } from '../clock.js';
import type { GoalSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { createEventLogReader, followEventLog } from '../supervisor/event-log.js';
import { createEventLogObserver } from '../supervisor/event-log-writer.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import type { GoalSupervisor, RestoredGoal } from '../supervisor/supervisor.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { GoalEditor } from './goal-edit.js';
import { recoverGoals } from './goal-recovery.js';
import { LiveConfig } from './live-config.js';
import { createNotifier, type Notifier } from '../notify/notifier.js';
import { loadGoalRuntime } from './load-goal-runtime.js';
import type { LoopHost, LoopRunRequest } from './loop-host.js';
import { markGoalFailed, type GoalEnding, type HostFailureReason } from './mark-goal-failed.js';
import { filterGoals, goalFilterFor, isLiveGoal, matchesGoalFilter, resolveGoalRef, type GoalFilter } from './resolve-goal.js';
import type { StatusSnapshotWriter } from './status-snapshot-writer.js';
import { describeStorageFailure } from '../supervisor/storage-failure.js';
import { missingOwnCode } from '../own-code.js';
import { finishedEventOf, UnstoredEndings } from './unstored-endings.js';
import type { RaceHost } from '../race/race-host.js';
import type { RaceRecord } from '../race/race-record.js';
import type { CreateLoopRequest, EditGoalRequest, EditGoalResponse, EventSubscription, GoalBranch, GoalHost, PruneRequest, StartGoalRequest, StartGoalResponse, StartRaceRequest } from './types.js';
import { QUEUED_PHASE, WorkspaceQueue } from './workspace-queue.js';

type Listener = (event: ProgressEvent) => void;

interface RunningGoal {
  supervisor: GoalSupervisor;
  workspace: string;
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
  /** Kept current with the live goals, for `goald status` to read without a round trip (status-snapshot.ts). */
  statusSnapshot?: StatusSnapshotWriter;
}

export class DaemonGoalHost implements GoalHost {
  private readonly store: Store;
  private readonly env: NodeJS.ProcessEnv;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly options: GoalHostOptions;
  private readonly running = new Map<string, RunningGoal>();
  private readonly listeners = new Map<string, Set<Listener>>();
  // `watch` and the dashboard ask for a goal's past events on every refresh: only what was appended is read.
  private readonly readEventLog = createEventLogReader();
  private readonly startedAt = new Date();
  private readonly queue: WorkspaceQueue;
  private readonly config: LiveConfig;
  /** Endings announced while the store refused writes (disk full), shown until stored. */
  private readonly unstored = new UnstoredEndings();
  /** Live goals recover() left as they were stored, and why; `stop` ends them, other controls say why. */
  private readonly unrecoverable = new Map<string, string>();
  private readonly editor: GoalEditor;
  /** Tells the user when a goal ends or needs them (the user's config.json `notify`). */
  private readonly notifier: Notifier;
  /**
   * Settles once recover() has adopted the goals a previous daemon left; control requests wait for it, so
   * one that arrives while a goal is still being recovered finds it running rather than "not running here".
   */
  private readonly recovery: Promise<void>;
  private markRecovered: () => void = () => undefined;
  private shuttingDown = false;
  private loopHost: Promise<LoopHost> | null = null;
  private raceHost: Promise<RaceHost> | null = null;

  constructor(options: GoalHostOptions) {
    this.options = options;
    this.store = options.store;
    this.env = options.env;
    this.clock = options.clock ?? systemClock;
    this.log = options.log;
    this.recovery = new Promise((resolve) => {
      this.markRecovered = resolve;
    });
    const isClosing = (): boolean => this.shuttingDown;
    this.queue = new WorkspaceQueue({
      store: this.store,
      clock: this.clock,
      log: this.log,
      isRunning: (goalId) => this.running.has(goalId),
      isClosing,
      launch: (goal, prepared) => this.launch(goal, prepared),
      materialize: (goal) => this.materialize(goal),
    });
    this.config = new LiveConfig({
      store: this.store,
      env: this.env,
      log: this.log,
      loops: () => this.loops(),
      supervisorOf: (goalId) => this.running.get(goalId)?.supervisor,
      turnInFlight: (workspace) => this.turnInFlight(workspace),
      announce: (goalId, event) => this.announce(goalId, event),
      isClosing,
    });
    this.notifier = createNotifier({ store: this.store, env: this.env, log: this.log });
    const snapshot = options.statusSnapshot;
    // Each new version of state.json (this daemon's write, or another process's it read) is published with
    // the live goals the status route would send for it; while an ending waits outside the store, none is.
    if (snapshot !== undefined) {
      const liveFilter = goalFilterFor(undefined);
      this.store.watch(({ identity, state }) => {
        if (this.unstored.isEmpty()) snapshot.publish(identity, filterGoals(state.goals, liveFilter));
        else snapshot.withdraw();
      });
    }
    this.editor = new GoalEditor({
      store: this.store,
      env: this.env,
      log: this.log,
      config: this.config,
      controllable: (goal, action) => this.controllable(goal, action).supervisor,
      isRunning: (goalId) => this.running.has(goalId),
      materialize: (goal) => this.materialize(goal),
      launch: (goal, prepared, restored) => this.launch(goal, prepared, restored),
      announce: (goalId, event) => this.announce(goalId, event),
    });
  }

  /** The loop host, created (and its scheduler loaded) on first use. */
  private loops(): Promise<LoopHost> {
    this.loopHost ??= loadGoalRuntime().then(({ LoopHost }) => new LoopHost({ store: this.store, clock: this.clock, goals: this, log: this.log }));
    return this.loopHost;
  }

  /** The race host, created on first use (or when recovery finds a running race). */
  private races(): Promise<RaceHost> {
    this.raceHost ??= import('../race/race-host.js').then(({ RaceHost }) => new RaceHost({ home: this.store.home, goals: this, env: this.env, log: this.log }));
    return this.raceHost;
  }

  /** `goald race`: k worktree goals on one condition, one picked (src/race/). */
  async startRace(request: StartRaceRequest): Promise<RaceRecord> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    await this.afterRecovery();
    return (await this.races()).start(request);
  }

  async getRace(ref: string): Promise<RaceRecord> {
    const { storedRace } = await import('../race/race-record.js');
    return storedRace(this.store.home, ref);
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

  async listGoals(filter: GoalFilter = {}): Promise<GoalRecord[]> {
    return filterGoals(await this.readGoals((goal) => matchesGoalFilter(goal, filter)), filter);
  }

  async getGoal(ref: string): Promise<GoalRecord> {
    return resolveGoalRef(await this.readGoals((goal) => goal.id.startsWith(ref)), ref);
  }

  // The stored goals `keep` accepts, with any ending the store has not taken yet (stored first, when it now
  // can). Only those are copied out of the store: `goald status` (the live goals) beside a thousand finished
  // goals costs the daemon ~2 ms, not ~25 for a whole copy of the state. A goal whose ending is held back
  // shows as finished (apply), so it is taken too, for the caller to filter as it shows.
  private async readGoals(keep: (goal: Readonly<GoalRecord>) => boolean): Promise<GoalRecord[]> {
    await this.unstored.flush(this.store);
    const goals = await this.store.readGoals((goal) => this.unstored.has(goal.id) || keep(goal));
    return goals.map((goal) => this.unstored.apply(goal));
  }

  // One goal as readGoals shows it; undefined when it is not stored.
  private async readGoal(goalId: string): Promise<GoalRecord | undefined> {
    return (await this.readGoals((goal) => goal.id === goalId)).find((goal) => goal.id === goalId);
  }

  async startGoal(request: StartGoalRequest): Promise<StartGoalResponse> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    const inPlace = await this.prepare(request);
    await this.config.refuseWhileHeld(inPlace.workspace.root);
    // A worktree goal gets its own workspace (its worktree), so the workspace queue never holds it back.
    const { isolateInWorktree, abandonWorktree } = await import('../worktree/worktree-goal.js');
    const prepared = await isolateInWorktree(inPlace, this.store.home);
    const admitted = await this.queue.admit(prepared, request, { queue: request.queue, loopId: null }).catch(async (error: unknown) => {
      await abandonWorktree(prepared, this.store.home);
      throw error;
    });
    if (admitted.goal === null) throw new GoaldError('internal', 'the goal was neither started nor queued');
    return { goal: admitted.goal, queued: admitted.queued, warnings: prepared.warnings };
  }

  /** LoopGoalStarter: a fresh goal for a loop run, unless a goal is live in the workspace. */
  async startLoopRun(loop: LoopRecord, run: LoopRunRequest): Promise<{ outcome: 'started'; goal: GoalRecord } | { outcome: 'waiting' }> {
    if (this.shuttingDown) return { outcome: 'waiting' };
    await this.config.refuseWhileHeld(loop.workspace);
    const label = `loop ${loop.id}${loop.name ? ` "${loop.name}"` : ''} (every ${loop.every}), run ${loop.runs + 1}`;
    const prepared = await this.prepare(run.request, { ancestry: { loop: label }, loopConfig: run.loopConfig });
    if (prepared.settings.isolation?.mode === 'worktree') {
      const { startWorktreeLoopRun } = await import('./worktree-loop-run.js');
      return startWorktreeLoopRun({ store: this.store, queue: this.queue }, loop, run.request, prepared);
    }
    const admitted = await this.queue.admit(prepared, run.request, { queue: false, loopId: loop.id, waitIfBusy: true });
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
      const { prepareGoal } = await loadGoalRuntime();
      return await prepareGoal({
        condition: request.condition,
        dir: request.dir,
        flags: request.flags,
        env,
        trustedEnv: this.env,
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
    if (goal.status !== 'paused' && running.supervisor.status !== 'paused' && !running.supervisor.isPausePending) {
      throw new GoaldError('conflict', `goal ${goal.id} is not paused (it is ${goal.status})`, 'only a paused goal, or one with a pause pending, can be resumed');
    }
    await running.supervisor.resume();
    return this.getGoal(goal.id);
  }

  /** A worktree goal's branch is in its repository already; an in-place goal has none. */
  async goalBranch(ref: string): Promise<{ goal: GoalRecord; branch: GoalBranch }> {
    const goal = await this.getGoal(ref);
    const { worktreeOf } = await import('../worktree/apply-goal.js');
    const { repo, branch, base } = worktreeOf(goal, 'goald diff');
    return { goal, branch: { repo, branch, base } };
  }

  async rollbackGoal(ref: string, toTurn: number): Promise<{ goal: GoalRecord; rollback: GoalRollback }> {
    await this.afterRecovery();
    const goal = await this.getGoal(ref);
    let rollback: GoalRollback;
    if (!isLiveGoal(goal)) {
      // Loaded on use: the restore's git plumbing is no part of an idle daemon.
      const { rollbackFinishedGoal } = await import('../checkpoints/rollback-goal.js');
      rollback = await rollbackFinishedGoal(this.store, goal, toTurn);
    } else {
      const running = this.controllable(goal, 'roll back');
      if (goal.status !== 'paused') {
        throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status}: its agent may be writing the files`, `pause it first: goald pause ${goal.id}, then goald rollback`);
      }
      rollback = await running.supervisor.rollback(toTurn);
    }
    return { goal: await this.getGoal(goal.id), rollback };
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
    const problem = this.running.has(goal.id) ? undefined : this.unrecoverable.get(goal.id);
    if (problem !== undefined) {
      // Nothing of it runs: recorded as failed, its turns and transcripts kept.
      await this.markFailed(goal.id, 'stopped', `stopped by the user after the daemon could not recover it (${problem})`);
      this.unrecoverable.delete(goal.id);
      const stopped = await this.getGoal(goal.id);
      this.announce(goal.id, finishedEventOf(stopped));
      return stopped;
    }
    const running = this.controllable(goal, 'stop');
    running.supervisor.stop('stopped by the user');
    await running.done;
    return this.getGoal(goal.id);
  }

  async guideGoal(ref: string, text: string): Promise<{ goal: GoalRecord; pending: number }> {
    await this.afterRecovery();
    const goal = await this.getGoal(ref);
    if (!isLiveGoal(goal)) {
      const why = goal.status === 'failed' ? `failed (${goal.reason ?? 'unknown'})` : goal.status;
      throw new GoaldError('conflict', `goal ${goal.id} is ${why}: guidance reaches only a goal that still runs`, `start a new goal, or reopen a budget failure with goald edit ${goal.id} --resume`);
    }
    const pending = this.controllable(goal, 'guide').supervisor.addGuidance(text);
    return { goal, pending };
  }

  /** `goald edit <goal>`: the owner changes its contract from the next turn, or reopens a budget failure. */
  async editGoal(ref: string, request: EditGoalRequest): Promise<EditGoalResponse> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    await this.afterRecovery();
    return this.editor.edit(await this.getGoal(ref), request);
  }

  async subscribe(ref: string): Promise<EventSubscription> {
    const goal = await this.getGoal(ref);
    const goalDir = this.store.goalDir(goal.id);
    const logged = await this.readEventLog(goalDir);
    const past = supersededFinishesDropped(logged);
    // A goal that ended while its event log could not be written (disk full) still ends its stream.
    if (!isLiveGoal(goal) && !past.some((event) => event.type === 'goal.finished')) past.push(finishedEventOf(goal));
    const finished = !isLiveGoal(goal) || past.some((event) => event.type === 'goal.finished');
    return {
      past,
      finished,
      // A goal that ends while its log is read (a pre-check met at once) tells `goal.finished` before the
      // stream follows it: followEventLog hands the listener what the log holds beyond `logged` first.
      follow: (listener) =>
        followEventLog(goalDir, logged.length, listener, (added) => {
          const set = this.listeners.get(goal.id) ?? new Set<Listener>();
          set.add(added);
          this.listeners.set(goal.id, set);
          return () => {
            set.delete(added);
            if (set.size === 0) this.listeners.delete(goal.id);
          };
        }),
    };
  }

  async listLoops(): Promise<LoopRecord[]> {
    return (await this.loops()).list();
  }

  async createLoop(request: CreateLoopRequest): Promise<LoopRecord> {
    if (this.shuttingDown) throw new GoaldError('conflict', 'the daemon is shutting down', 'try again in a moment');
    const loop = await (await this.loops()).create(request);
    void this.config.watch(loop.workspace);
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
    const { resolveWorkspace } = await loadGoalRuntime();
    const { root } = await resolveWorkspace(dir);
    void this.config.watch(root);
    // Read again in config order, so an invalid file reaches the caller (nothing changes then).
    await this.config.resync(root);
    return (await (await this.loops()).list()).filter((loop) => loop.workspace === root && loop.source === 'config' && !loop.stopped);
  }

  async shutdown(): Promise<void> {
    this.options.requestShutdown();
  }

  /** Deletes finished goals beyond the limits; never one a supervisor here still holds. */
  async prune(request: PruneRequest): Promise<PruneResult> {
    await this.afterRecovery();
    const { pruneGoalsAndWorktrees } = await import('../worktree/prune-worktrees.js');
    const result = await pruneGoalsAndWorktrees(this.store, { ...request, now: this.clock.now(), isBusy: (goalId) => this.running.has(goalId) });
    if (!result.dryRun && (result.worktrees.length > 0 || result.branches.length > 0)) {
      this.log(`pruned ${result.worktrees.length} worktree(s), ${result.branches.length} goald branch(es)`);
    }
    if (!result.dryRun && result.goals.length > 0) {
      this.log(`pruned ${result.goals.length} finished goal(s), ${result.bytes} bytes`);
      await this.unstored.flush(this.store); // space freed: endings the disk refused may fit now
    }
    return result;
  }

  /** Lets go of every running goal (agents killed, goals stay active for the next daemon). */
  async detachAll(): Promise<void> {
    this.shuttingDown = true;
    await this.afterRecovery(); // it launches nothing more once shutting down, but may be mid-write
    if (this.loopHost) await (await this.loopHost).stop();
    if (this.raceHost) (await this.raceHost).close();
    await this.config.close();
    const pending = [...this.running.values()];
    for (const goal of pending) goal.supervisor.detach();
    await Promise.all(pending.map((goal) => goal.done));
    await this.notifier.idle(); // each channel is cut after NOTIFY_TIMEOUT_MS
  }

  /**
   * Adopts goals a previous daemon left active: kills leftover agents, records interrupted turns, resumes.
   * Called once by the daemon after its socket is up; control requests (pause, resume, stop) wait for it.
   */
  async recover(): Promise<void> {
    try {
      const { goals } = await this.store.read();
      const unrecoverable = await recoverGoals(goals, {
        store: this.store,
        clock: this.clock,
        log: this.log,
        materialize: (goal) => this.materialize(goal),
        launch: (goal, prepared, restored) => this.launch(goal, prepared, restored),
      });
      for (const { goalId, problem } of unrecoverable) this.unrecoverable.set(goalId, problem);
      const { readRaces } = await import('../race/race-record.js');
      if ((await readRaces(this.store.home)).some((race) => race.status === 'running')) void (await this.races()).resume();
      const workspaces = new Set(goals.filter((goal) => goal.phase === QUEUED_PHASE).map((goal) => goal.workspace));
      for (const workspace of workspaces) await this.queue.startNext(workspace);
      // An idle daemon without loops never loads the scheduler (or the rest of the goal machinery).
      if ((await this.store.read()).loops.some((loop) => !loop.stopped)) {
        const loops = await this.loops();
        await loops.start();
        for (const workspace of await loops.workspaces()) void this.config.watch(workspace);
      }
    } finally {
      this.markRecovered();
    }
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
    const problem = this.unrecoverable.get(goal.id);
    if (problem !== undefined) {
      throw new GoaldError('conflict', `goal ${goal.id} could not be recovered when the daemon started: ${problem}`, stopUnrecoveredHint(goal.id));
    }
    throw new GoaldError('conflict', `goal ${goal.id} is not running in this daemon`, 'restart the daemon to recover it');
  }

  // The turn running in the workspace now (one live goal per workspace, but every running goal is asked).
  private turnInFlight(workspace: string): { goalId: string; turn: number } | null {
    for (const [goalId, running] of this.running) {
      const turn = running.workspace === workspace ? running.supervisor.turnInFlight : null;
      if (turn !== null) return { goalId, turn };
    }
    return null;
  }

  // An event from outside a supervisor (config held, goal edited): into the goal's event log, then to followers.
  private announce(goalId: string, event: ProgressEvent): void {
    try {
      createEventLogObserver(this.store.goalDir(goalId)).onEvent?.(event);
    } catch (error) {
      this.log(`goal ${goalId}: could not record ${event.type}: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.emit(goalId, event);
  }

  private emit(goalId: string, event: ProgressEvent): void {
    this.notifier.notify(goalId, event);
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
    const { buildSupervisor } = await loadGoalRuntime();
    const supervisor = await buildSupervisor({
      store: this.store,
      goal,
      prepared,
      owner: 'daemon',
      clock: this.clock,
      ...(restored ? { restored } : {}),
      observers: [createEventLogObserver(this.store.goalDir(goal.id)), { onEvent: (event) => this.emit(goal.id, event) }],
      onTurnDelta: (turn, files) => this.config.onTurnDelta(goal.id, goal.workspace, turn, files),
    });
    // The workspace's goal.config.json as the goal starts is the config in force and the sealed contract:
    // both are read before its agent can run, or an edit made early in turn 1, before the watcher was
    // ready, would be taken for the config in force and never held.
    await this.config.watch(goal.workspace);
    if (!restored) await this.config.seal(goal.id, goal.workspace).catch((error: unknown) => this.log(`goal ${goal.id}: contract not sealed: ${String(error)}`));
    if (this.shuttingDown) return; // the goal stays active in the store; the next daemon runs it
    this.log(`goal ${goal.id} running in ${goal.workspace}`);
    const done = supervisor.run().then(
      (outcome) => {
        if (!outcome) return;
        this.log(`goal ${goal.id} ${outcome.status}${outcome.failure ? ` (${outcome.failure.reason}: ${outcome.failure.message})` : ''}`);
        if (outcome.unstored !== undefined) {
          this.log(`goal ${goal.id}: its end could not be stored yet (${outcome.unstored}); it is stored once the disk takes writes`);
          const ending = { status: outcome.status, reason: outcome.failure?.reason ?? null, message: outcome.failure?.message ?? null };
          this.holdEnding(goal.id, ending, new Date(this.clock.now()));
        }
      },
      async (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        const missing = missingOwnCode(error);
        if (missing !== null) {
          // Not the goal's failure: it stays active, as do the others, for the daemon the next goald command
          // starts from the new code, which resumes them (its turn interrupted, as after a crash).
          this.log(`goal ${goal.id}: goald was reinstalled or rebuilt under this daemon (${missing}); stopping, its goals kept active for the next daemon`);
          this.shuttingDown = true; // nothing more starts here
          this.options.requestShutdown();
          return;
        }
        this.log(`goal ${goal.id} crashed: ${message}`);
        const storage = describeStorageFailure(error);
        await this.endWithoutSupervisor(goal.id, storage ? 'storage' : 'stopped', storage ?? `goald hit an internal error: ${message}`);
      },
    );
    const entry: RunningGoal = {
      supervisor,
      workspace: goal.workspace,
      done: done.finally(async () => {
        this.running.delete(goal.id);
        if (this.shuttingDown) return;
        try {
          await this.queue.startNext(goal.workspace);
          const finished = await this.readGoal(goal.id);
          if (finished && !isLiveGoal(finished) && this.loopHost) await (await this.loopHost).onGoalFinished(finished);
        } catch (error) {
          // e.g. a disk still full: the next goal or loop run waits for the next occasion, the daemon goes on
          this.log(`after goal ${goal.id}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }),
    };
    this.running.set(goal.id, entry);
  }

  // Rebuilds a goal's collaborators from its stored settings (after a restart, or for a queued goal).
  private async materialize(goal: GoalRecord): Promise<PreparedGoal> {
    const { parseStoredSettings, resolveWorkspace, createAgent, createGoalEvaluator } = await loadGoalRuntime();
    const parsed = parseStoredSettings(goal.settings);
    if (!parsed.ok) throw new GoaldError('state-corrupt', `goal ${goal.id} has invalid stored settings (${parsed.problem})`);
    const settings = parsed.settings;
    const workspace = await resolveWorkspace(settings.workspace);
    return {
      settings,
      workspace,
      agent: await createAgent(settings.agent, this.env),
      evaluator: await createGoalEvaluator(settings.evaluator, this.env),
      warnings: [],
    };
  }

  private async finishQueuedAsStopped(goalId: string): Promise<void> {
    this.queue.drop(goalId);
    await this.markFailed(goalId, 'stopped', 'stopped by the user while queued');
    this.announce(goalId, { type: 'goal.finished', id: goalId, status: 'failed', reason: 'stopped', breaker: null, turns: 0, tokens: 0 });
  }

  // An ending the store refused, shown from memory until stored: the status snapshot (which would show the
  // goal still live) is withdrawn meanwhile.
  private holdEnding(goalId: string, ending: GoalEnding, at: Date): void {
    this.unstored.add(goalId, ending, at);
    this.options.statusSnapshot?.withdraw();
  }

  // A goal whose supervisor could not end it (it crashed): stored as failed when the store takes it (else
  // shown so until it does), and `goal.finished` announced, so nobody waits for an end that never comes.
  private async endWithoutSupervisor(goalId: string, reason: HostFailureReason, message: string): Promise<void> {
    const now = new Date(this.clock.now());
    try {
      await markGoalFailed(this.store, goalId, reason, message, now);
    } catch (error) {
      this.log(`goal ${goalId}: its end could not be stored yet (${error instanceof Error ? error.message : String(error)})`);
      this.holdEnding(goalId, { status: 'failed', reason, message }, now);
    }
    let goal: GoalRecord | undefined;
    try {
      goal = await this.readGoal(goalId);
    } catch (error) {
      this.log(`goal ${goalId}: could not read its record (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    if (goal !== undefined && !isLiveGoal(goal)) this.announce(goalId, finishedEventOf(goal));
  }

  private markFailed(goalId: string, reason: HostFailureReason, message: string): Promise<void> {
    return markGoalFailed(this.store, goalId, reason, message, new Date(this.clock.now()));
  }
}

/**
 * A reopened goal's log holds the `goal.finished` of its first run before the `goal.edited` that reopened
 * it: a follower must not stop there, so finishes followed by a reopening are left out of the stream.
 */
function supersededFinishesDropped(events: ProgressEvent[]): ProgressEvent[] {
  const lastReopen = events.findLastIndex((event) => event.type === 'goal.edited' && event.resumed);
  return events.filter((event, index) => event.type !== 'goal.finished' || index > lastReopen);
}
