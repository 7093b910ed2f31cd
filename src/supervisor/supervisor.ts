// Drives one goal: performs the side effects of each turn (agent, snapshot, checks, evaluator), feeds
// the results to the pure goal machine as events, and persists every turn before acting on it.

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import {
  BREAKER_NAMES,
  goalMachine,
  phaseOf,
  statusOf,
  type GoalFailure,
  type GoalStatus,
} from '../../machines/goal.machine.js';
import { appendTurnRecord } from '../../state/turn-log.js';
import type { GoalRecord, GoalSummary, Json, Store } from '../../state/types.js';
import { readProcessStartTime } from '../agents/process-identity.js';
import type { AgentAdapter, ToolCall, TurnResult } from '../agents/types.js';
import {
  findTrip,
  initialBreakerState,
  nearBreakerWarnings,
  nextBreakerState,
  refuseNextTurn,
} from '../breakers/index.js';
import type { BreakerName, BreakerState, TurnFacts } from '../breakers/types.js';
import type { Clock } from '../clock.js';
import type { GoalSettings } from '../config/types.js';
import type { EvaluationResult, Evaluator, Verdict } from '../evaluator/types.js';
import { buildTurnPrompt } from '../prompt/build-prompt.js';
import {
  DRIFT_WINDOW,
  driftWarning,
  INITIAL_DRIFT_STATE,
  nextDriftState,
  scoreDrift,
  type DriftState,
} from '../prompt/drift.js';
import { checksSignature } from '../workspace/checks.js';
import type { CheckResult, CheckRunner, FileChange, Snapshotter, TurnDelta } from '../workspace/types.js';
import { Wakeup } from './wakeup.js';
import type { CheckBrief, ProgressEvent, SupervisorObserver, TurnRecord } from './types.js';

const PATCH_FOR_EVALUATOR_MAX_CHARS = 12_000; // half the default evaluator budget; the evaluator cuts further
// When a usage limit gives no reset time, try again after this long (limits commonly reset hourly or better).
const USAGE_LIMIT_DEFAULT_WAIT_MS = 15 * 60_000;
const DRIFT_PAUSE_FILE = 'drift-pause'; // written by `goald hook post-tool-use` (src/hook/post-tool-use.ts)

export interface SupervisorDeps {
  store: Store;
  clock: Clock;
  agent: AgentAdapter;
  evaluator: Evaluator;
  snapshotter: Snapshotter;
  checks: CheckRunner;
  observers: SupervisorObserver[];
  /** Who runs this goal (recorded as the goal's owner). */
  owner: 'daemon' | 'foreground';
}

/** Where a restarted goal picks up (from the store's record and the last turn record). */
export interface RestoredGoal {
  machine: Json;
  lastTurn: TurnRecord | null;
  initialTree: string | null;
}

export interface GoalOutcome {
  id: string;
  status: 'achieved' | 'failed';
  failure: GoalFailure | null;
  /** The breaker that ended the goal, when one did. */
  breaker: BreakerName | null;
  turns: number;
  tokens: number;
  elapsedMs: number;
}

type GoalActor = Actor<typeof goalMachine>;
type GoalSnapshot = SnapshotFrom<typeof goalMachine>;

function briefChecks(checks: CheckResult[]): CheckBrief[] {
  return checks.map((check) => ({ name: check.name, passed: check.passed }));
}

// No model can overrule a failing check; with no evaluator (`none`), passing checks alone decide.
function isGoalMet(checks: CheckResult[], evaluation: EvaluationResult, provider: Evaluator['provider']): boolean {
  if (!checks.every((check) => check.passed)) return false;
  if (provider === 'none') return checks.length > 0;
  return evaluation.kind === 'verdict' && evaluation.verdict.achieved;
}

// The agent's time limit this turn: the turn timeout, or less when the wall-clock budget ends sooner (0 = none).
function turnTimeoutMs(limits: GoalSettings['limits'], activeMs: number): number {
  const candidates = [limits.turnTimeoutMs];
  if (limits.wallClockMs !== null) candidates.push(Math.max(1, limits.wallClockMs - activeMs));
  const positive = candidates.filter((ms) => ms > 0);
  return positive.length === 0 ? 0 : Math.min(...positive);
}

function evaluationTokens(result: EvaluationResult): number {
  return result.kind === 'skipped' ? 0 : result.usage.inputTokens + result.usage.outputTokens;
}

