// The goal's machine and everything around it that is not the turn pipeline: control (pause, resume,
// stop, detach), waiting (cool-down, pause, usage-limit reset), active time, progress events, the summary
// and the goal's stored record. The supervisor drives the pipeline through it.

import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import { BREAKER_NAMES, goalMachine, phaseOf, statusOf, type GoalFailure, type GoalStatus } from '../../machines/goal.machine.js';
import { toJson } from '../../state/json.js';
import type { GoalRecord, GoalSummary, Json, Store, StoreUpdateOptions } from '../../state/types.js';
import type { AgentAdapter } from '../agents/types.js';
import type { BreakerName } from '../breakers/types.js';
import type { Clock } from '../clock.js';
import { ActiveClock } from './active-clock.js';
import { recordGoalProgress } from './goal-progress.js';
import { summarizeTurn, type SummaryUpdate } from './goal-summary.js';
import { describeStorageFailure } from './storage-failure.js';
import type { ProgressEvent, SupervisorObserver } from './types.js';
import { Wakeup } from './wakeup.js';
import { redactJson } from '../secrets/redact.js';
import { restoreGoalMachine } from './stored-machine.js';

type GoalActor = Actor<typeof goalMachine>;
type GoalSnapshot = SnapshotFrom<typeof goalMachine>;
type GoalEvent = Parameters<GoalActor['send']>[0];

/** How a goal ended. */
export interface GoalOutcome {
  id: string;
  status: 'achieved' | 'failed';
  failure: GoalFailure | null;
  /** The breaker that ended the goal, when one did. */
  breaker: BreakerName | null;
  turns: number;
  tokens: number;
  elapsedMs: number;
  /** Why the final state could not be stored (disk full): the store still holds an earlier state. */
  unstored?: string;
}

export interface GoalSessionOptions {
  goal: GoalRecord;
  blockedLimit: number;
  /** The persisted machine snapshot of a restored goal. */
  machine: Json | null;
  store: Store;
  clock: Clock;
  observers: SupervisorObserver[];
  /** The agent, for SIGSTOP / SIGCONT of its group (`pause --now`). */
  agent: Pick<AgentAdapter, 'suspend' | 'resume'>;
}

function isBreakerName(reason: string): reason is BreakerName {
  return (BREAKER_NAMES as readonly string[]).includes(reason);
}

export class GoalSession {
  readonly id: string;
  readonly activeClock: ActiveClock;
  /** Aborted by stop() or detach(): kills the agent group, abandons checks and evaluator calls. */
  readonly abortSignal: AbortSignal;
  /** The agent of the turn in flight, as every write of the goal records it (for crash recovery). */
  runningAgent: GoalRecord['runningAgent'] = null;
  private readonly options: GoalSessionOptions;
  private readonly actor: GoalActor;
  private readonly wakeup = new Wakeup();
  private readonly stopController = new AbortController();
  /** Aborted by detach() (daemon shutdown): the goal stays active for the next daemon. */
  private readonly detachController = new AbortController();
  private summaryNow: GoalSummary;
  private readonly startedAt: number;
  private agentSuspended = false;
  /** The turn log's latest append (followTurnLog): every write of the goal's record is renamed into place after it. */
  private turnLogAppend: Promise<unknown> = Promise.resolve();

  constructor(options: GoalSessionOptions) {
    const { goal, clock } = options;
    this.options = options;
    this.id = goal.id;
    const input = { goalId: goal.id, blockedLimit: options.blockedLimit };
    this.actor =
      options.machine === null
        ? createActor(goalMachine, { input })
        : createActor(goalMachine, { input, snapshot: restoreGoalMachine(goal.id, options.machine) });
    this.abortSignal = AbortSignal.any([this.stopController.signal, this.detachController.signal]);
    this.summaryNow = goal.summary;
    this.startedAt = clock.now() - goal.summary.activeMs;
    this.activeClock = new ActiveClock(clock, goal.summary.activeMs);
  }

  get snapshot(): GoalSnapshot {
    return this.actor.getSnapshot();
  }

  get status(): GoalStatus {
    return statusOf(this.actor.getSnapshot().value);
  }

  get phase(): string {
    return phaseOf(this.actor.getSnapshot().value);
  }

  get summary(): GoalSummary {
    return this.summaryNow;
  }

  /**
   * True for a goal just registered (active, preparing, no machine snapshot yet) and not yet written by
   * this session: its stored record already says what a write now would, up to `updatedAt`.
   */
  isStoredAsRegistered(): boolean {
    const { goal, machine } = this.options;
    return machine === null && goal.machine === null && goal.status === 'active' && goal.phase === 'preparing' && this.phase === 'preparing';
  }

