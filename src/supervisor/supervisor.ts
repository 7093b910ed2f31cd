// The turn pipeline of one goal: performs the side effects of each turn (agent, snapshot, checks,
// evaluator), feeds the results to the pure goal machine as events, and persists every turn before acting
// on it. Over 400 lines because the pipeline's steps stay together, in order, so one turn reads top down.
// Around it: the machine, control, waiting and stored progress (goal-session.ts), the workspace's trees
// (workspace-trees.ts), the snapshot beside the checks (turn-checks.ts), the tamper guard's look
// (turn-guard.ts), the verdict (turn-judgement.ts), breaker facts and events (turn-report.ts), turn records
// (turn-record.ts) and the order of their writes (turn-writes.ts), drift (prompt/drift-tracker.ts) and the
// breakers' accounting (breakers/).

import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { GoalStatus } from '../../machines/goal.machine.js';
import type { GoalRecord, GoalSummary, Json, Store } from '../../state/types.js';
import { readProcessStartTime } from '../process/process-identity.js';
import type { AgentAdapter, TurnResult } from '../agents/types.js';
import {
  accountUnevaluatedTurn,
  afterRestoredTree,
  distanceOf,
  findTrip,
  initialBreakerState,
  nearBreakerWarnings,
  nextBreakerState,
  refuseNextTurn,
} from '../breakers/index.js';
import type { BreakerState } from '../breakers/types.js';
import type { Clock } from '../clock.js';
import type { GoalSettings } from '../config/types.js';
import type { EvaluationResult, Evaluator, Verdict } from '../evaluator/types.js';
import { GitRedirectWatch } from '../guard/git-redirects.js';
import type { GoaldPaths, GuardReport } from '../guard/types.js';
import { buildTurnPrompt } from '../prompt/build-prompt.js';
import { renderDistanceLine } from '../prompt/distance-line.js';
import { DriftTracker } from '../prompt/drift-tracker.js';
import { checksSignature } from '../workspace/checks.js';
import type { CheckResult, CheckRunner, FileChange, Snapshotter } from '../workspace/types.js';
import { writeStampedLater } from '../workspace/time-window.js';
import { GoalSession, type GoalOutcome } from './goal-session.js';
import {
  agentRecordOf,
  buildTurnRecord,
  turnFiles,
  type TurnAgentRecord,
  type TurnFiles,
  type TurnRecordFields,
} from './turn-record.js';
import { askEvaluator, evaluationTokens, isGoalMet, judgeTurn, type Judge, type TurnEvidence } from './turn-judgement.js';
import { briefChecks, turnFacts, turnFinishedEvent, type FinishedTurn } from './turn-report.js';
import { breakerCounters } from '../breakers/counters.js';
import { GuidanceQueue } from './guidance-queue.js';
import type { SupervisorObserver, TurnRecord } from './types.js';
import { WorkspaceTrees } from './workspace-trees.js';
import { TurnWrites } from './turn-writes.js';
import { guardTurn, withIgnoredFiles, type TurnGuardContext } from './turn-guard.js';
import { snapshotBesideChecks, type ChecksContext } from './turn-checks.js';
import { redactSecrets } from '../secrets/redact.js';
import type { GoalSandbox } from '../sandbox/goal-sandbox.js';
import { NextTurnLeader } from './next-turn-leader.js';
import { AgentWindows } from './agent-windows.js';
import { readTurnRecords } from '../../state/index.js';
import type { GoalRollback } from '../../state/types.js';
import { describeScore, fellBelow, nextBest, scoreOf, type BestTurn } from '../checkpoints/keep-best.js';
import type { TreeSource } from '../checkpoints/restore-tree.js';
import { GoaldError, isGoaldError } from '../errors.js';
import type { RollbackNote } from '../prompt/rollback-block.js';

// Rollbacks (`goald rollback`, `--keep-best`) load when one is taken: a start's path never needs them.
const loadRollbacks = (): Promise<typeof import('../checkpoints/rollback-goal.js')> => import('../checkpoints/rollback-goal.js');

export type { GoalOutcome } from './goal-session.js';

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
  /**
   * Told the paths a turn changed (relative to the workspace) once its snapshot is taken, before its checks
   * and verdict; awaited, so the daemon knows of a goal.config.json edit in the delta before the turn ends.
   */
  onTurnDelta?: (turn: number, files: readonly string[]) => Promise<void>;
  /** goald's own files inside the workspace, which the tamper guard protects (guard/goald-paths.ts). */
  goaldPaths?: GoaldPaths;
  /** The kernel boundary the agent's turns and the checks run in (src/sandbox/); absent: none. */
  sandbox?: GoalSandbox;
  /** Awaited after each turn record is stored, before the next step (a worktree goal commits the turn). */
  onTurnRecorded?: (record: TurnRecord) => Promise<void>;
  /** Awaited once the goal has ended, before `goal.finished` (a worktree goal's directory is removed). */
  onEnding?: (status: 'achieved' | 'failed') => Promise<void>;
  /** Where the goal's snapshot trees are read to restore files (rollbacks, `--keep-best`); absent: none. */
  treeSource?: TreeSource;
  /** A worktree goal's `goald rollback`: its worktree and branch reset to the turn's commit, in place of restoring files. */
  rollbackWorktree?: (how: { toTurn: number; afterTurn: number; records: readonly TurnRecord[]; now: Date }) => Promise<GoalRollback>;
}