/** The agent part of a turn record. */
function agentRecordOf(
  result: TurnResult,
  override: { outcome?: 'interrupted'; error?: string } = {},
): NonNullable<TurnRecord['agent']> {
  return {
    outcome: override.outcome ?? result.outcome,
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs: result.durationMs,
    usage: result.usage,
    ...(result.costComputed === true ? { costComputed: true } : {}),
    finalMessage: result.finalMessage,
    error: override.error ?? result.error ?? null,
  };
}

function asJson(value: unknown): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

export class GoalSupervisor {
  readonly id: string;
  private settings: GoalSettings;
  private readonly deps: SupervisorDeps;
  /** A live config edit, applied at the next turn boundary (edits never restart a running turn). */
  private pendingSettings: { settings: GoalSettings; checks: CheckRunner; evaluator: Evaluator } | null = null;
  private readonly actor: GoalActor;
  private readonly wakeup = new Wakeup();
  /** Aborted by stop(): kills the agent group, abandons checks and evaluator calls. */
  private readonly stopController = new AbortController();
  /** Aborted by detach() (daemon shutdown): the same, but the goal stays active for the next daemon. */
  private readonly detachController = new AbortController();
  private readonly abortSignal = AbortSignal.any([this.stopController.signal, this.detachController.signal]);

  private breakers: BreakerState | null = null;
  private initialTree: string | null;
  private currentTree: string | null;
  private lastVerdict: Verdict | null;
  private lastChecks: CheckResult[] | null;
  private summary: GoalSummary;
  private readonly startedAt: number;
  /** Start of the current un-paused stretch; paused time is excluded from active time. */
  private activeSince: number;
  private activeMsBeforeStretch = 0;
  private pausedAt: number | null = null;
  private agentSuspended = false;
  private lastBoundaryActiveMs = 0;
  /** The agent of the turn in flight, as every write of the goal records it (for crash recovery). */
  private runningAgent: GoalRecord['runningAgent'] = null;
  /** The write that recorded the agent's spawn; the turn waits for it before going on. */
  private spawnRecorded: Promise<void> = Promise.resolve();
  /** Drift between turns, from the adapters' parsed tool calls (the in-turn hook keeps its own). */
  private driftState: DriftState = INITIAL_DRIFT_STATE;
  private recentToolCalls: ToolCall[] = [];
  private driftWarningLine: string | null = null;

  constructor(goal: GoalRecord, settings: GoalSettings, deps: SupervisorDeps, restored?: RestoredGoal) {
    this.id = goal.id;
    this.settings = settings;
    this.deps = deps;
    const input = { goalId: goal.id, blockedLimit: settings.limits.blockedVerdicts };
    this.actor = restored
      ? createActor(goalMachine, { input, snapshot: restored.machine as unknown as GoalSnapshot })
      : createActor(goalMachine, { input });
    const last = restored?.lastTurn ?? null;
    this.breakers = last?.breakers ?? null;
    this.initialTree = restored?.initialTree ?? null;
    this.currentTree = last?.tree ?? null;
    this.lastVerdict = last?.evaluation.kind === 'verdict' ? last.evaluation.verdict : null;
    this.lastChecks = last?.checks ?? null;
    this.summary = goal.summary;
    this.startedAt = deps.clock.now() - goal.summary.activeMs;
    this.activeMsBeforeStretch = goal.summary.activeMs;
    this.activeSince = deps.clock.now();
    this.lastBoundaryActiveMs = goal.summary.activeMs;
  }

  /** The current top-level status. */
  get status(): GoalStatus {
    return statusOf(this.actor.getSnapshot().value);
  }

  /** The current phase (`running`, `checking`, `paused`, ...). */
  get phase(): string {
    return phaseOf(this.actor.getSnapshot().value);
  }

