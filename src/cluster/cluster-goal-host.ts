// The daemon's goal host in cluster mode (GOALD_REDIS_URL): the control plane. It offers the server the
// same GoalHost as the embedded daemon, so `start`, `status`, `pause`, `resume`, `stop` and `logs -f` work
// alike, but runs no turn itself: a start is validated here (in the user's workspace, with the daemon's
// keys) and put on the cluster (submit-goal.ts); `goald worker` processes on any machine run the turns;
// control goes through Redis (goal-control.ts), so it reaches a turn on whichever worker holds it. A
// reconciler pass at start and every half minute re-adds the job of any active goal that lost it. Loops
// are BullMQ job schedulers (cluster-loops.ts) whose ticks this daemon turns into goal starts. Over 400
// lines because, like goal-host.ts, it is the one place each socket route's goal action is written.

import path from 'node:path';

import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { PruneResult } from '../../state/prune-goals.js';
import { toJson } from '../../state/json.js';
import type { GoalEdit, GoalRecord, GoalRollback, LoopRecord } from '../../state/types.js';
import { applyEditFlags, requireSomeEdit } from '../config/apply-edit.js';
import { parseStoredSettings } from '../config/settings-schema.js';
import { refuseNextTurn } from '../breakers/index.js';
import type { GoalSettings } from '../config/types.js';
import { assertIndependentEvaluator, finishedError, notRaisedError } from '../daemon/goal-edit.js';
import type { LoopRunRequest } from '../daemon/loop-host.js';
import { filterGoals, isLiveGoal, resolveGoalRef, type GoalFilter } from '../daemon/resolve-goal.js';
import type {
  ClusterHealth,
  CreateLoopRequest,
  EditGoalRequest,
  EditGoalResponse,
  EventSubscription,
  GoalBranch,
  GoalHost,
  PruneRequest,
  StartGoalRequest,
  StartGoalResponse,
} from '../daemon/types.js';
import { finishedEventOf } from '../daemon/unstored-endings.js';
import { GoaldError, isGoaldError } from '../errors.js';
import type { RaceHost, StartRaceRequest } from '../race/race-host.js';
import type { RaceRecord } from '../race/race-record.js';
import { BUDGET_BREAKERS, diffSettings, isBudgetBreaker, raisesLimit } from '../supervisor/contract.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import { runGit } from '../workspace/git.js';
import { clusterGoalStateOf, type ClusterGoalEdit, type ClusterGoalState } from './cluster-goal-state.js';
import { ClusterLoops, loopOwnerOf } from './cluster-loops.js';
import { DeclaredLoopWatch } from './declared-loop-watch.js';
import { deleteAttemptRefs } from './goal-branch.js';
import type { ClusterSettings } from './cluster-settings.js';
import { pruneClusterGoals } from './prune-cluster-goals.js';
import {
  addClusterGoalEvent,
  followClusterGoalEvents,
  hideUrlCredentials,
  listClusterGoalRecords,
  readClusterGoalEvents,
} from './cluster-goals.js';
import { guideClusterGoal, pauseClusterGoal, resumeClusterGoal, stopClusterGoal } from './goal-control.js';
import { reconcileTurns, requeueTurn } from './reconciler.js';
import { submitClusterGoal } from './submit-goal.js';
import { editClusterGoal, readClusterGoal, reopenClusterGoal } from './turn-commit.js';
import { closeQueue } from './turn-queue.js';

const RECONCILE_EVERY_MS = 30_000;
// Attempt refs of ended goals left on the remotes are swept at start, then every tenth reconcile (5 min).
const SWEEP_EVERY_RECONCILES = 10;

export interface ClusterGoalHostOptions {
  redis: Redis;
  queue: Queue;
  /** The connections the host owns (closed by detachAll). */
  connections: readonly Redis[];
  /** A connection BullMQ may block on, for the loops' queues and this daemon's tick worker. */
  loopConnection: Redis;
  /** The Redis URL as it may be shown (password hidden). */
  shownUrl: string;
  /** The daemon's own environment: API keys. */
  env: NodeJS.ProcessEnv;
  /** Where the cluster is, its remote and its fleet-wide cap. */
  cluster: ClusterSettings;
  version: string;
  home: string;
  log: (line: string) => void;
  requestShutdown: () => void;
}

export class ClusterGoalHost implements GoalHost {
  private readonly startedAt = new Date().toISOString();
  private reconciling: NodeJS.Timeout | null = null;
  private goalsRunning = 0;
  private lastRead: { goals: GoalRecord[]; at: string } | null = null;
  private degraded = false;

