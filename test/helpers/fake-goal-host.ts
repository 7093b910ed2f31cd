// An in-memory GoalHost for control-plane tests: real behaviour, simply kept (goals and loops in maps,
// events in arrays, live listeners in sets), plus hooks to push events, count listeners and inject
// failures. A test double of goald's own interface, not a module mock.

import { isAbsolute } from 'node:path';

import { newLoopRecord } from '../../src/daemon/loop-record.js';
import { filterGoals, type GoalFilter } from '../../src/daemon/resolve-goal.js';
import { GoaldError } from '../../src/errors.js';
import { createEmptySummary } from '../../state/state-schema.js';
import type {
  CreateLoopRequest,
  EditGoalRequest,
  EditGoalResponse,
  EventSubscription,
  GoalBranch,
  GoalHost,
  PruneRequest,
  StartGoalRequest,
  StartGoalResponse,
} from '../../src/daemon/types.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';
import type { PruneResult } from '../../state/prune-goals.js';
import type { GoalRecord, GoalRollback, LoopRecord } from '../../state/types.js';
import { waitUntil } from './wait.js';
import type { RaceRecord } from '../../src/race/race-record.js';

type HostMethod = Exclude<keyof GoalHost, 'info'>;

const CREATED_AT = '2026-01-01T00:00:00.000Z';

export class FakeGoalHost implements GoalHost {
  readonly goals = new Map<string, GoalRecord>();
  readonly loops = new Map<string, LoopRecord>();
  readonly events = new Map<string, ProgressEvent[]>();
  /** Every validated request the host received, in order (what crossed the socket). */
  readonly startRequests: StartGoalRequest[] = [];
  readonly loopRequests: CreateLoopRequest[] = [];
  readonly syncRequests: string[] = [];
  readonly pruneRequests: PruneRequest[] = [];
  readonly editRequests: EditGoalRequest[] = [];
  shutdownCalls = 0;

  private readonly listeners = new Map<string, Set<(event: ProgressEvent) => void>>();
  private readonly failures = new Map<HostMethod, unknown>();
  private readonly gates = new Map<HostMethod, { gate: Promise<void>; arrived: () => void }>();
  private nextId = 1;

  /** Makes every later call of `method` throw `error` (a GoaldError for 4xx, anything else for 500). */
  failWith(method: HostMethod, error: unknown): void {
    this.failures.set(method, error);
  }

  /**
   * Holds every later call of `method` until `gate` resolves (races with disconnecting clients). The
   * returned promise resolves when the first call arrives at the gate.
   */
  holdUntil(method: HostMethod, gate: Promise<void>): Promise<void> {
    return new Promise((arrived) => {
      this.gates.set(method, { gate, arrived });
    });
  }

  /** Adds a goal directly (no request), e.g. to build ambiguous prefixes. */
  addGoal(overrides: Partial<GoalRecord> & { id: string }): GoalRecord {
    const goal = makeGoal(overrides);
    this.goals.set(goal.id, goal);
    this.events.set(goal.id, this.events.get(goal.id) ?? []);
    return goal;
  }

  /** Records an event for a goal and delivers it to live listeners. */
  emit(event: ProgressEvent): void {
    const past = this.events.get(event.id) ?? [];
    past.push(event);
    this.events.set(event.id, past);
    for (const listener of [...(this.listeners.get(event.id) ?? [])]) listener(event);
  }

  /** Ends a goal: status, then a goal.finished event. */
  finish(goalId: string, status: 'achieved' | 'failed'): void {
    const goal = this.mustGet(goalId);
    this.goals.set(goalId, { ...goal, status, phase: status, finishedAt: CREATED_AT });
    this.emit({ type: 'goal.finished', id: goalId, status, reason: status === 'failed' ? 'stopped' : null, breaker: null, turns: 1, tokens: 10 });
  }

  /** Live listeners currently attached to a goal's events. */
  listenerCount(goalId: string): number {
    return this.listeners.get(goalId)?.size ?? 0;
  }

  /** Waits until a goal has exactly `count` live listeners; fails the test after `timeoutMs`. */
  async whenListenerCount(goalId: string, count: number, timeoutMs = 10_000): Promise<void> {
    await waitUntil(`goal ${goalId} to have ${count} live event listener(s)`, () => this.listenerCount(goalId) === count, timeoutMs);
  }

  /** Waits until shutdown() has been called; fails the test after `timeoutMs`. */
  async whenShutdown(timeoutMs = 10_000): Promise<void> {
    await waitUntil('the host to be asked to shut down', () => this.shutdownCalls > 0, timeoutMs);
  }

  /** Everything a request could change, as JSON, to assert that bad requests changed nothing. */
  snapshot(): string {
    return JSON.stringify({
      goals: [...this.goals.values()],
      loops: [...this.loops.values()],
      events: [...this.events.entries()],
      startRequests: this.startRequests,
      loopRequests: this.loopRequests,
      shutdownCalls: this.shutdownCalls,
    });
  }