  /**
   * Runs the goal until it is achieved or failed, and resolves with the outcome; or with null when
   * detach() let go of it (daemon shutdown). Rejects only on bugs and environment failures.
   */
  async run(): Promise<GoalOutcome | null> {
    this.actor.start();
    const restoredPhase = this.actor.getSnapshot();
    if (statusOf(restoredPhase.value) === 'paused' && restoredPhase.context.resumeTo === 'running') {
      // Restored after a crash while paused mid-turn: that agent is gone, so resume must start a new turn.
      this.actor.send({ type: 'daemon.recovered', at: this.deps.clock.now() });
    }
    if (this.actor.getSnapshot().status !== 'done' && this.phase === 'preparing') {
      this.emit({
        type: 'goal.started',
        id: this.id,
        condition: this.settings.condition,
        workspace: this.settings.workspace,
        maxTurns: this.settings.limits.maxTurns,
      });
    }
    await this.persist();
    while (this.actor.getSnapshot().status !== 'done') {
      if (this.detachController.signal.aborted) {
        await this.persist();
        this.actor.stop();
        return null;
      }
      const value = this.actor.getSnapshot().value;
      if (statusOf(value) === 'paused') {
        await this.waitWhilePaused();
        continue;
      }
      const phase = phaseOf(value);
      if (phase === 'preparing') await this.precheck();
      else if (phase === 'coolingDown') await this.coolDownThenTurn();
      else {
        // running/checking/evaluating with no turn in flight: a restored snapshot. Treat as interrupted.
        this.actor.send({ type: 'daemon.recovered', at: this.deps.clock.now() });
      }
    }
    return this.finish();
  }

  /**
   * Pauses at the next turn boundary, or now (SIGSTOP to the agent's group). Resolves once the new state
   * is stored, so a caller that reads the goal back sees it paused.
   */
  pause(now: boolean): Promise<void> {
    const before = this.actor.getSnapshot();
    if (before.status === 'done' || statusOf(before.value) === 'paused') return Promise.resolve();
    this.actor.send({ type: 'goal.pause', now });
    const after = this.actor.getSnapshot();
    let stored = Promise.resolve();
    if (statusOf(after.value) === 'paused') {
      if (now && phaseOf(before.value) === 'running') {
        this.deps.agent.suspend?.();
        this.agentSuspended = true;
      }
      stored = this.onPaused();
    }
    this.wakeup.wake();
    return stored;
  }

  /** Resumes a paused goal (SIGCONT when it was paused mid-turn); resolves once the new state is stored. */
  resume(): Promise<void> {
    if (statusOf(this.actor.getSnapshot().value) !== 'paused') return Promise.resolve();
    this.actor.send({ type: 'goal.resume', at: this.deps.clock.now() });
    const stored = this.onResumed();
    this.wakeup.wake();
    return stored;
  }

  /** Takes new settings (limits, checks, evaluator, noise paths) from the next turn on. */
  applySettings(settings: GoalSettings, parts: { checks: CheckRunner; evaluator: Evaluator }): void {
    this.pendingSettings = { settings, ...parts };
  }

  private takePendingSettings(): void {
    if (this.pendingSettings === null) return;
    const { settings, checks, evaluator } = this.pendingSettings;
    this.pendingSettings = null;
    this.settings = settings;
    this.deps.checks = checks;
    this.deps.evaluator = evaluator;
  }

  /** Lets go of the goal without ending it (daemon shutdown): kills the agent, keeps the goal active. */
  detach(): void {
    if (this.agentSuspended) this.deps.agent.resume?.();
    this.agentSuspended = false;
    this.detachController.abort(new Error('daemon shutting down'));
    this.wakeup.wake();
  }

  /** Stops the goal: kills the agent's group and records `failed` / `stopped`. */
  stop(message?: string): void {
    if (this.actor.getSnapshot().status === 'done') return;
    this.actor.send(message ? { type: 'goal.stop', message } : { type: 'goal.stop' });
    if (this.agentSuspended) this.deps.agent.resume?.(); // a stopped group cannot handle SIGTERM
    this.agentSuspended = false;
    this.stopController.abort(new Error('goal stopped'));
    this.wakeup.wake();
  }

  private emit(event: ProgressEvent): void {
    for (const observer of this.deps.observers) {
      try {
        observer.onEvent?.(event);
      } catch {
        // An observer's failure (a closed stream) never disturbs the goal.
      }
    }
  }

  private activeMs(): number {
    if (this.pausedAt !== null) return this.activeMsBeforeStretch;
    return this.activeMsBeforeStretch + (this.deps.clock.now() - this.activeSince);
  }

  private onPaused(): Promise<void> {
    if (this.pausedAt === null) {
      this.activeMsBeforeStretch = this.activeMs();
      this.pausedAt = this.deps.clock.now();
    }
    const reason = this.actor.getSnapshot().context.pauseReason ?? 'requested';
    this.emit({ type: 'goal.paused', id: this.id, reason });
    return this.persist();
  }

  private onResumed(): Promise<void> {
    if (this.pausedAt !== null) {
      this.pausedAt = null;
      this.activeSince = this.deps.clock.now();
    }
    if (this.agentSuspended && this.phase === 'running') {
      this.deps.agent.resume?.();
      this.agentSuspended = false;
    }
    this.emit({ type: 'goal.resumed', id: this.id });
    return this.persist();
  }