  /** True once the machine reached a final state. */
  isDone(): boolean {
    return this.actor.getSnapshot().status === 'done';
  }

  /** detach() let go of the goal (daemon shutdown). */
  isDetached(): boolean {
    return this.detachController.signal.aborted;
  }

  /** The goal ended (stop, failure) or was let go (detach) while a step ran. */
  isInterrupted(): boolean {
    return this.isDone() || this.isDetached();
  }

  start(): void {
    this.actor.start();
  }

  send(event: GoalEvent): void {
    this.actor.send(event);
  }

  now(): number {
    return this.options.clock.now();
  }

  /** Tells every observer (secrets redacted: events reach files and sockets); a throwing observer never disturbs the goal. */
  emit(event: ProgressEvent): void {
    const safe = redactJson(event);
    for (const observer of this.options.observers) {
      try {
        observer.onEvent?.(safe);
      } catch {
        // An observer's failure (a closed stream) never disturbs the goal.
      }
    }
  }

  /** Adds one turn's figures to the summary (stored with the next persist()). */
  addToSummary(update: Omit<SummaryUpdate, 'activeMs'>): void {
    this.summaryNow = summarizeTurn(this.summaryNow, { ...update, activeMs: this.activeClock.activeMs() });
  }

  // ---- control --------------------------------------------------------------------------------------

  /** Pauses at the next turn boundary, or now (SIGSTOP); resolves once the new state is stored. */
  pause(now: boolean): Promise<void> {
    const before = this.actor.getSnapshot();
    if (before.status === 'done' || statusOf(before.value) === 'paused') return Promise.resolve();
    this.actor.send({ type: 'goal.pause', now });
    let stored = Promise.resolve();
    if (this.status === 'paused') {
      if (now && phaseOf(before.value) === 'running') {
        this.options.agent.suspend?.();
        this.agentSuspended = true;
      }
      stored = this.onPaused();
    } else if (this.isPausePending) {
      // Stored at once: `goald status` shows it pending, and a daemon that dies before the boundary still
      // takes it (the restored machine pauses on reaching the boundary).
      stored = this.persist();
    }
    this.wakeup.wake();
    return stored;
  }

  /** A pause was asked for and is not taken yet (it will be at the end of the turn). */
  get isPausePending(): boolean {
    return this.status === 'active' && this.actor.getSnapshot().context.pausePending;
  }

  /**
   * Resumes a paused goal (SIGCONT when it was paused mid-turn), or cancels a pause still pending; resolves
   * once the new state is stored.
   */
  resume(): Promise<void> {
    if (this.isPausePending) {
      this.actor.send({ type: 'goal.resume', at: this.now() });
      return this.persist();
    }
    if (this.status !== 'paused') return Promise.resolve();
    this.actor.send({ type: 'goal.resume', at: this.now() });
    const stored = this.onResumed();
    this.wakeup.wake();
    return stored;
  }

  /** Lets go of the goal without ending it (daemon shutdown): kills the agent, keeps the goal active. */
  detach(): void {
    this.continueSuspendedAgent();
    this.detachController.abort(new Error('daemon shutting down'));
    this.wakeup.wake();
  }

  /** Stops the goal: kills the agent's group and records `failed` / `stopped`. */
  stop(message?: string): void {
    if (this.isDone()) return;
    this.actor.send(message ? { type: 'goal.stop', message } : { type: 'goal.stop' });
    this.continueSuspendedAgent(); // a stopped group cannot handle SIGTERM
    this.stopController.abort(new Error('goal stopped'));
    this.wakeup.wake();
  }

  /** The turn's agent exited: nothing is suspended any more. */
  agentExited(): void {
    this.agentSuspended = false;
  }

  /** The machine entered `paused` from the pipeline (usage limit, drift, a pending pause): count and store it. */
  // Stored before announced: whoever acts on the event (the dashboard, `watch`, a notification, a script
  // running `goald status`) reads the record the event speaks of.
  async onPaused(): Promise<void> {
    this.activeClock.pause();
    const reason = this.actor.getSnapshot().context.pauseReason ?? 'requested';
    await this.persist();
    this.emit({ type: 'goal.paused', id: this.id, reason });
  }

  private async onResumed(): Promise<void> {
    this.activeClock.resume();
    if (this.phase === 'running') this.continueSuspendedAgent();
    await this.persist();
    this.emit({ type: 'goal.resumed', id: this.id });
  }

  private continueSuspendedAgent(): void {
    if (this.agentSuspended) this.options.agent.resume?.();
    this.agentSuspended = false;
  }