/** Where a restarted goal picks up (from the store's record and the last turn record). */
export interface RestoredGoal {
  /** The persisted machine snapshot; null for a reopened goal (a fresh machine continues after its last turn). */
  machine: Json | null;
  lastTurn: TurnRecord | null;
  initialTree: string | null;
  /** A goal that failed on a budget breaker, reopened by `goald edit --resume`: the turns it has run. */
  reopenedAfterTurn?: number;
}

export interface RunOptions {
  /**
   * Run one step of the goal and let go (a cluster worker's turn job): the pre-check or one turn, stored,
   * then the goal is released as detach() leaves it. A goal restored paused is resumed first (the queue ran
   * this turn because the goal was resumed), and one that pauses is let go at once.
   */
  oneTurn?: boolean;
}

/** One turn in flight: its number, when it started, its prompt and where its files go. */
interface TurnContext {
  turn: number;
  /** Epoch milliseconds. */
  startedAt: number;
  prompt: string;
  /** The goal's directory (absolute); `files` are relative to it. */
  goalDir: string;
  files: TurnFiles;
  /** The prompt file's ctime as writeStampedLater left it: where the agent's window opens. */
  promptStampedAt: number;
}

/** What the workspace showed after the agent: the new tree, the turn's delta, the checks and the guard's report. */
interface TurnObservation extends TurnEvidence {
  filesSoFar: GoalSummary['files'];
  /** The goal's starting tree and every change since (what the tamper guard inspects). */
  sinceStart: { initialTree: string | null; changes: FileChange[] };
  guard: GuardReport;
}

type TurnRecordBase = Pick<TurnRecordFields, 'goalId' | 'turn' | 'startedAt' | 'finishedAt' | 'breakers' | 'status' | 'sandbox' | 'guidance'>;

// The agent's time limit this turn: the turn timeout, or less when the wall-clock budget ends sooner (0 = none).
function turnTimeoutMs(limits: GoalSettings['limits'], activeMs: number): number {
  const candidates = [limits.turnTimeoutMs];
  if (limits.wallClockMs !== null) candidates.push(Math.max(1, limits.wallClockMs - activeMs));
  const positive = candidates.filter((ms) => ms > 0);
  return positive.length === 0 ? 0 : Math.min(...positive);
}

export class GoalSupervisor {
  readonly id: string;
  /** The goal's directory in GOALD_HOME (turn log, prompts, transcripts). */
  private readonly goalDir: string;
  private settings: GoalSettings;
  private readonly deps: SupervisorDeps;
  private readonly session: GoalSession;
  /** A reopened goal's turns so far (`goald edit --resume`), sent to the fresh machine when it starts. */
  private readonly reopenedAfterTurn: number | null;
  /** A live config edit, applied at the next turn boundary (edits never restart a running turn). */
  private pendingSettings: { settings: GoalSettings; checks: CheckRunner; evaluator: Evaluator } | null = null;
  // What the pipeline remembers from turn to turn (restored from the last turn record after a restart).
  private breakers: BreakerState | null;
  private readonly trees: WorkspaceTrees;
  private lastVerdict: Verdict | null;
  private lastChecks: CheckResult[] | null;
  /** The tamper guard's report on the last turn: the next prompt asks for each finding to be reverted. */
  private lastGuard: GuardReport;
  /** Drift between turns, from the adapters' parsed tool calls (the in-turn hook keeps its own). */
  private readonly drift: DriftTracker;
  /** The regression guard's best turn so far (`--keep-best`) and its checks (null after a restart). */
  private best: BestTurn | null;
  private bestChecks: CheckResult[] | null = null;
  /** A rollback since the last turn: the next prompt says so under its own heading. */
  private rollbackNote: RollbackNote | null = null;
  /** The pre-check, when beginPrecheck() started it before run(). */
  private earlyPrecheck: { startedAt: number; taken: Promise<{ snapshot: string; checks: Promise<CheckResult[] | null> }> } | null = null;
  /** Each turn's record and the goal's progress, written in the order a crash needs (turn-writes.ts). */
  private readonly writes: TurnWrites;
  /** The agent's turns write to a state directory of their own (AgentAdapter.keepsTurnState). */
  private readonly keepsTurnState: boolean;
  /** Guidance (`goald say`) queued for the next prompt, and what the current turn's prompt carried. */
  private readonly guidance = new GuidanceQueue();
  private turnGuidance: string[] = [];
  /** This run ends after one turn (a cluster worker's job): no turn follows the one it records. */
  private oneTurnRun = false;
  /** The next turn's agent process, started ahead while this one is checked. */
  private readonly nextTurn: NextTurnLeader;
  /** When the agent ran, turn by turn (the guard's look at ignored files). */
  private readonly agentWindows: AgentWindows;
  /** Files made in the repository's `.git` that would point your git elsewhere, removed after each turn. */
  private readonly gitRedirects: GitRedirectWatch;