  private async waitWhilePaused(): Promise<void> {
    const resumeAt = this.actor.getSnapshot().context.resumeAt;
    const wait = this.wakeup.next();
    if (resumeAt !== null) {
      const delay = Math.max(0, resumeAt - this.deps.clock.now());
      const timer = new AbortController();
      const fired = this.deps.clock.sleep(delay, timer.signal).then(
        () => true,
        () => false,
      );
      const woke = await Promise.race([wait.then(() => false), fired]);
      timer.abort();
      if (woke && statusOf(this.actor.getSnapshot().value) === 'paused') {
        this.actor.send({ type: 'timer.fired', timer: 'usage-reset', at: this.deps.clock.now() });
        await this.onResumed();
      }
      return;
    }
    await wait;
  }

  // Turn 0: snapshot and checks before any agent token is spent.
  private async precheck(): Promise<void> {
    const startedAt = new Date(this.deps.clock.now()).toISOString();
    const tree = await this.snapshotOrFail();
    if (tree === null) return;
    this.initialTree = tree;
    this.currentTree = tree;
    const checks = await this.runChecks();
    if (checks === null) return;
    const initialBreakers = initialBreakerState(tree, checksSignature(checks));
    this.lastChecks = checks;
    const allPassed = checks.length > 0 && checks.every((check) => check.passed);
    let evaluation: EvaluationResult = { kind: 'skipped', reason: allPassed ? 'checks decide' : 'no passing checks yet' };
    if (allPassed && this.deps.evaluator.provider !== 'none') {
      evaluation = await this.evaluate(0, checks, [], '', '', '');
      if (this.isInterrupted()) return;
    }
    const achieved = isGoalMet(checks, evaluation, this.deps.evaluator.provider);
    if (evaluation.kind === 'verdict') this.lastVerdict = evaluation.verdict;
    const tokens = evaluationTokens(evaluation);
    const breakersAfter = { ...initialBreakers, tokens: initialBreakers.tokens + tokens };
    this.breakers = breakersAfter;
    this.actor.send({ type: 'precheck.finished', achieved, at: this.deps.clock.now() });
    this.updateSummary(checks, tokens, 0);
    const record: TurnRecord = {
      goalId: this.id,
      turn: 0,
      startedAt,
      finishedAt: new Date(this.deps.clock.now()).toISOString(),
      agent: null,
      tree,
      files: [],
      patchId: null,
      checks,
      evaluation,
      tokens,
      achieved,
      breakers: breakersAfter,
      trip: null,
      status: this.status,
      promptFile: null,
      transcriptFile: null,
    };
    await appendTurnRecord(this.deps.store.goalDir(this.id), record);
    await this.persist();
    this.emit({ type: 'precheck.finished', id: this.id, checks: briefChecks(checks), achieved });
  }

  private async coolDownThenTurn(): Promise<void> {
    this.takePendingSettings();
    const { nextTurnAt } = this.actor.getSnapshot().context;
    const delay = nextTurnAt === null ? 0 : nextTurnAt - this.deps.clock.now();
    if (delay > 0) {
      const wait = this.wakeup.next();
      const timer = new AbortController();
      await Promise.race([wait, this.deps.clock.sleep(delay, timer.signal).catch(() => undefined)]);
      timer.abort();
      return; // re-enter the loop: a control event may have changed the state
    }
    const breakers = this.breakers ?? initialBreakerState(this.currentTree ?? '');
    this.breakers = breakers;
    const refusal = refuseNextTurn(breakers, this.settings.limits, this.activeMs());
    if (refusal) {
      this.actor.send({ type: 'turn.refused', failure: { reason: refusal.breaker, message: refusal.message } });
      this.summary = { ...this.summary, activeMs: this.activeMs() };
      await this.persist();
      return;
    }
    if (this.failIfWorkspaceGone()) return;
    await this.runTurn(this.actor.getSnapshot().context.turn + 1);
  }