  // ---- waiting --------------------------------------------------------------------------------------

  /** Waits while paused: until a control call, or until a usage-limit reset resumes the goal by itself. */
  async waitWhilePaused(): Promise<void> {
    const { resumeAt } = this.actor.getSnapshot().context;
    if (resumeAt === null) {
      await this.wakeup.next();
      return;
    }
    const fired = await this.sleepUnlessWoken(Math.max(0, resumeAt - this.now()));
    if (fired && this.status === 'paused') {
      this.actor.send({ type: 'timer.fired', timer: 'usage-reset', at: this.now() });
      await this.onResumed();
    }
  }

  /** Sleeps `ms` unless a control call wakes the loop first; true when the time ran out. */
  async sleepUnlessWoken(ms: number): Promise<boolean> {
    const woken = this.wakeup.next().then(() => false);
    const timer = new AbortController();
    const fired = this.options.clock.sleep(ms, timer.signal).then(
      () => true,
      () => false,
    );
    const result = await Promise.race([woken, fired]);
    timer.abort();
    return result;
  }

  // ---- storing and ending ---------------------------------------------------------------------------

  /**
   * Writes the goal's record (status, phase, machine snapshot, summary, running agent) under the store lock;
   * `{ durable: false }` for a write only a crash of this process needs to see (StoreUpdateOptions).
   */
  async persist(options: StoreUpdateOptions = {}): Promise<void> {
    const snapshot = this.actor.getSnapshot();
    this.summaryNow = { ...this.summaryNow, activeMs: this.activeClock.activeMs() };
    const after = options.after === undefined ? this.turnLogAppend : Promise.all([options.after, this.turnLogAppend]);
    after.catch(() => undefined); // awaited by the write, which may fail before it does
    await recordGoalProgress(this.options.store, this.id, {
      value: snapshot.value,
      done: snapshot.status === 'done',
      failure: snapshot.context.failure,
      pauseReason: snapshot.context.pauseReason,
      machine: toJson(this.actor.getPersistedSnapshot()),
      summary: this.summaryNow,
      runningAgent: this.runningAgent,
      startedAt: this.startedAt,
      now: this.now(),
    }, { ...options, after });
  }

  /**
   * A turn record is going into turns.jsonl: from now on every write of the goal's record (whoever makes it:
   * the turn's own, a pause, the next agent's spawn record) replaces state.json only once that append has
   * settled, so state.json never says a turn ended that turns.jsonl does not hold. A failed append fails
   * only the write given it as `after` (the one recording that turn); the others go on.
   */
  followTurnLog(append: Promise<unknown>): void {
    this.turnLogAppend = append.catch(() => undefined);
  }

  /**
   * Ends the goal as `failed` / `storage` when `error` is a failed write of goald's files (disk full,
   * read-only, I/O error); false for any other error, which the caller rethrows. Nothing already written is
   * touched: state.json is replaced atomically or not at all, and the turn log is append-only.
   */
  failOnStorageError(error: unknown): boolean {
    const message = describeStorageFailure(error);
    if (message === null) return false;
    this.runningAgent = null;
    if (!this.isDone()) this.actor.send({ type: 'goal.fail', failure: { reason: 'storage', message } });
    return true;
  }

  /** Lets go after detach(): stores the state for the next daemon and stops the machine. */
  async release(): Promise<void> {
    await this.persist();
    this.actor.stop();
  }

  /**
   * Stores the final state, announces `goal.finished` and returns the outcome. A final state the store cannot
   * take (disk still full) is no reason to keep anyone waiting: the event goes out and the outcome says so.
   */
  async finish(): Promise<GoalOutcome> {
    let unstored: string | null = null;
    try {
      await this.persist();
    } catch (error) {
      unstored = describeStorageFailure(error);
      if (unstored === null) throw error;
    }
    const snapshot = this.actor.getSnapshot();
    const status = statusOf(snapshot.value) === 'achieved' ? 'achieved' : 'failed';
    const failure = status === 'failed' ? snapshot.context.failure : null;
    const breaker = failure && isBreakerName(failure.reason) ? failure.reason : null;
    const { turns, tokens } = this.summaryNow;
    this.emit({ type: 'goal.finished', id: this.id, status, reason: failure?.reason ?? null, breaker, turns, tokens });
    this.actor.stop();
    const outcome: GoalOutcome = { id: this.id, status, failure, breaker, turns, tokens, elapsedMs: this.now() - this.startedAt };
    if (unstored !== null) outcome.unstored = unstored;
    return outcome;
  }
}