  info(): ReturnType<GoalHost['info']> {
    const goalsRunning = [...this.goals.values()].filter((goal) => goal.status === 'active').length;
    return { pid: process.pid, version: '0.0.0-test', startedAt: CREATED_AT, home: '/tmp/goald-test-home', goalsRunning };
  }

  async listGoals(filter: GoalFilter = {}): Promise<GoalRecord[]> {
    await this.enter('listGoals');
    return filterGoals([...this.goals.values()], filter);
  }

  async getGoal(idOrPrefix: string): Promise<GoalRecord> {
    await this.enter('getGoal');
    return this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
  }

  async startGoal(request: StartGoalRequest): Promise<StartGoalResponse> {
    await this.enter('startGoal');
    if (!isAbsolute(request.dir)) throw new GoaldError('bad-request', `dir ${request.dir} is not absolute`);
    const busy = [...this.goals.values()].some((goal) => goal.workspace === request.dir && goal.status === 'active');
    if (busy && !request.queue) {
      throw new GoaldError('conflict', `a goal is already active in ${request.dir}`, 'wait for it, or drop --no-queue');
    }
    this.startRequests.push(request);
    const id = this.newId('g');
    const goal = this.addGoal({
      id,
      condition: request.condition ?? 'from config',
      workspace: request.dir,
      phase: busy ? 'queued' : 'running',
    });
    if (!busy) this.emit({ type: 'goal.started', id, condition: goal.condition, workspace: goal.workspace, maxTurns: 20 });
    return { goal, queued: busy, warnings: busy ? ['queued behind the active goal'] : [] };
  }