  private async runTurn(turn: number): Promise<void> {
    const { limits } = this.settings;
    const goalDir = this.deps.store.goalDir(this.id);
    const startedAt = this.deps.clock.now();
    const promptFile = `turn-${turn}.prompt.txt`;
    const transcriptFile = `turn-${turn}.log`;
    const breakers = this.breakers ?? initialBreakerState(this.currentTree ?? '');
    const prompt = buildTurnPrompt({
      condition: this.settings.condition,
      turn,
      maxTurns: limits.maxTurns,
      ancestry: this.settings.ancestry,
      lastVerdict: this.lastVerdict,
      checks: this.lastChecks,
      filesChanged: this.summary.files,
      warnings: [...nearBreakerWarnings(breakers, limits), ...(this.driftWarningLine ? [this.driftWarningLine] : [])],
    });
    await writeFile(path.join(goalDir, promptFile), prompt, { mode: 0o600 });
    const stateDir = path.join(goalDir, `turn-${turn}.state`);
    await mkdir(stateDir, { recursive: true, mode: 0o700 });

    const timeoutMs = turnTimeoutMs(limits, this.activeMs());
    this.actor.send({
      type: 'turn.started',
      turn,
      deadline: timeoutMs === 0 ? null : startedAt + timeoutMs,
    });
    // Stored once the agent runs, together with its pid (onSpawn): one write per turn start, not two. A
    // crash before the spawn leaves the previous state, and the next daemon simply runs this turn.
    this.emit({ type: 'turn.started', id: this.id, turn, maxTurns: limits.maxTurns });

    const result = await this.deps.agent.runTurn(
      {
        goalId: this.id,
        turn,
        condition: this.settings.condition,
        prompt,
        workspace: this.settings.workspace,
        promptPath: path.join(goalDir, promptFile),
        transcriptPath: path.join(goalDir, transcriptFile),
        timeoutMs,
        turnTokenLimit: limits.turnTokenLimit,
        stateDir,
        reciteEveryToolCalls: this.settings.recitation.everyToolCalls,
        onSpawn: (pid) => {
          // Recorded while the agent works: a daemon that dies mid-turn must find the group to kill.
          this.runningAgent = { pid, startTime: readProcessStartTime(pid), turn };
          this.spawnRecorded = this.persist();
          this.spawnRecorded.catch(() => undefined); // awaited below; this only keeps it from counting as unhandled
        },
      },
      this.abortSignal,
    );
    this.agentSuspended = false;
    // Cleared in the turn's next write: until then a crash finds the pid gone (or reused: the start time
    // differs), so nothing is killed by mistake.
    this.runningAgent = null;
    await this.spawnRecorded;

    if (result.outcome === 'spawn-failed' && !this.isDone()) {
      this.actor.send({
        type: 'goal.fail',
        failure: { reason: 'agent-missing', message: result.error ?? 'the agent could not be started' },
      });
    }
    if (this.isInterrupted()) {
      await this.recordAbandonedTurn(turn, startedAt, result, promptFile, transcriptFile);
      return;
    }
    if (result.outcome === 'usage-limited') {
      await this.pauseForUsageLimit(turn, startedAt, result, promptFile, transcriptFile);
      return;
    }
    this.actor.send({ type: 'turn.finished' });

    const tree = await this.snapshotOrFail();
    if (tree === null) return;
    const previousTree = this.currentTree ?? tree;
    this.currentTree = tree;
    // The turn's delta, the files changed since the start and the checks do not depend on one another:
    // they run at once (git reads only the snapshot's objects; the checks read the work tree).
    const deltaDiff = this.deps.snapshotter.diff(previousTree, tree);
    const [delta, filesSoFar, checks] = await Promise.all([deltaDiff, this.filesSinceStart(previousTree, tree, deltaDiff), this.runChecks()]);
    if (checks === null) {
      await this.recordAbandonedTurn(turn, startedAt, result, promptFile, transcriptFile);
      return;
    }
    this.actor.send({ type: 'checks.finished' });
    const allPassed = checks.every((check) => check.passed);

    let evaluation: EvaluationResult;
    const provider = this.deps.evaluator.provider;
    if (provider === 'none') evaluation = { kind: 'skipped', reason: 'checks decide' };
    else if (!allPassed && this.settings.evaluator.skipWhenChecksFail) {
      evaluation = { kind: 'skipped', reason: 'a check failed, so no verdict could change the outcome' };
    } else {
      const patch = delta.empty ? '' : await this.deps.snapshotter.patch(previousTree, tree, PATCH_FOR_EVALUATOR_MAX_CHARS);
      evaluation = await this.evaluate(turn, checks, delta.files, patch, result.finalMessage, result.outputTail);
      if (this.isInterrupted()) {
        await this.recordAbandonedTurn(turn, startedAt, result, promptFile, transcriptFile);
        return;
      }
    }
    const achieved = isGoalMet(checks, evaluation, provider);
    if (evaluation.kind === 'verdict') this.lastVerdict = evaluation.verdict;
    this.lastChecks = checks;

    const tokens = result.usage.totalTokens + evaluationTokens(evaluation);
    const activeMs = this.activeMs();
    const facts: TurnFacts = {
      turn,
      tokens,
      costUsd: result.usage.costUsd ?? 0,
      tree,
      patchId: delta.patchId,
      changedPaths: delta.files.map((file) => file.path),
      checksSignature: checksSignature(checks),
      agentFailed: result.outcome !== 'completed',
      evaluatorFailed: evaluation.kind === 'error',
      evaluatorSkipped: evaluation.kind === 'skipped',
      turnTokenLimitHit: result.outcome === 'token-limit',
      permissionDenied: (result.permissionDenials ?? 0) > 0,
      activeMs: activeMs - this.lastBoundaryActiveMs,
    };
    const drift = this.assessDrift(result, stateDir);
    const nextBreakers = nextBreakerState(breakers, facts, this.settings.noisePaths);
    this.lastBoundaryActiveMs = activeMs;
    this.breakers = nextBreakers;
    // A met goal is never failed by a breaker.
    const trip = achieved ? null : findTrip(nextBreakers, limits, facts);
    const blocked = evaluation.kind === 'verdict' && evaluation.verdict.blocked && !achieved;
    this.actor.send({
      type: 'verdict.received',
      achieved,
      blocked,
      trip: trip ? { reason: trip.breaker, message: trip.message } : null,
      nextTurnAt: this.deps.clock.now() + limits.cooldownMs,
    });
    this.summary = { ...this.summary, files: filesSoFar };
    this.updateSummary(checks, tokens, turn, result.usage.costUsd ?? 0);

    // Persist the turn record and the machine snapshot before anything else happens.
    const record: TurnRecord = {
      goalId: this.id,
      turn,
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: new Date(this.deps.clock.now()).toISOString(),
      agent: agentRecordOf(result),
      tree,
      files: delta.files,
      patchId: delta.patchId,
      checks,
      evaluation,
      tokens,
      achieved,
      breakers: nextBreakers,
      trip,
      status: this.status,
      promptFile,
      transcriptFile,
      drift,
    };
    await appendTurnRecord(goalDir, record);
    await this.persist();
    if (drift?.pause && this.phase === 'coolingDown') {
      // Persistent high drift: a human should look before more turns are spent (stored just below).
      this.actor.send({ type: 'goal.pause', now: false, reason: 'drift' });
    }

    this.emit({
      type: 'turn.finished',
      id: this.id,
      turn,
      maxTurns: limits.maxTurns,
      outcome: result.outcome,
      durationMs: result.durationMs,
      tokens,
      tokensEstimated: result.usage.estimated,
      filesChanged: delta.files.length,
      checks: briefChecks(checks),
      verdict: evaluation.kind === 'verdict' ? { achieved: evaluation.verdict.achieved, reason: evaluation.verdict.reason } : null,
      evaluatorError: evaluation.kind === 'error' ? evaluation.message : null,
      agentError: result.error ?? null,
    });
    if (statusOf(this.actor.getSnapshot().value) === 'paused') await this.onPaused();
  }