  private readonly loops: ClusterLoops;
  private readonly declaredLoops: DeclaredLoopWatch;
  private raceHost: Promise<RaceHost> | null = null;

  constructor(private readonly options: ClusterGoalHostOptions) {
    this.loops = new ClusterLoops({
      redis: options.redis,
      connection: options.loopConnection,
      owner: loopOwnerOf(options.home),
      validateStart: async (request) => ({ workspace: (await this.prepare(request)).workspace.root }),
      startRun: (loop, run) => this.startLoopRun(loop, run),
      listGoals: () => this.readGoals(),
      log: options.log,
    });
    this.declaredLoops = new DeclaredLoopWatch({ sync: (workspace, config) => this.onCluster('sync the declared loops', () => this.loops.sync(workspace, config)), log: options.log });
  }

  /** Re-adds lost turn jobs now, then every half minute; takes this daemon's loop ticks. */
  async recover(): Promise<void> {
    await this.applyFleetCap();
    this.loops.start();
    // The files declaring this daemon's loops are read again (edited while it was down) and watched.
    for (const workspace of await this.loops.declaringWorkspaces().catch(() => [])) void this.declaredLoops.watch(workspace);
    void this.resumeRaces().catch((error: unknown) => this.options.log(`races not resumed: ${error instanceof Error ? error.message : String(error)}`));
    await this.reconcile();
    let reconciles = 0;
    void this.sweepAttemptRefs();
    this.reconciling = setInterval(() => {
      void this.reconcile();
      if ((reconciles += 1) % SWEEP_EVERY_RECONCILES === 0) void this.sweepAttemptRefs();
    }, RECONCILE_EVERY_MS);
    this.reconciling.unref();
  }