  constructor(goal: GoalRecord, settings: GoalSettings, deps: SupervisorDeps, restored?: RestoredGoal) {
    this.id = goal.id;
    this.settings = settings;
    this.deps = deps;
    // Made (when missing) once here, not on each of a turn's writes: a recursive mkdir of a directory that
    // exists is still a system call and a stat.
    this.goalDir = deps.store.goalDir(goal.id);
    this.keepsTurnState = deps.agent.keepsTurnState === true;
    this.nextTurn = new NextTurnLeader(deps.sandbox, settings.workspace, this.goalDir, this.keepsTurnState, deps.agent.environment);
    this.agentWindows = new AgentWindows(this.goalDir, { takenOver: restored !== undefined });
    this.gitRedirects = new GitRedirectWatch(settings.workspace);
    this.session = new GoalSession({
      goal,
      blockedLimit: settings.limits.blockedVerdicts,
      machine: restored?.machine ?? null,
      store: deps.store,
      clock: deps.clock,
      observers: deps.observers,
      agent: deps.agent,
    });
    this.writes = new TurnWrites(this.session, this.goalDir, deps.onTurnRecorded);
    const last = restored?.lastTurn ?? null;
    this.breakers = last?.breakers ?? null;
    this.trees = new WorkspaceTrees(deps.snapshotter, { initialTree: restored?.initialTree ?? null, currentTree: last?.tree ?? null });
    this.lastVerdict = last?.evaluation.kind === 'verdict' ? last.evaluation.verdict : null;
    this.lastChecks = last?.checks ?? null;
    this.lastGuard = { tamper: last?.tamper ?? [], notes: last?.guardNotes ?? [] };
    this.drift = new DriftTracker(settings.condition);
    this.reopenedAfterTurn = restored?.reopenedAfterTurn ?? null;
    const best = last?.keepBest?.best;
    this.best = best === undefined ? null : { turn: best.turn, tree: best.tree, score: best };
    // A rollback taken after the last turn (a paused goal's, then a daemon restart, or a cluster goal whose
    // next turn runs on another worker): the work tree holds its files, and the next prompt says so.
    const rollback = restored === undefined ? undefined : goal.rollbacks?.at(-1);
    if (rollback !== undefined && last !== null && rollback.afterTurn >= last.turn) {
      this.trees.restart(rollback.tree);
      this.breakers = afterRestoredTree(this.breakerState(), rollback.tree);
      this.rollbackNote = { ...rollback, reason: null };
    }
  }

  /** The current top-level status. */
  get status(): GoalStatus {
    return this.session.status;
  }

  /** The current phase (`running`, `checking`, `paused`, ...). */
  get phase(): string {
    return this.session.phase;
  }

  /** A pause was asked for and will be taken at the end of the turn (resume() cancels it). */
  get isPausePending(): boolean {
    return this.session.isPausePending;
  }

  /**
   * The turn in flight, from its start until its verdict (also while paused with `--now`: its agent still
   * lives); null between turns.
   */
  get turnInFlight(): number | null {
    const { phase } = this.session;
    const { turn, resumeTo } = this.session.snapshot.context;
    if (phase === 'running' || phase === 'checking' || phase === 'evaluating') return turn;
    return this.session.status === 'paused' && resumeTo === 'running' ? turn : null;
  }

  /**
   * Runs the goal until it is achieved or failed, and resolves with the outcome; or with null when
   * detach() let go of it (daemon shutdown). A failed write of goald's files (disk full) ends the goal as
   * `failed` / `storage`, with `goal.finished` announced. Rejects only on bugs.
   */
  async run(options: RunOptions = {}): Promise<GoalOutcome | null> {
    try {
      const ran = await this.runSteps(options.oneTurn === true);
      await this.writes.settled();
      if (ran === 'detached') return null;
    } catch (error) {
      if (!this.session.failOnStorageError(error)) throw error;
    } finally {
      this.nextTurn.disable(); // and none started after (a prepare queued by the last turn)
    }
    await this.deps.onEnding?.(this.session.status === 'achieved' ? 'achieved' : 'failed');
    return this.session.finish();
  }

  // The run loop: step after step until the machine reaches a final state or detach() lets go; with
  // `oneTurn`, until one turn (or the pre-check) is recorded, or the goal pauses.
  private async runSteps(oneTurn: boolean): Promise<'done' | 'detached'> {
    const { session } = this;
    // One turn here (a cluster worker's job): no next turn to start ahead.
    if (oneTurn) this.nextTurn.disable();
    this.oneTurnRun = oneTurn;
    session.start();
    if (this.reopenedAfterTurn !== null) session.send({ type: 'goal.reopened', turn: this.reopenedAfterTurn, at: session.now() });
    if (session.status === 'paused' && session.snapshot.context.resumeTo === 'running') {
      // Restored after a crash while paused mid-turn: that agent is gone, so resume must start a new turn.
      session.send({ type: 'daemon.recovered', at: session.now() });
    }
    // A cluster turn runs because the queue holds it: a goal stored paused was resumed since.
    if (oneTurn && session.status === 'paused') session.send({ type: 'goal.resume', at: session.now() });
    const recordedBefore = this.writes.count;
    if (!session.isDone() && session.phase === 'preparing') {
      const { condition, workspace, limits } = this.settings;
      session.emit({ type: 'goal.started', id: this.id, condition, workspace, maxTurns: limits.maxTurns });
    }
    // A goal just registered needs no write before its pre-check (whose record is the first one).
    if (!session.isStoredAsRegistered()) await session.persist();
    while (!session.isDone()) {
      if (session.isDetached() || (oneTurn && (this.writes.count > recordedBefore || session.status === 'paused'))) {
        await session.release();
        return 'detached';
      }
      if (session.status === 'paused') {
        this.nextTurn.discard(); // no process waits through a pause
        await session.waitWhilePaused();
      }
      else if (session.phase === 'preparing') await this.precheck(oneTurn);
      else if (session.phase === 'coolingDown') await this.coolDownThenTurn();
      // running/checking/evaluating with no turn in flight: a restored snapshot. Treat as interrupted.
      else session.send({ type: 'daemon.recovered', at: session.now() });
    }
    return 'done';
  }