  // Drift from this turn's tool calls (and the in-turn hook's verdict, when the adapter has one).
  private assessDrift(result: TurnResult, stateDir: string): TurnRecord['drift'] {
    const calls = result.toolCalls ?? [];
    const hookPaused = existsSync(path.join(stateDir, DRIFT_PAUSE_FILE));
    if (calls.length === 0 && !hookPaused) return null;
    this.recentToolCalls = [...this.recentToolCalls, ...calls].slice(-DRIFT_WINDOW);
    const score = scoreDrift({ goal: this.settings.condition, recentCalls: this.recentToolCalls });
    this.driftState = nextDriftState(this.driftState, score);
    this.driftWarningLine = driftWarning(score);
    return { ...score, consecutiveHigh: this.driftState.consecutiveHigh, pause: this.driftState.shouldPause || hookPaused };
  }

  // The agent's provider refused for a usage limit: not a failure; pause until the reset, then resume.
  private async pauseForUsageLimit(
    turn: number,
    startedAt: number,
    result: TurnResult,
    promptFile: string,
    transcriptFile: string,
  ): Promise<void> {
    const resumeAt = result.usageLimit?.resetAt ?? this.deps.clock.now() + USAGE_LIMIT_DEFAULT_WAIT_MS;
    this.actor.send({ type: 'usage.limited', resumeAt });
    const tokens = result.usage.totalTokens;
    const breakers = this.breakers ?? initialBreakerState(this.currentTree ?? '');
    // Counted by no breaker but the budgets: the tokens were spent all the same.
    this.breakers = { ...breakers, tokens: breakers.tokens + tokens, costUsd: breakers.costUsd + (result.usage.costUsd ?? 0) };
    this.updateSummary(this.lastChecks ?? [], tokens, turn, result.usage.costUsd ?? 0);
    await this.recordUnevaluatedTurn({
      turn,
      startedAt,
      agent: agentRecordOf(result, { error: result.usageLimit?.message ?? result.error ?? 'usage limit' }),
      reason: `usage-limited until ${new Date(resumeAt).toISOString()}`,
      tokens,
      promptFile,
      transcriptFile,
    });
    await this.onPaused();
  }