  private async sweepAttemptRefs(): Promise<void> {
    try {
      const { sweepAttemptRefs } = await import('./attempt-ref-sweep.js');
      const deleted = await sweepAttemptRefs({ redis: this.options.redis, mirrorsDir: this.mirrorsDir(), log: this.options.log });
      if (deleted > 0) this.options.log(`deleted ${deleted} attempt refs of ended goals from the cluster's remotes`);
    } catch (error) {
      this.options.log(`the attempt-ref sweep could not read the cluster: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // The control plane's own bare mirrors of the cluster's remotes (rollback, the attempt-ref sweep).
  private mirrorsDir(): string {
    return path.join(this.options.home, 'cluster-mirrors');
  }

  /** Lets go of the cluster (the goals go on on the workers). */
  async detachAll(): Promise<void> {
    if (this.reconciling !== null) clearInterval(this.reconciling);
    if (this.raceHost !== null) (await this.raceHost).close();
    await this.declaredLoops.close();
    await this.loops.close();
    await closeQueue(this.options.queue);
    for (const connection of this.options.connections) connection.disconnect();
  }

  async listGoals(filter: GoalFilter = {}): Promise<GoalRecord[]> {
    return filterGoals(await this.readGoals(), filter);
  }

  clusterHealth(): ClusterHealth {
    return { redis: this.options.shownUrl, degraded: this.degraded, lastReadAt: this.lastRead?.at ?? null };
  }

  // The cluster's goals; while Redis cannot be reached, the goals as last read (the cluster is degraded).
  private async readGoals(): Promise<GoalRecord[]> {
    try {
      const goals = await listClusterGoalRecords(this.options.redis);
      this.lastRead = { goals, at: new Date().toISOString() };
      this.degraded = false;
      this.goalsRunning = goals.filter(isLiveGoal).length;
      return goals;
    } catch (error) {
      if (isGoaldError(error)) throw error;
      this.degraded = true;
      if (this.lastRead !== null) return this.lastRead.goals;
      throw new GoaldError('cluster-unreachable', `cannot read the cluster's goals from Redis at ${this.options.shownUrl}`, 'start Redis there again; the daemon reconnects by itself');
    }
  }

  async getGoal(ref: string): Promise<GoalRecord> {
    return resolveGoalRef(await this.listGoals(), ref);
  }

  async startGoal(request: StartGoalRequest): Promise<StartGoalResponse> {
    const prepared = await this.prepare(request);
    const goal = await this.submit(prepared, {});
    // As on one machine: the loops the workspace's goal.config.json declares run from now on.
    void this.declaredLoops.watch(prepared.workspace.root);
    return { goal, queued: false, warnings: prepared.warnings };
  }

  // One run of a loop: a fresh goal from the loop's start request, validated again now (its config may have
  // changed); a declared loop's run adds that loop's own settings layer.
  private async startLoopRun(loop: LoopRecord, run: LoopRunRequest): Promise<GoalRecord> {
    const label = `loop ${loop.id} (every ${loop.every}), run ${loop.runs + 1}`;
    return this.submit(await this.prepare(run.request, { loop: label }, run.loopConfig), { loopId: loop.id });
  }

  // Validates a start request in its workspace; API keys come from the daemon's env, never the request.
  private async prepare(request: StartGoalRequest, ancestry?: { loop: string }, loopConfig?: LoopRunRequest['loopConfig']): Promise<PreparedGoal> {
    const { env } = this.options;
    const { prepareGoal } = await import('../supervisor/launch.js');
    const prepared = await prepareGoal({
      condition: request.condition,
      dir: request.dir,
      flags: request.flags,
      env: { ...env, ...request.env },
      trustedEnv: env,
      ...(ancestry ? { ancestry } : {}),
      ...(loopConfig ? { loopConfig } : {}),
    });
    if (prepared.settings.isolation?.mode === 'worktree') {
      throw new GoaldError('usage', '--worktree: a cluster goal already runs in worktrees of its own, on its branch goald/<id>', 'start it without --worktree');
    }
    return prepared;
  }

  private async submit(prepared: PreparedGoal, options: { loopId?: string }): Promise<GoalRecord> {
    const { newGoalRecord } = await import('../supervisor/launch.js');
    const remote = await this.remoteOf(prepared.workspace.root);
    const goal: GoalRecord = { ...newGoalRecord(prepared.settings, { kind: 'daemon', pid: process.pid }, options), owner: null };
    await submitClusterGoal({ redis: this.options.redis, queue: this.options.queue, goal, remote });
    this.options.log(`goal ${goal.id}: on the cluster (${prepared.workspace.root}, remote ${hideUrlCredentials(remote)})`);
    return goal;
  }

  /** `goald diff` / `goald apply`: the goal's branch, fetched from the cluster's remote into the repository at `dir`. */
  async goalBranch(ref: string, dir: string): Promise<{ goal: GoalRecord; branch: GoalBranch }> {
    const goal = await this.getGoal(ref);
    const { fetchGoalBranch } = await import('./fetch-goal-branch.js');
    return { goal, branch: await this.onCluster('read the goal', () => fetchGoalBranch(this.options.redis, goal, dir)) };
  }

  async pauseGoal(ref: string, now: boolean): Promise<GoalRecord> {
    const goal = await this.liveGoal(ref, 'pause');
    if (goal.status === 'paused') throw new GoaldError('conflict', `goal ${goal.id} is already paused`, `resume it with: goald resume ${goal.id}`);
    await pauseClusterGoal(this.options.redis, this.options.queue, goal.id, { now });
    return this.getGoal(goal.id);
  }

  async resumeGoal(ref: string): Promise<GoalRecord> {
    const goal = await this.liveGoal(ref, 'resume');
    if ((await readClusterGoal(this.options.redis, goal.id))?.status !== 'paused') {
      throw new GoaldError('conflict', `goal ${goal.id} is not paused (it is ${goal.status})`, 'only a paused goal can be resumed');
    }
    await resumeClusterGoal(this.options.redis, this.options.queue, goal.id);
    return this.getGoal(goal.id);
  }

  /** `goald edit`: the goal's contract (limits, checks, evaluator) from its next turn, on whichever worker runs it. */
  async editGoal(ref: string, request: EditGoalRequest): Promise<EditGoalResponse> {
    if (request.applyConfig) {
      throw new GoaldError('usage', '--apply-config: a cluster goal reads no goal.config.json once it runs', `pass the change as flags: goald edit ${ref} --max-turns <n> (or --check, --evaluator, ...)`);
    }
    const goal = await this.getGoal(ref);
    // As on one machine: a finished goal says how to reopen it, when it can be.
    if (!request.resume && !isLiveGoal(goal)) throw finishedError(goal, false);
    if (this.degraded) throw this.unreachable(`edit goal ${goal.id}`);
    const parsed = parseStoredSettings(goal.settings);
    if (!parsed.ok) throw new GoaldError('state-corrupt', `goal ${goal.id} has invalid stored settings (${parsed.problem})`);
    const before = parsed.settings;
    const { settings: after, used } = applyEditFlags(before, request.flags);
    if (!request.resume) requireSomeEdit(used, request);
    if (request.flags.evaluator !== undefined) {
      // Checked here with the daemon's keys, as a start is: the workers build it from the same settings.
      const { createGoalEvaluator } = await import('../supervisor/launch.js');
      await assertIndependentEvaluator(after, (await createGoalEvaluator(after.evaluator, this.options.env)).model);
    }
    const changes = diffSettings(before, after);
    const entry: GoalEdit = { at: new Date().toISOString(), by: 'goald edit', changes, resumed: request.resume };
    const edit: ClusterGoalEdit = { settings: toJson(after), edits: [...(goal.edits ?? []), entry] };
    if (request.resume) await this.reopen(goal, before, after, edit);
    else if (!(await this.onCluster('edit the goal', () => editClusterGoal(this.options.redis, goal.id, JSON.stringify(edit))))) {
      throw new GoaldError('conflict', `goal ${goal.id} ended before the edit`, 'start a new goal with goald start');
    }
    await addClusterGoalEvent(this.options.redis, goal.id, { type: 'goal.edited', id: goal.id, by: 'goald edit', settings: changes.map((change) => change.setting), resumed: request.resume });
    this.options.log(`goal ${goal.id}: edited by the owner (${changes.map((change) => change.setting).join(', ') || 'no change'})${request.resume ? '; reopened' : '; applies from the next turn'}`);
    return { goal: await this.getGoal(goal.id), changes, resumed: request.resume };
  }

  // `edit --resume`: a goal that failed on a budget breaker goes on after its last turn with the limit raised.
  private async reopen(goal: GoalRecord, before: GoalSettings, after: GoalSettings, edit: ClusterGoalEdit): Promise<void> {
    if (goal.status !== 'failed') {
      throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status}; --resume reopens only a goal that failed on a budget breaker`, isLiveGoal(goal) ? `drop --resume: goald edit ${goal.id} applies from its next turn` : 'start a new goal with goald start');
    }
    const breaker = goal.reason;
    if (!isBudgetBreaker(breaker)) throw finishedError(goal, false);
    if (!raisesLimit(breaker, before.limits, after.limits)) throw notRaisedError(goal, breaker, before);
    const stored = await readClusterGoal(this.options.redis, goal.id);
    if (stored === null) throw new GoaldError('not-found', `goal ${goal.id} is no longer on the cluster`, 'start a new goal with goald start');
    const state = clusterGoalStateOf(goal.id, stored);
    if (state.lastTurn !== null) {
      const refusal = refuseNextTurn(state.lastTurn.breakers, after.limits, goal.summary.activeMs);
      if (refusal !== null) {
        const flag = isBudgetBreaker(refusal.breaker) ? BUDGET_BREAKERS[refusal.breaker].flag : refusal.breaker;
        throw new GoaldError('usage', `goal ${goal.id} would stop again before its next turn: ${refusal.message}`, `raise ${flag} further`);
      }
    }
    const reopened: ClusterGoalState = {
      ...state,
      goal: { ...state.goal, status: 'active', phase: 'coolingDown', finishedAt: null, reason: null, reasonMessage: null, pauseReason: null, machine: null, owner: null, runningAgent: null },
      reopenedAfterTurn: state.lastTurn?.turn ?? 0,
    };
    const committed = await reopenClusterGoal(this.options.redis, goal.id, JSON.stringify(reopened), JSON.stringify(edit));
    if (committed === null) throw new GoaldError('conflict', `goal ${goal.id} changed while it was being reopened`, 'look at it with goald status, then try again');
    await requeueTurn(this.options.queue, { goalId: goal.id, epoch: stored.epoch, turn: committed + 1 });
  }

  /** `goald rollback`: a finished goal's branch moves back to turn `toTurn`'s commit; a paused goal's next turn starts there. */
  async rollbackGoal(ref: string, toTurn: number): Promise<{ goal: GoalRecord; rollback: GoalRollback }> {
    const goal = await this.getGoal(ref);
    if (goal.status === 'active') {
      throw new GoaldError('conflict', `goal ${goal.id} is active: its agent may be writing the files`, `pause it first: goald pause ${goal.id}, then goald rollback`);
    }
    if (this.degraded) throw this.unreachable(`roll back goal ${goal.id}`);
    const { rollbackClusterGoal } = await import('./rollback-cluster-goal.js');
    const rollback = await rollbackClusterGoal({ redis: this.options.redis, queue: this.options.queue, goal, toTurn, mirrorsDir: this.mirrorsDir(), now: new Date() });
    this.options.log(`goal ${goal.id}: goald/${goal.id} rolled back to turn ${toTurn} (${rollback.commit ?? '?'})`);
    return { goal: await this.getGoal(goal.id), rollback };
  }

  /** `goald say`: guidance for the goal's next turn, on whichever worker runs it. */
  async guideGoal(ref: string, text: string): Promise<{ goal: GoalRecord; pending: number }> {
    const goal = await this.liveGoal(ref, 'guide');
    return { goal, pending: await this.onCluster('guide the goal', () => guideClusterGoal(this.options.redis, goal.id, text)) };
  }

  async stopGoal(ref: string): Promise<GoalRecord> {
    const goal = await this.liveGoal(ref, 'stop');
    await stopClusterGoal(this.options.redis, this.options.queue, goal.id);
    const stopped = await this.getGoal(goal.id);
    // No worker commits anything of a stopped goal: its stream's end is told here.
    await addClusterGoalEvent(this.options.redis, goal.id, finishedEventOf(stopped));
    void this.dropAttemptRefs(goal.id, goal.workspace); // not awaited: the remote may be slow; stop is not
    return stopped;
  }

  // A stopped goal's attempt refs leave the remote (a goal that ends by itself has its last worker do it),
  // pushed from the workspace the goal was started from, as its base was. A turn cancelled while it was
  // pushing may still leave one behind.
  private async dropAttemptRefs(goalId: string, workspace: string): Promise<void> {
    try {
      const stored = await readClusterGoal(this.options.redis, goalId);
      if (stored === null) return;
      await deleteAttemptRefs(workspace, clusterGoalStateOf(goalId, stored).remote, goalId);
    } catch (error) {
      this.options.log(`goal ${goalId}: its attempt refs could not be deleted from the remote: ${hideUrlCredentials(error instanceof Error ? error.message : String(error))}`);
    }
  }

  async subscribe(ref: string): Promise<EventSubscription> {
    const goal = await this.getGoal(ref);
    const { events: past, lastId } = await readClusterGoalEvents(this.options.redis, goal.id);
    if (!isLiveGoal(goal) && !past.some((event) => event.type === 'goal.finished')) past.push(finishedEventOf(goal));
    return {
      past,
      finished: !isLiveGoal(goal) || past.some((event) => event.type === 'goal.finished'),
      // Its own connection, which waits out an outage (XREAD blocks on it); the outage is logged once already.
      follow: (listener) => {
        const connection = this.options.redis.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null });
        connection.on('error', () => undefined);
        return followClusterGoalEvents(connection, goal.id, lastId, listener);
      },
    };
  }

  /** `goald prune`: finished goals leave Redis by the rules they leave a home by; their branches stay. */
  async prune(request: PruneRequest): Promise<PruneResult> {
    const goals = await this.readGoals();
    // Deletion acts on the cluster as it is, never on goals as last read.
    if (this.degraded) throw this.unreachable('prune');
    const result = await this.onCluster('prune', async () => pruneClusterGoals(this.options.redis, { goals, loops: await this.loops.list() }, { ...request, now: Date.now() }));
    if (!request.dryRun && result.goals.length > 0) this.options.log(`pruned ${result.goals.length} finished goals from the cluster`);
    return result;
  }

  info(): { pid: number; version: string; startedAt: string; home: string; goalsRunning: number } {
    return { pid: process.pid, version: this.options.version, startedAt: this.startedAt, home: this.options.home, goalsRunning: this.goalsRunning };
  }

  async shutdown(): Promise<void> {
    this.options.requestShutdown();
    return Promise.resolve();
  }

  listLoops(): Promise<LoopRecord[]> {
    return this.onCluster('list loops', () => this.loops.list());
  }
  createLoop(request: CreateLoopRequest): Promise<LoopRecord> {
    return this.onCluster('create the loop', () => this.loops.create(request));
  }
  deleteLoop(ref: string): Promise<LoopRecord> {
    return this.onCluster('stop the loop', () => this.loops.remove(ref));
  }
  runLoop(ref: string): Promise<{ loop: LoopRecord; outcome: 'started' | 'waiting' | 'skipped' }> {
    return this.onCluster('run the loop', () => this.loops.fire(ref));
  }
  /** `goald loop sync`: the workspace's declared loops go on the cluster now, and its file is watched from now on. */
  async syncLoops(dir: string): Promise<LoopRecord[]> {
    const { resolveWorkspace } = await import('../workspace/find-workspace.js');
    const { root } = await resolveWorkspace(dir);
    // Read here, so an invalid file reaches the caller (nothing changes then).
    await this.declaredLoops.sync(root);
    void this.declaredLoops.watch(root);
    return (await this.listLoops()).filter((loop) => loop.workspace === root && loop.source === 'config' && !loop.stopped);
  }

  /**
   * `goald race` on the cluster: the same race host as on one machine, its members cluster goals (each on
   * its own branch, so no worktree), run and decided by this daemon, whose home keeps the race's record.
   */
  async startRace(request: StartRaceRequest): Promise<RaceRecord> {
    return (await this.races()).start(request);
  }

  async getRace(ref: string): Promise<RaceRecord> {
    const { storedRace } = await import('../race/race-record.js');
    return storedRace(this.options.home, ref);
  }

  private races(): Promise<RaceHost> {
    this.raceHost ??= import('../race/race-host.js').then(
      ({ RaceHost }) =>
        new RaceHost({
          home: this.options.home,
          goals: this,
          env: this.options.env,
          log: this.options.log,
          worktrees: false,
          patchOf: async (goal) => (await import('./fetch-goal-branch.js')).goalBranchPatch(this.options.redis, goal),
        }),
    );
    return this.raceHost;
  }

  // Races this daemon was running when it stopped go on (their members went on on the workers meanwhile).
  private async resumeRaces(): Promise<void> {
    const { readRaces } = await import('../race/race-record.js');
    if ((await readRaces(this.options.home)).some((race) => race.status === 'running')) await (await this.races()).resume();
  }

  // Acting on the cluster as it is, never on goals as last read: while Redis is away, control exits 3.
  private unreachable(what: string, why?: string): GoaldError {
    const state = why === undefined ? 'cannot be reached' : `did not answer (${why})`;
    return new GoaldError('cluster-unreachable', `cannot ${what}: Redis at ${this.options.shownUrl} ${state}`, 'try again once Redis is back; the daemon reconnects by itself');
  }

  // Work on Redis whose failure (Redis away) is told as the cluster being unreachable (exit 3), not as a bug.
  private async onCluster<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isGoaldError(error)) throw error;
      throw this.unreachable(what, hideUrlCredentials(error instanceof Error ? error.message : String(error)));
    }
  }

  private async liveGoal(ref: string, what: string): Promise<GoalRecord> {
    const goal = await this.getGoal(ref);
    // Control acts on the cluster as it is, never on goals as last read.
    if (this.degraded) throw this.unreachable(`${what} goal ${goal.id}`);
    if (!isLiveGoal(goal)) throw new GoaldError('conflict', `goal ${goal.id} already ${goal.status}`, `nothing to ${what}`);
    return goal;
  }

  // The remote every worker reaches: GOALD_CLUSTER_REMOTE or the user config's cluster.remote, else the workspace's `origin`.
  private async remoteOf(workspace: string): Promise<string> {
    const configured = this.options.cluster.remote;
    if (configured !== null) return configured;
    const origin = await runGit(['remote', 'get-url', 'origin'], { cwd: workspace, allowFailure: true });
    const url = origin.stdout.trim();
    if (origin.exitCode !== 0 || url === '') {
      throw new GoaldError('config', `${workspace} has no remote "origin", and GOALD_CLUSTER_REMOTE is not set: the workers have nowhere to fetch the goal from`, 'add one every worker reaches (git remote add origin URL), or set GOALD_CLUSTER_REMOTE in the daemon\'s environment (or cluster.remote in your user config)');
    }
    return url;
  }

  // The user config's cap on turns at once across the fleet, set on the queue every worker takes from.
  private async applyFleetCap(): Promise<void> {
    const { maxConcurrentTurns } = this.options.cluster;
    if (maxConcurrentTurns === undefined) return;
    if (maxConcurrentTurns === null) await this.options.queue.removeGlobalConcurrency();
    else await this.options.queue.setGlobalConcurrency(maxConcurrentTurns);
    this.options.log(maxConcurrentTurns === null ? 'cluster: no cap on turns at once across the fleet' : `cluster: at most ${maxConcurrentTurns} turns at once across the fleet`);
  }

  private async reconcile(): Promise<void> {
    try {
      const readded = await reconcileTurns(this.options.redis, this.options.queue);
      for (const goalId of readded) this.options.log(`goal ${goalId}: its next turn's job was missing and is added again`);
    } catch (error) {
      this.options.log(`the reconciler could not read the cluster: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