  /**
   * Starts the pre-check before run() does (a foreground start, before its goal is registered): its
   * snapshot, already under way (withSnapshotUnderWay), and its first check's process, started now and
   * running nothing of the check until `admitted` resolves. When `admitted` rejects (the goal was refused),
   * that process is ended, no check having run; abandonPrecheck() then waits for it, and run() is not called.
   */
  beginPrecheck(admitted: Promise<void>): void {
    admitted.catch(() => undefined); // ours from here: a refusal ends the held check, and nothing else
    if (this.earlyPrecheck !== null) return;
    const taken = snapshotBesideChecks(this.checksContext(), (onIndexed) => this.trees.snapshotStart(onIndexed), admitted, { snapshotUnderWay: true });
    taken.catch(() => undefined); // awaited by precheck()
    this.earlyPrecheck = { startedAt: this.session.now(), taken };
    // Turn 1's process once admitted, spawned while registration's write waits on the disk: in the next
    // turn of the event loop, not in the microtask that admits the goal, which runs before the write is
    // issued (the fork holds this thread 1-3 ms).
    void admitted.then(
      () => setImmediate(() => this.nextTurn.prepare(1)),
      () => undefined,
    );
  }

  /**
   * For a goal that was not registered after all (refused, or its registration could not be written):
   * ends what beginPrecheck started (its check, held or running) and resolves once its snapshot and checks
   * are over, so that the goal's directory can be removed. run() is not to be called after it.
   */
  async abandonPrecheck(): Promise<void> {
    const early = this.earlyPrecheck;
    this.earlyPrecheck = null;
    this.nextTurn.disable(); // turn 1's process too, readied at admission
    if (early === null) return;
    this.session.detach(); // aborts the checks; the machine was never started
    await early.taken.then((taken) => taken.checks).catch(() => undefined);
  }

  /** Pauses at the next turn boundary, or now (SIGSTOP to the agent's group); resolves once stored. */
  pause(now: boolean): Promise<void> {
    return this.session.pause(now);
  }

  /** Resumes a paused goal (SIGCONT when it was paused mid-turn), or cancels a pending pause; resolves once stored. */
  resume(): Promise<void> {
    return this.session.resume();
  }

  /** Lets go of the goal without ending it (daemon shutdown): kills the agent, keeps the goal active. */
  detach(): void {
    this.session.detach();
  }

  /** Stops the goal: kills the agent's group and records `failed` / `stopped`. */
  stop(message?: string): void {
    this.session.stop(message);
  }

  /** Queues the owner's guidance for the next turn's prompt; resolves how many are queued. Never touches the settings. */
  addGuidance(text: string): number {
    return this.guidance.add(text);
  }

  /** Takes new settings (limits, checks, evaluator, noise paths) from the next turn on. */
  applySettings(settings: GoalSettings, parts: { checks: CheckRunner; evaluator: Evaluator }): void {
    this.pendingSettings = { settings, ...parts };
  }

  // Turn 0: snapshot and checks before any agent token is spent. `oneTurn`: the run ends with this record.
  private async precheck(oneTurn: boolean): Promise<void> {
    const early = this.earlyPrecheck;
    this.earlyPrecheck = null;
    const startedAt = early?.startedAt ?? this.session.now();
    if (this.failIfWorkspaceGone()) {
      await early?.taken.then((taken) => taken.checks).catch(() => undefined); // nothing of it left running
      return;
    }
    const taking = early?.taken ?? snapshotBesideChecks(this.checksContext(), (onIndexed) => this.trees.snapshotStart(onIndexed));
    // Turn 1's process, started while the pre-check runs (after its snapshot's and check's, as above).
    setImmediate(() => this.nextTurn.prepare(1));
    const taken = await taking;
    const tree = taken.snapshot;
    const checks = await taken.checks;
    if (checks === null) return;
    this.lastChecks = checks;
    const allPassed = checks.length > 0 && checks.every((check) => check.passed);
    let evaluation: EvaluationResult = { kind: 'skipped', reason: allPassed ? 'checks decide' : 'no passing checks yet' };
    if (allPassed && this.deps.evaluator.provider !== 'none') {
      evaluation = await askEvaluator(this.judge(), 0, checks, { files: [], patch: '', agentFinalMessage: '', agentOutputTail: '' });
      if (this.session.isInterrupted()) return;
    }
    const achieved = isGoalMet(checks, evaluation, this.deps.evaluator.provider);
    if (evaluation.kind === 'verdict') this.lastVerdict = evaluation.verdict;
    const tokens = evaluationTokens(evaluation);
    // The pre-check's evaluator tokens count toward the budget; its time is counted with turn 1's.
    const distance = distanceOf(this.lastVerdict, checks);
    const keepBest = this.guardRegression(0, tree, checks, null);
    const initial = initialBreakerState(tree, checksSignature(checks), distance);
    this.breakers = accountUnevaluatedTurn(initial, 0, { tokens, costUsd: 0, activeMs: 0 });
    this.session.send({ type: 'precheck.finished', achieved, at: this.session.now() });
    this.session.addToSummary({ turn: 0, tokens, costUsd: 0, checks, lastVerdict: this.lastVerdict });
    const base = this.turnRecordBase(0, startedAt);
    const record = buildTurnRecord({ ...base, agent: null, tree, checks, evaluation, tokens, achieved, distance, ...(await keepBest) });
    const finished = { type: 'precheck.finished', id: this.id, checks: briefChecks(checks), achieved } as const;
    if (achieved || oneTurn || this.session.isInterrupted()) {
      await this.writes.record(record);
      this.session.emit(finished);
      return;
    }
    this.session.emit(finished); // before turn 1's turn.started, which comes before this record is stored
    this.writes.recordAfterNextSpawn(record);
  }

