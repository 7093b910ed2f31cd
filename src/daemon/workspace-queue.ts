// One live goal per workspace: a new goal runs at once when its workspace is free, waits in the
// workspace's queue behind the live goal, or is refused; when a goal ends, the oldest queued goal of its
// workspace starts. Every decision runs in one admission queue, so two never both take a free workspace.

import { toJson } from '../../state/index.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { Clock } from '../clock.js';
import { GoaldError } from '../errors.js';
import { isProcessAlive } from '../process/process-identity.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import { loadGoalRuntime } from './load-goal-runtime.js';
import { markGoalFailed } from './mark-goal-failed.js';
import { isLiveGoal } from './resolve-goal.js';
import { SerialQueue } from './serial-queue.js';
import type { StartGoalRequest } from './types.js';

/** The phase of a goal waiting in its workspace's queue. */
export const QUEUED_PHASE = 'queued';

/** Whether a goal is owned by a live foreground process: not ours to run or control. */
export function isForeignLive(goal: GoalRecord): boolean {
  return goal.owner?.kind === 'foreground' && goal.owner.pid !== process.pid && isProcessAlive(goal.owner.pid);
}

export interface AdmitOptions {
  /** Queue behind a live goal of the workspace (else refuse with a conflict). */
  queue: boolean;
  loopId: string | null;
  /** Neither queue nor refuse when the workspace is busy: store nothing and return `goal: null`. */
  waitIfBusy?: boolean;
}

export type Admission = { goal: GoalRecord; queued: boolean } | { goal: null; queued: false };

export interface WorkspaceQueueOptions {
  store: Store;
  clock: Clock;
  log: (line: string) => void;
  /** Whether this daemon runs the goal now. */
  isRunning(goalId: string): boolean;
  /** True once the daemon is shutting down: nothing more starts. */
  isClosing(): boolean;
  /** Runs an admitted goal under this daemon. */
  launch(goal: GoalRecord, prepared: PreparedGoal): Promise<void>;
  /** Rebuilds a goal's collaborators from its stored settings (a queued goal left by an earlier daemon). */
  materialize(goal: GoalRecord): Promise<PreparedGoal>;
}

/** The daemon's workspace queues: admission of new goals and the start of queued ones. */
export class WorkspaceQueue {
  private readonly options: WorkspaceQueueOptions;
  private readonly admission = new SerialQueue();
  /** Prepared goals waiting in a workspace queue (kept in memory; rebuilt from the store after a restart). */
  private readonly prepared = new Map<string, PreparedGoal>();

  constructor(options: WorkspaceQueueOptions) {
    this.options = options;
  }

  /** Registers a prepared goal: runs it now, queues it behind the workspace's live goal, or refuses. */
  admit(prepared: PreparedGoal, request: StartGoalRequest, options: AdmitOptions): Promise<Admission> {
    return this.admission.run(async () => {
      const { newGoalRecord } = await loadGoalRuntime();
      const goal = newGoalRecord(prepared.settings, { kind: 'daemon', pid: process.pid }, {
        ...(options.loopId ? { loopId: options.loopId } : {}),
        ...(prepared.goalId === undefined ? {} : { id: prepared.goalId }),
        ...(prepared.worktree === undefined ? {} : { worktree: prepared.worktree }),
      });
      goal.request = toJson({ condition: request.condition ?? null, flags: request.flags, env: request.env });
      // null (nothing added): the workspace is busy and the caller would rather wait for it than queue.
      const queued = await this.options.store.addGoal(goal, (stored) => {
        const busy = stored.filter((other) => other.workspace === goal.workspace && isLiveGoal(other));
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
        return blocking.length > 0;
      });
      if (queued === null) return { goal: null, queued: false };
      if (queued) {
        this.prepared.set(goal.id, prepared);
        this.options.log(`goal ${goal.id} queued in ${goal.workspace}`);
      } else {
        await this.options.launch(goal, prepared);
      }
      return { goal, queued };
    });
  }

  /** Starts the oldest queued goal of the workspace, unless a goal holds it; one that cannot start fails. */
  startNext(workspace: string): Promise<void> {
    return this.admission.run(async () => {
      if (this.options.isClosing()) return;
      const { goals } = await this.options.store.read();
      const live = goals.filter((goal) => goal.workspace === workspace && isLiveGoal(goal));
      if (live.some((goal) => goal.phase !== QUEUED_PHASE && (this.options.isRunning(goal.id) || isForeignLive(goal)))) return;
      const candidate = live
        .filter((goal) => goal.phase === QUEUED_PHASE)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
      if (!candidate) return;
      try {
        const prepared = this.prepared.get(candidate.id) ?? (await this.options.materialize(candidate));
        this.prepared.delete(candidate.id);
        await this.options.store.update((state) => {
          const goal = state.goals.find((other) => other.id === candidate.id);
          if (goal) {
            goal.phase = 'preparing';
            goal.owner = { kind: 'daemon', pid: process.pid };
          }
        });
        await this.options.launch({ ...candidate, phase: 'preparing' }, prepared);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.options.log(`queued goal ${candidate.id} could not start: ${message}`);
        await markGoalFailed(this.options.store, candidate.id, 'workspace-gone', message, new Date(this.options.clock.now()));
        void this.startNext(workspace); // not awaited: it queues behind this very admission step
      }
    });
  }

  /** Forgets a queued goal that was stopped before it started. */
  drop(goalId: string): void {
    this.prepared.delete(goalId);
  }
}