  private async evaluate(
    turn: number,
    checks: CheckResult[],
    files: FileChange[],
    patch: string,
    finalMessage: string,
    outputTail: string,
  ): Promise<EvaluationResult> {
    try {
      return await this.deps.evaluator.evaluate(
        {
          condition: this.settings.condition,
          turn,
          maxTurns: this.settings.limits.maxTurns,
          checks,
          files,
          patch,
          agentFinalMessage: finalMessage,
          agentOutputTail: outputTail,
          previousVerdict: this.lastVerdict,
        },
        this.abortSignal,
      );
    } catch (error) {
      if (this.abortSignal.aborted) return { kind: 'skipped', reason: 'goal stopped' };
      throw error;
    }
  }

  // Checks, or null when the goal was stopped or detached while they ran (the runner rejects on abort).
  private async runChecks(): Promise<CheckResult[] | null> {
    try {
      const checks = await this.deps.checks.run(this.abortSignal);
      return this.isInterrupted() ? null : checks;
    } catch (error) {
      if (this.isInterrupted()) return null;
      throw error;
    }
  }

  /** The goal ended (stop, failure) or was let go (detach) while a step ran. */
  private isInterrupted(): boolean {
    return this.isDone() || this.detachController.signal.aborted;
  }

  private async snapshotOrFail(): Promise<string | null> {
    return this.failIfWorkspaceGone() ? null : this.deps.snapshotter.snapshot();
  }

  /** Ends the goal as `workspace-gone` when its directory was removed; true when it did. */
  private failIfWorkspaceGone(): boolean {
    if (existsSync(this.settings.workspace)) return false;
    this.actor.send({
      type: 'goal.fail',
      failure: { reason: 'workspace-gone', message: `the workspace ${this.settings.workspace} no longer exists` },
    });
    return true;
  }

  private isDone(): boolean {
    return this.actor.getSnapshot().status === 'done';
  }

  // A turn cut short by stop: recorded so history shows it, with the agent's usage counted.
  private async recordAbandonedTurn(
    turn: number,
    startedAt: number,
    result: TurnResult,
    promptFile: string,
    transcriptFile: string,
  ): Promise<void> {
    const tokens = result.usage.totalTokens;
    const breakers = { ...(this.breakers ?? initialBreakerState(this.currentTree ?? '')) };
    breakers.tokens += tokens;
    breakers.turns = Math.max(breakers.turns, turn);
    this.breakers = breakers;
    this.updateSummary(this.lastChecks ?? [], tokens, turn, result.usage.costUsd ?? 0);
    const detached = !this.isDone();
    // Let go mid-turn (shutdown): the next daemon starts a fresh turn instead of replaying this one.
    if (detached) this.actor.send({ type: 'daemon.recovered', at: this.deps.clock.now() });
    await this.recordUnevaluatedTurn({
      turn,
      startedAt,
      agent: detached
        ? agentRecordOf(result, { outcome: 'interrupted', error: 'interrupted: the daemon shut down during the turn' })
        : agentRecordOf(result),
      reason: detached ? 'interrupted' : 'goal ended during the turn',
      tokens,
      promptFile,
      transcriptFile,
    });
  }