  // Between turns: wait out the cool-down (a control call wakes it), then refuse or start the next turn.
  private async coolDownThenTurn(): Promise<void> {
    this.takePendingSettings();
    const { nextTurnAt, turn } = this.session.snapshot.context;
    const delay = nextTurnAt === null ? 0 : nextTurnAt - this.session.now();
    if (delay > 0) {
      await this.session.sleepUnlessWoken(delay);
      return; // back to the run loop: a control call may have changed the state
    }
    const refusal = refuseNextTurn(this.breakerState(), this.settings.limits, this.session.activeClock.activeMs());
    if (refusal) {
      this.session.send({ type: 'turn.refused', failure: { reason: refusal.breaker, message: refusal.message } });
      await this.session.persist();
      return;
    }
    if (this.failIfWorkspaceGone()) return;
    await this.runTurn(turn + 1);
  }

  // One turn: prompt → agent → snapshot and checks → verdict → breakers → record.
  private async runTurn(turn: number): Promise<void> {
    const context = await this.startTurn(turn);
    const result = await this.runAgent(context);
    if (result.outcome === 'spawn-failed' && !this.session.isDone()) {
      const message = result.error ?? 'the agent could not be started';
      this.session.send({ type: 'goal.fail', failure: { reason: 'agent-missing', message } });
    }
    if (result.transcriptError !== undefined && !this.session.isDone()) {
      // The agent's output could not be written (disk full): goald can no longer keep its record.
      this.session.send({ type: 'goal.fail', failure: { reason: 'storage', message: `goald could not write its files: ${result.transcriptError}` } });
    }
    if (this.session.isInterrupted()) return this.recordCutShortTurn(context, result);
    if (result.outcome === 'usage-limited') return this.pauseForUsageLimit(context, result);
    this.session.send({ type: 'turn.finished' });

    const observation = await this.observeWorkspace(result);
    if (observation === 'workspace-gone') return;
    if (observation === 'interrupted') return this.recordCutShortTurn(context, result);
    this.session.send({ type: 'checks.finished' });

    const evaluation = await judgeTurn(this.judge(), turn, result, observation);
    if (this.session.isInterrupted()) return this.recordCutShortTurn(context, result);
    await this.concludeTurn(context, result, observation, evaluation);
  }

  // Builds and saves the prompt and makes the turn's directory.
  private async startTurn(turn: number): Promise<TurnContext> {
    const { limits } = this.settings;
    const { goalDir } = this;
    const files = turnFiles(turn);
    // Check output and verdicts quoted in the prompt may hold a secret the agent printed: redacted here,
    // before the prompt is saved and before the agent reads it.
    const prompt = redactSecrets(buildTurnPrompt({
      condition: this.settings.condition,
      turn,
      maxTurns: limits.maxTurns,
      ancestry: this.settings.ancestry,
      lastVerdict: this.lastVerdict,
      checks: this.lastChecks,
      filesChanged: this.session.summary.files,
      filesOmitted: this.session.summary.filesOmitted ?? 0,
      guard: this.lastGuard,
      warnings: [...nearBreakerWarnings(this.breakerState(), limits), ...(this.drift.warning ? [this.drift.warning] : [])],
      distance: renderDistanceLine(this.breakerState().noProgress, limits.noProgress),
      guidance: (this.turnGuidance = this.guidance.take()),
      rollback: this.rollbackNote,
    }));
    this.rollbackNote = null;
    // Synchronous: a few KiB to a local file, where each asynchronous step is a trip through the thread pool.
    // Stamped after everything the checks before this turn wrote: the agent's window opens at this file's
    // ctime (runAgent), and a check's report stamped in the same tick would count as the agent's change.
    const promptStampedAt = await writeStampedLater(path.join(goalDir, files.promptFile), prompt);
    if (this.keepsTurnState) mkdirSync(path.join(goalDir, files.stateDir), { recursive: true, mode: 0o700 });
    return { turn, startedAt: this.session.now(), prompt, goalDir, files, promptStampedAt };
  }

  // Runs the agent; its pid is stored as soon as it spawns, so a daemon that dies mid-turn can kill it.
  private async runAgent(context: TurnContext): Promise<TurnResult> {
    const { limits } = this.settings;
    const { turn, goalDir, files } = context;
    await this.writes.beforeAgent();
    const timeoutMs = turnTimeoutMs(limits, this.session.activeClock.activeMs());
    this.session.send({ type: 'turn.started', turn, deadline: timeoutMs === 0 ? null : context.startedAt + timeoutMs });
    // Stored once the agent runs, together with its pid (onSpawn): one write per turn start, not two. A
    // crash before the spawn leaves the previous state, and the next daemon simply runs this turn.
    this.session.emit({ type: 'turn.started', id: this.id, turn, maxTurns: limits.maxTurns });
    // Its process started ahead, when one was (its spawn claims it; unclaimed, it is ended).
    const readied = this.nextTurn.take(turn);
    const stateDir = this.keepsTurnState ? path.join(goalDir, files.stateDir) : null;
    // The window opens at the prompt's ctime, stamped by the clock that stamps the files the agent changes.
    const from = Math.min(Date.now(), context.promptStampedAt);
    this.writes.storeTurnEndSoon();
    const ran = await this.deps.agent.runTurn(
      {
        goalId: this.id,
        turn,
        condition: this.settings.condition,
        prompt: context.prompt,
        workspace: this.settings.workspace,
        promptPath: path.join(goalDir, files.promptFile),
        transcriptPath: path.join(goalDir, files.transcriptFile),
        timeoutMs,
        turnTokenLimit: limits.turnTokenLimit,
        ...(stateDir === null ? {} : { stateDir }),
        reciteEveryToolCalls: this.settings.recitation.everyToolCalls,
        checks: this.settings.checks,
        sandbox: readied !== null ? readied.wrap : (this.deps.sandbox?.forTurn({ promptPath: path.join(goalDir, files.promptFile), stateDir }) ?? null),
        ...(readied === null ? {} : { ready: readied.ready }),
        onSpawn: (pid, token) => {
          this.session.runningAgent = { pid, startTime: readProcessStartTime(pid), turn, token };
          this.writes.storeWithSpawn();
        },
      },
      this.session.abortSignal,
    );
    const window = { from, to: Date.now() };
    const result: TurnResult = { ...ran, window };
    this.agentWindows.add(window);
    readied?.ready.discard(); // a turn that never spawned (its command missing, or stopped first)
    this.session.agentExited();
    // Cleared in the turn's next write: until then a crash finds the pid gone (or reused: the start time
    // differs), so nothing is killed by mistake.
    this.session.runningAgent = null;
    await this.writes.afterAgent();
    return result;
  }