  async pauseGoal(idOrPrefix: string, now: boolean): Promise<GoalRecord> {
    await this.enter('pauseGoal');
    const goal = this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
    if (goal.status !== 'active') throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status}, not active`);
    const paused: GoalRecord = { ...goal, status: 'paused', phase: now ? 'suspended' : 'pausing', pauseReason: 'requested' };
    this.goals.set(goal.id, paused);
    this.emit({ type: 'goal.paused', id: goal.id, reason: 'requested' });
    return paused;
  }

  async resumeGoal(idOrPrefix: string): Promise<GoalRecord> {
    await this.enter('resumeGoal');
    const goal = this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
    if (goal.status !== 'paused') throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status}, not paused`);
    const resumed: GoalRecord = { ...goal, status: 'active', phase: 'running', pauseReason: null };
    this.goals.set(goal.id, resumed);
    this.emit({ type: 'goal.resumed', id: goal.id });
    return resumed;
  }

  /** A goal's branch, as a worktree goal's would be: `goald/<id>` from the `base` commit, in `dir`. */
  async goalBranch(idOrPrefix: string, dir: string): Promise<{ goal: GoalRecord; branch: GoalBranch }> {
    await this.enter('goalBranch');
    const goal = this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
    return { goal, branch: { repo: dir, branch: `goald/${goal.id}`, base: 'base' } };
  }

  async rollbackGoal(idOrPrefix: string): Promise<{ goal: GoalRecord; rollback: GoalRollback }> {
    await this.enter('rollbackGoal');
    const goal = this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
    throw new GoaldError('conflict', `goal ${goal.id} has no files to roll back here`);
  }

  async stopGoal(idOrPrefix: string): Promise<GoalRecord> {
    await this.enter('stopGoal');
    const id = this.resolve(idOrPrefix, this.goals, 'goal');
    this.finish(id, 'failed');
    return { ...this.mustGet(id), reason: 'stopped' };
  }

  /** Guidance each goal received (`goald say`), in order. */
  readonly guidance = new Map<string, string[]>();

  async guideGoal(idOrPrefix: string, text: string): Promise<{ goal: GoalRecord; pending: number }> {
    await this.enter('guideGoal');
    const goal = this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
    if (goal.status !== 'active' && goal.status !== 'paused') throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status}`);
    const said = [...(this.guidance.get(goal.id) ?? []), text];
    this.guidance.set(goal.id, said);
    return { goal, pending: said.length };
  }

  async editGoal(idOrPrefix: string, request: EditGoalRequest): Promise<EditGoalResponse> {
    await this.enter('editGoal');
    const goal = this.mustGet(this.resolve(idOrPrefix, this.goals, 'goal'));
    this.editRequests.push(request);
    const settings = Object.keys(request.flags);
    this.emit({ type: 'goal.edited', id: goal.id, by: 'goald edit', settings, resumed: request.resume });
    return { goal, changes: settings.map((setting) => ({ setting, from: null, to: null })), resumed: request.resume };
  }

  async subscribe(idOrPrefix: string): Promise<EventSubscription> {
    await this.enter('subscribe');
    const id = this.resolve(idOrPrefix, this.goals, 'goal');
    const goal = this.mustGet(id);
    return {
      past: [...(this.events.get(id) ?? [])],
      finished: goal.status === 'achieved' || goal.status === 'failed',
      follow: (listener) => {
        const set = this.listeners.get(id) ?? new Set();
        set.add(listener);
        this.listeners.set(id, set);
        return () => {
          set.delete(listener);
        };
      },
    };
  }

  async listLoops(): Promise<LoopRecord[]> {
    await this.enter('listLoops');
    return [...this.loops.values()];
  }

  async createLoop(request: CreateLoopRequest): Promise<LoopRecord> {
    await this.enter('createLoop');
    this.loopRequests.push(request);
    const loop = newLoopRecord({
      id: this.newId('l'),
      workspace: request.dir,
      every: request.every,
      condition: request.condition ?? null,
      options: { ...request.flags },
      source: 'cli',
      createdAt: CREATED_AT,
      catchUp: request.catchUp ?? 'once',
      name: null,
    });
    this.loops.set(loop.id, loop);
    return loop;
  }

  async deleteLoop(idOrPrefix: string): Promise<LoopRecord> {
    await this.enter('deleteLoop');
    const id = this.resolve(idOrPrefix, this.loops, 'loop');
    const loop = this.loops.get(id);
    if (loop === undefined) throw new GoaldError('not-found', `no loop ${id}`);
    this.loops.delete(id);
    return { ...loop, stopped: true };
  }

  async runLoop(idOrPrefix: string): Promise<{ loop: LoopRecord; outcome: 'started' | 'waiting' | 'skipped' }> {
    await this.enter('runLoop');
    const id = this.resolve(idOrPrefix, this.loops, 'loop');
    const loop = this.loops.get(id);
    if (loop === undefined) throw new GoaldError('not-found', `no loop ${id}`);
    return { loop: { ...loop }, outcome: 'started' };
  }

  async syncLoops(dir: string): Promise<LoopRecord[]> {
    await this.enter('syncLoops');
    this.syncRequests.push(dir);
    return [...this.loops.values()].filter((loop) => loop.source === 'config' && loop.workspace === dir);
  }

  // Prunes every finished goal but the `keep` last added (age is the real host's business).
  async prune(request: PruneRequest): Promise<PruneResult> {
    await this.enter('prune');
    this.pruneRequests.push(request);
    const finished = [...this.goals.values()].filter((goal) => goal.status === 'achieved' || goal.status === 'failed');
    const pruned = finished.slice(0, Math.max(0, finished.length - request.keep));
    if (!request.dryRun) for (const goal of pruned) this.goals.delete(goal.id);
    const goals = pruned.map((goal) => ({ id: goal.id, status: goal.status === 'achieved' ? ('achieved' as const) : ('failed' as const), condition: goal.condition, finishedAt: goal.finishedAt, bytes: 0 }));
    return { dryRun: request.dryRun, goals, bytes: 0, kept: finished.length - pruned.length };
  }

  // Races are the real host's business (test/e2e/races.test.ts): this host knows none.
  async startRace(): Promise<RaceRecord> {
    throw new GoaldError('bad-request', 'the fake goal host runs no races');
  }

  async getRace(ref: string): Promise<RaceRecord> {
    throw new GoaldError('not-found', `no race ${ref}`);
  }

  async shutdown(): Promise<void> {
    await this.enter('shutdown');
    this.shutdownCalls += 1;
  }

  private async enter(method: HostMethod): Promise<void> {
    const held = this.gates.get(method);
    if (held !== undefined) {
      held.arrived();
      await held.gate;
    }
    if (this.failures.has(method)) throw this.failures.get(method);
  }

  private newId(prefix: string): string {
    const id = `${prefix}${String(this.nextId).padStart(11, '0')}`;
    this.nextId += 1;
    return id;
  }

  private resolve<T>(idOrPrefix: string, records: Map<string, T>, kind: string): string {
    if (records.has(idOrPrefix)) return idOrPrefix;
    const matches = [...records.keys()].filter((id) => id.startsWith(idOrPrefix));
    if (matches.length === 0) throw new GoaldError('not-found', `no ${kind} matches ${idOrPrefix}`, `list them with \`goald status\``);
    if (matches.length > 1) {
      throw new GoaldError('ambiguous', `${idOrPrefix} matches ${matches.length} ${kind}s`, 'use more characters of the id');
    }
    return matches[0] ?? idOrPrefix;
  }

  private mustGet(id: string): GoalRecord {
    const goal = this.goals.get(id);
    if (goal === undefined) throw new GoaldError('not-found', `no goal ${id}`);
    return goal;
  }
}

/** A goal record with test defaults (an active goal in /tmp/ws), `overrides` over them. */
export function makeGoal(overrides: Partial<GoalRecord> & { id: string }): GoalRecord {
  return {
    condition: 'all tests pass',
    workspace: '/tmp/ws',
    status: 'active',
    phase: 'running',
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    startedAt: CREATED_AT,
    finishedAt: null,
    reason: null,
    reasonMessage: null,
    pauseReason: null,
    loopId: null,
    settings: {},
    machine: null,
    summary: createEmptySummary(),
    owner: { kind: 'daemon', pid: process.pid },
    runningAgent: null,
    ...overrides,
  };
}