  // A turn that ended before checks and verdict (stopped, detached, usage-limited): recorded all the same.
  private async recordUnevaluatedTurn(turn: {
    turn: number;
    startedAt: number;
    agent: NonNullable<TurnRecord['agent']>;
    reason: string;
    tokens: number;
    promptFile: string;
    transcriptFile: string;
  }): Promise<void> {
    const record: TurnRecord = {
      goalId: this.id,
      turn: turn.turn,
      startedAt: new Date(turn.startedAt).toISOString(),
      finishedAt: new Date(this.deps.clock.now()).toISOString(),
      agent: turn.agent,
      tree: this.currentTree ?? '',
      files: [],
      patchId: null,
      checks: [],
      evaluation: { kind: 'skipped', reason: turn.reason },
      tokens: turn.tokens,
      achieved: false,
      breakers: this.breakers ?? initialBreakerState(this.currentTree ?? ''),
      trip: null,
      status: this.status,
      promptFile: turn.promptFile,
      transcriptFile: turn.transcriptFile,
      drift: null,
    };
    await appendTurnRecord(this.deps.store.goalDir(this.id), record);
    await this.persist();
  }

  // Files changed since the goal started (recitation, status, final box); the turn's own delta when the
  // turn started from the initial tree.
  private async filesSinceStart(previousTree: string, tree: string, delta: Promise<TurnDelta>): Promise<GoalSummary['files']> {
    if (this.initialTree === null || this.initialTree === tree) return [];
    const { snapshotter } = this.deps;
    const files =
      this.initialTree === previousTree
        ? (await delta).files
        : snapshotter.files
          ? await snapshotter.files(this.initialTree, tree)
          : (await snapshotter.diff(this.initialTree, tree)).files;
    return files.map((file) => ({ path: file.path, added: file.added, deleted: file.deleted }));
  }

  private updateSummary(checks: CheckResult[], tokens: number, turn: number, costUsd = 0): void {
    const passing = checks.filter((check) => check.passed).length;
    this.summary = {
      ...this.summary,
      turns: Math.max(this.summary.turns, turn),
      tokens: this.summary.tokens + tokens,
      costUsd: this.summary.costUsd + costUsd,
      lastVerdictReason: this.lastVerdict?.reason ?? this.summary.lastVerdictReason,
      remaining: this.lastVerdict?.remaining ?? this.summary.remaining,
      checksPassing: passing,
      checksFailing: checks.length - passing,
      activeMs: this.activeMs(),
    };
  }

  /** Writes the goal's record (status, phase, machine snapshot, summary, running agent) under the store lock. */
  private async persist(): Promise<void> {
    const snapshot = this.actor.getSnapshot();
    const machine = asJson(this.actor.getPersistedSnapshot());
    const status = statusOf(snapshot.value);
    const now = new Date(this.deps.clock.now()).toISOString();
    const { failure, pauseReason } = snapshot.context;
    const runningAgent = this.runningAgent;
    this.summary = { ...this.summary, activeMs: this.activeMs() };
    await this.deps.store.update((state) => {
      const goal = state.goals.find((candidate) => candidate.id === this.id);
      if (!goal) return;
      goal.status = status;
      goal.phase = status === 'active' ? phaseOf(snapshot.value) : status;
      goal.machine = machine;
      goal.summary = this.summary;
      goal.updatedAt = now;
      goal.startedAt ??= new Date(this.startedAt).toISOString();
      goal.pauseReason = status === 'paused' ? pauseReason : null;
      goal.runningAgent = runningAgent;
      if (snapshot.status === 'done') {
        goal.finishedAt ??= now;
        goal.reason = failure?.reason ?? null;
        goal.reasonMessage = failure?.message ?? null;
        goal.runningAgent = null;
      }
    });
  }

  private async finish(): Promise<GoalOutcome> {
    await this.persist();
    const snapshot = this.actor.getSnapshot();
    const status = statusOf(snapshot.value) === 'achieved' ? 'achieved' : 'failed';
    const failure = status === 'failed' ? snapshot.context.failure : null;
    const breaker = failure && isBreakerName(failure.reason) ? failure.reason : null;
    const outcome: GoalOutcome = {
      id: this.id,
      status,
      failure,
      breaker,
      turns: this.summary.turns,
      tokens: this.summary.tokens,
      elapsedMs: this.deps.clock.now() - this.startedAt,
    };
    this.emit({
      type: 'goal.finished',
      id: this.id,
      status,
      reason: failure?.reason ?? null,
      breaker,
      turns: outcome.turns,
      tokens: outcome.tokens,
    });
    this.actor.stop();
    return outcome;
  }
}

function isBreakerName(reason: string): reason is BreakerName {
  return (BREAKER_NAMES as readonly string[]).includes(reason);
}