  // Snapshot, the turn's delta, the files changed so far, the checks and the tamper guard.
  private async observeWorkspace(result: TurnResult): Promise<TurnObservation | 'workspace-gone' | 'interrupted'> {
    if (this.failIfWorkspaceGone()) return 'workspace-gone';
    // Before the checks run and anything of goald's runs git there: removed whether or not the guard is on.
    const redirects = this.gitRedirects.sweep();
    const taking = snapshotBesideChecks(this.checksContext(), (onIndexed) => this.trees.snapshotTurn(onIndexed));
    // The next turn's process is started meanwhile: after the snapshot's and the first check's (a
    // setImmediate queued behind the one that starts the check), as each fork holds this thread ~2 ms.
    const { turn } = this.session.snapshot.context;
    if (turn < this.settings.limits.maxTurns) setImmediate(() => this.nextTurn.prepare(turn + 1));
    const taken = await taking;
    const step = taken.snapshot;
    const { previousTree, tree, initialTree } = step;
    // The checks run beside the diffs and the guard, which read only the snapshot's objects (the checks
    // read the work tree): the guard's one git read, when it needs one, costs a turn no time of its own.
    const guard = Promise.all([step.delta, step.changesSoFar]).then(([delta, changes]) =>
      guardTurn(this.guardContext(), { previousTree, tree, delta, initialTree, changes }, result, this.lastGuard),
    );
    const [delta, filesSoFar, changes, checks, report] = await Promise.all([step.delta, step.filesSoFar, step.changesSoFar, taken.checks, guard]);
    await this.deps.onTurnDelta?.(this.session.snapshot.context.turn, delta.files.map((file) => file.path));
    // Again once the checks are over: they run code the agent wrote (its tests), which may make one too.
    const afterChecks = this.gitRedirects.sweep().filter((finding) => !redirects.some((found) => found.path === finding.path));
    redirects.push(...afterChecks);
    if (checks === null || report === null) return 'interrupted';
    const judged = await withIgnoredFiles(this.guardContext(), report, checks, this.agentWindows, result);
    if (judged === null) return 'interrupted';
    const guarded = this.settings.guard.enabled && redirects.length > 0 ? { ...judged, tamper: [...judged.tamper, ...redirects] } : judged;
    const sinceStart = { initialTree, changes };
    return { previousTree, tree, delta, filesSoFar, sinceStart, checks, guard: guarded };
  }

  // Achieved, tripped or on to the next turn: breakers, the machine's verdict, the record, the events.
  private async concludeTurn(
    context: TurnContext,
    result: TurnResult,
    observation: TurnObservation,
    evaluation: EvaluationResult,
  ): Promise<void> {
    const { limits } = this.settings;
    const { turn } = context;
    const { checks, delta, tree, guard } = observation;
    const achieved = isGoalMet(checks, evaluation, this.deps.evaluator.provider, guard.tamper);
    if (evaluation.kind === 'verdict') this.lastVerdict = evaluation.verdict;
    this.lastChecks = checks;
    this.lastGuard = guard;

    const tokens = result.usage.totalTokens + evaluationTokens(evaluation);
    const costUsd = result.usage.costUsd ?? 0;
    const activeMs = this.session.activeClock.takeSinceBoundary();
    const finished: FinishedTurn = {
      goalId: this.id,
      turn,
      maxTurns: limits.maxTurns,
      result,
      tree,
      delta,
      checks,
      evaluation,
      tokens,
      activeMs,
      tamper: guard.tamper,
    };
    const facts = turnFacts(finished);
    const hookAskedPause = this.keepsTurnState && existsSync(path.join(context.goalDir, context.files.stateDir, DRIFT_PAUSE_FILE));
    const drift = this.drift.assess(result.toolCalls ?? [], hookAskedPause);
    const breakers = nextBreakerState(this.breakerState(), facts, this.settings.noisePaths);
    this.breakers = breakers;
    // A met goal is never failed by a breaker.
    const trip = achieved ? null : findTrip(breakers, limits, facts);
    const blocked = evaluation.kind === 'verdict' && evaluation.verdict.blocked && !achieved;
    this.session.send({
      type: 'verdict.received',
      achieved,
      blocked,
      trip: trip ? { reason: trip.breaker, message: trip.message } : null,
      nextTurnAt: this.session.now() + limits.cooldownMs,
    });
    this.session.addToSummary({ turn, tokens, costUsd, checks, lastVerdict: this.lastVerdict, files: observation.filesSoFar, tamper: guard.tamper });

    // The regression guard restores the best turn's files before the next turn (not when the goal ended).
    const keepBest = await this.guardRegression(turn, tree, checks, this.session.isDone() ? null : { turnFiles: delta.files.map((file) => file.path) });
    // Persist the turn record and the machine snapshot before anything else happens.
    const agent = agentRecordOf(result);
    const base = this.turnRecordBase(turn, context.startedAt);
    await this.writes.record(
      buildTurnRecord({ ...base, agent, tree, files: delta.files, patchId: delta.patchId, checks, evaluation, tokens, achieved, trip, drift, guard, distance: facts.distance, ...keepBest }),
      { withNextSpawn: this.nextTurnStartsAtOnce() && drift?.pause !== true },
    );
    if (drift?.pause && this.session.phase === 'coolingDown') {
      // Persistent high drift: a human should look before more turns are spent (stored just below).
      this.session.send({ type: 'goal.pause', now: false, reason: 'drift' });
    }
    this.session.emit(turnFinishedEvent(finished, breakerCounters(breakers, limits)));
    if (this.session.status === 'paused') await this.session.onPaused();
  }

  // The agent's provider refused for a usage limit: not a failure; pause until the reset, then resume.
  private async pauseForUsageLimit(context: TurnContext, result: TurnResult): Promise<void> {
    const resumeAt = result.usageLimit?.resetAt ?? this.session.now() + USAGE_LIMIT_DEFAULT_WAIT_MS;
    this.session.send({ type: 'usage.limited', resumeAt });
    await this.recordUnevaluatedTurn(context, result, {
      agent: agentRecordOf(result, { error: result.usageLimit?.message ?? result.error ?? 'usage limit' }),
      reason: `usage-limited until ${new Date(resumeAt).toISOString()}`,
    });
    await this.session.onPaused();
  }

  // A turn cut short by stop or detach: recorded so history shows it, with all it spent counted.
  private async recordCutShortTurn(context: TurnContext, result: TurnResult): Promise<void> {
    const detached = !this.session.isDone();
    // Let go mid-turn (shutdown): the next daemon starts a fresh turn instead of replaying this one.
    if (detached) this.session.send({ type: 'daemon.recovered', at: this.session.now() });
    await this.recordUnevaluatedTurn(context, result, {
      agent: detached
        ? agentRecordOf(result, { outcome: 'interrupted', error: 'interrupted: the daemon shut down during the turn' })
        : agentRecordOf(result),
      reason: detached ? 'interrupted' : 'goal ended during the turn',
    });
  }

  // A turn that ended before its checks and verdict: what it spent counts toward the budgets; recorded.
  private async recordUnevaluatedTurn(
    context: TurnContext,
    result: TurnResult,
    how: { agent: TurnAgentRecord; reason: string },
  ): Promise<void> {
    const tokens = result.usage.totalTokens;
    const costUsd = result.usage.costUsd ?? 0;
    const activeMs = this.session.activeClock.takeSinceBoundary();
    this.breakers = accountUnevaluatedTurn(this.breakerState(), context.turn, { tokens, costUsd, activeMs });
    const checks = this.lastChecks ?? [];
    this.session.addToSummary({ turn: context.turn, tokens, costUsd, checks, lastVerdict: this.lastVerdict });
    const base = this.turnRecordBase(context.turn, context.startedAt);
    const evaluation: EvaluationResult = { kind: 'skipped', reason: how.reason };
    await this.writes.record(buildTurnRecord({ ...base, agent: how.agent, tree: this.trees.current ?? '', evaluation, tokens }));
  }

  /**
   * Rolls the goal's files back to turn `turn` (`goald rollback`): only a goal paused between turns, whose
   * run loop waits. The next prompt says so; the history records it.
   */
  async rollback(turn: number): Promise<GoalRollback> {
    if (this.session.status !== 'paused' || this.turnInFlight !== null) {
      throw new GoaldError('conflict', `goal ${this.id} is ${this.session.status === 'paused' ? 'paused mid-turn (--now)' : this.session.status}`, `pause it between turns first: goald pause ${this.id}, then goald rollback`);
    }
    const { goalPathsOf, treeOfTurn } = await loadRollbacks();
    const records = await readTurnRecords(this.goalDir);
    const target = treeOfTurn(this.id, records, turn);
    const afterTurn = records.at(-1)?.turn ?? 0;
    if (this.deps.rollbackWorktree !== undefined) {
      return this.tookRollback(await this.deps.rollbackWorktree({ toTurn: turn, afterTurn, records, now: new Date(this.session.now()) }), null);
    }
    return this.restoreTurn({ by: 'goald rollback', toTurn: turn, target, afterTurn, reason: null, goalPaths: goalPathsOf(records) });
  }

  // Restores a turn's files over what the goal left, records it, and tells the next prompt.
  private async restoreTurn(how: {
    by: GoalRollback['by'];
    toTurn: number;
    target: string;
    afterTurn: number;
    reason: string | null;
    goalPaths: ReadonlySet<string>;
  }): Promise<GoalRollback> {
    const source = this.deps.treeSource;
    const expected = this.trees.current;
    if (source === undefined || expected === null) {
      throw new GoaldError('conflict', `goal ${this.id} cannot restore files here`, 'this goal has no snapshot to restore from yet');
    }
    const { rollBackFiles } = await loadRollbacks();
    const rollback = await rollBackFiles({ source, goalPaths: how.goalPaths, snapshotter: this.deps.snapshotter, expected, target: how.target, by: how.by, toTurn: how.toTurn, afterTurn: how.afterTurn, now: new Date(this.session.now()) });
    return this.tookRollback(rollback, how.reason);
  }

  // The work tree holds a rollback's tree from now on: the next turn's delta starts there; recorded; told.
  private async tookRollback(rollback: GoalRollback, reason: string | null): Promise<GoalRollback> {
    this.trees.restart(rollback.tree);
    this.breakers = afterRestoredTree(this.breakerState(), rollback.tree);
    const { recordRollback } = await loadRollbacks();
    await recordRollback(this.deps.store, this.id, rollback);
    this.rollbackNote = { ...rollback, reason };
    return rollback;
  }

  // `--keep-best`: a turn below the best so far is rolled back to it (when `restore` and the goal goes on);
  // otherwise the turn may become the best. What to record on the turn; nothing when the guard is off.
  private async guardRegression(
    turn: number,
    tree: string,
    checks: CheckResult[],
    restore: { turnFiles: readonly string[] } | null,
  ): Promise<{ keepBest?: TurnRecord['keepBest'] }> {
    if (this.settings.keepBest !== true) return {};
    const score = scoreOf(checks);
    const best = this.best;
    const view = (rolledBackTo: number | null, current: BestTurn, refused?: string): { keepBest: TurnRecord['keepBest'] } => ({
      keepBest: {
        passingChecks: score.passingChecks,
        passingTests: score.passingTests,
        best: { turn: current.turn, tree: current.tree, ...current.score },
        rolledBackTo,
        ...(refused === undefined ? {} : { refused }),
      },
    });
    if (best !== null && fellBelow(score, best)) {
      if (restore === null) return view(null, best);
      const reason = `${describeScore(score, checks.length)}, against ${describeScore(best.score, checks.length)} at turn ${best.turn}`;
      try {
        const { goalPathsOf } = await loadRollbacks();
        const goalPaths = goalPathsOf(await readTurnRecords(this.goalDir), restore.turnFiles);
        await this.restoreTurn({ by: 'keep-best', toTurn: best.turn, target: best.tree, afterTurn: turn, reason, goalPaths });
      } catch (error) {
        // The user edited one of the files meanwhile: theirs wins; the guard says so and goes on.
        if (isGoaldError(error) && error.code === 'conflict') return view(null, best, error.message);
        throw error;
      }
      if (this.bestChecks !== null) this.lastChecks = this.bestChecks;
      return view(best.turn, best);
    }
    const next = nextBest(best, { turn, tree, score });
    if (next !== best) {
      this.best = next;
      this.bestChecks = checks;
    }
    return view(null, next);
  }

  /** What the tamper guard works with (turn-guard.ts): the settings as they stand now. */
  private guardContext(): TurnGuardContext {
    const { snapshotter, goaldPaths } = this.deps;
    return { settings: this.settings, snapshotter, goaldPaths, signal: this.session.abortSignal, isInterrupted: () => this.session.isInterrupted() };
  }

  /** The evaluator and what it is told besides the turn (the settings and verdict as they stand now). */
  private judge(): Judge {
    const { evaluator, snapshotter } = this.deps;
    return { evaluator, snapshotter, settings: this.settings, previousVerdict: this.lastVerdict, signal: this.session.abortSignal };
  }

  /** How the goal's checks run (turn-checks.ts): the runner and sandbox as they stand now. */
  private checksContext(): ChecksContext {
    const { deps, session } = this;
    return { checks: deps.checks, sandbox: () => deps.sandbox?.forChecks() ?? null, goalDir: this.goalDir, signal: session.abortSignal, isInterrupted: () => session.isInterrupted() };
  }

  /** Ends the goal as `workspace-gone` when its directory was removed; true when it did. */
  private failIfWorkspaceGone(): boolean {
    const { workspace } = this.settings;
    if (existsSync(workspace)) return false;
    const message = `the workspace ${workspace} no longer exists`;
    this.session.send({ type: 'goal.fail', failure: { reason: 'workspace-gone', message } });
    return true;
  }

  /** The breakers' state; a fresh one from the current tree for a goal restored before its pre-check. */
  private breakerState(): BreakerState {
    this.breakers ??= initialBreakerState(this.trees.current ?? '');
    return this.breakers;
  }

  /** The fields every record of a turn shares: who, when, and breakers and status as they stand now. */
  private turnRecordBase(turn: number, startedAt: number): TurnRecordBase {
    const finishedAt = this.session.now();
    const sandbox = this.deps.sandbox?.use;
    return { goalId: this.id, turn, startedAt, finishedAt, breakers: this.breakerState(), status: this.session.status, ...(sandbox ? { sandbox } : {}), guidance: this.turnGuidance };
  }

  // The next turn starts as soon as this one is recorded: the goal goes on, with no cool-down to wait out,
  // no pause to take and no run that ends here (oneTurn).
  private nextTurnStartsAtOnce(): boolean {
    const { session } = this;
    return !this.oneTurnRun && session.phase === 'coolingDown' && !session.isPausePending && this.settings.limits.cooldownMs === 0;
  }

  private takePendingSettings(): void {
    if (this.pendingSettings === null) return;
    const { settings, checks, evaluator } = this.pendingSettings;
    this.pendingSettings = null;
    this.settings = settings;
    this.deps.checks = checks;
    this.deps.evaluator = evaluator;
  }
}
