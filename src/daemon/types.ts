// The daemon's contract between its HTTP server (routes, validation, streaming) and the goal host
// (supervisors, queue, recovery). The server never touches a supervisor directly.

import type { PruneResult } from '../../state/prune-goals.js';
import type { GoalRecord, GoalRollback, LoopRecord, SettingChange } from '../../state/types.js';
import type { EditFlags } from '../config/edit-options.js';
import type { StartFlags } from '../config/resolve-settings.js';
import type { ProgressEvent } from '../supervisor/types.js';
import type { GoalFilter } from './resolve-goal.js';
import type { StartRaceRequest } from '../race/race-host.js';
import type { RaceRecord } from '../race/race-record.js';

/** POST /v1/goals body. Secrets never travel over the socket: API keys come from the daemon's env. */
export interface StartGoalRequest {
  condition?: string;
  /** Absolute directory the user ran `goald start` in (or -C). */
  dir: string;
  flags: StartFlags;
  /** Non-secret environment that config precedence reads (GOALD_*, *_BASE_URL). */
  env: Record<string, string>;
  /** false: refuse instead of queueing when the workspace is busy. */
  queue: boolean;
}

export interface StartGoalResponse {
  goal: GoalRecord;
  queued: boolean;
  warnings: string[];
}

/** POST /v1/goals/:id/edit body (`goald edit`). */
export interface EditGoalRequest {
  /** The edit options' values as the CLI received them (parsed by the daemon, so errors name the flag). */
  flags: EditFlags;
  /** Apply the held edit of the workspace's goal.config.json. */
  applyConfig: boolean;
  /** Reopen a goal that failed on a budget breaker, with the limit that tripped raised. */
  resume: boolean;
}

/** What an edit did: the goal as stored after it, each setting changed (old → new), and whether it reopened. */
export interface EditGoalResponse {
  goal: GoalRecord;
  changes: SettingChange[];
  resumed: boolean;
}

export type { StartRaceRequest } from '../race/race-host.js';

/** POST /v1/loops body (issue: scheduled reruns). */
export interface CreateLoopRequest extends StartGoalRequest {
  every: string;
  catchUp?: 'once' | 'skip';
}

/** POST /v1/prune body: delete finished goals beyond these limits (`goald prune`). */
export interface PruneRequest {
  /** Goals that finished less than this long ago are kept. */
  olderThanMs: number;
  /** The most recently finished goals kept whatever their age. */
  keep: number;
  /** Only say what would be deleted. */
  dryRun: boolean;
}

/** A stream of a goal's progress events: past ones first, then live ones until the goal ends. */
export interface EventSubscription {
  /** Events already recorded (goals/<id>/events.jsonl). */
  past: ProgressEvent[];
  /** Registers a listener for live events; returns the unsubscribe function. */
  follow(listener: (event: ProgressEvent) => void): () => void;
  /** True when the goal has already finished (no live events will come). */
  finished: boolean;
}

/** How a cluster daemon's Redis is (GET /v1/goals carries it): `degraded` when the goals shown are as last read. */
export interface ClusterHealth {
  /** The Redis URL, its password hidden. */
  redis: string;
  degraded: boolean;
  /** When the goals were last read from Redis (ISO time); null before the first read. */
  lastReadAt: string | null;
}

/**
 * What the daemon's goal host offers the server. Every method throws GoaldError for bad input
 * (`not-found`, `ambiguous`, `conflict`, `bad-request`), which the server maps to 4xx.
 */

/** A goal's branch as a repository on this machine holds it: `goald diff` and `goald apply` read it there. */
export interface GoalBranch {
  /** The repository's top level. */
  repo: string;
  /** `goald/<id>` (refs/heads/). */
  branch: string;
  /** The commit the goal started from. */
  base: string;
}

export interface GoalHost {
  listGoals(filter?: GoalFilter): Promise<GoalRecord[]>;
  /** A cluster daemon's Redis, as of the last listGoals (absent for the embedded daemon). */
  clusterHealth?(): ClusterHealth;
  /** Resolves an id or unique prefix. */
  getGoal(idOrPrefix: string): Promise<GoalRecord>;
  startGoal(request: StartGoalRequest): Promise<StartGoalResponse>;
  pauseGoal(idOrPrefix: string, now: boolean): Promise<GoalRecord>;
  resumeGoal(idOrPrefix: string): Promise<GoalRecord>;
  /**
   * Where a goal's branch is in the repository at `dir` (`goald diff`, `goald apply`): a cluster goal's
   * `goald/<id>` is fetched there from its remote first (POST /v1/goals/:id/branch).
   */
  goalBranch(idOrPrefix: string, dir: string): Promise<{ goal: GoalRecord; branch: GoalBranch }>;
  /** Rolls a paused or finished goal's files back to a turn's snapshot (`goald rollback`). */
  rollbackGoal(idOrPrefix: string, toTurn: number): Promise<{ goal: GoalRecord; rollback: GoalRollback }>;
  stopGoal(idOrPrefix: string): Promise<GoalRecord>;
  /** `goald say`: queues guidance for the goal's next turn; `pending` is how many wait. Changes no setting. */
  guideGoal(idOrPrefix: string, text: string): Promise<{ goal: GoalRecord; pending: number }>;
  /** Changes a goal's contract from its next turn, applies a held config edit, or reopens a budget failure. */
  editGoal(idOrPrefix: string, request: EditGoalRequest): Promise<EditGoalResponse>;
  subscribe(idOrPrefix: string): Promise<EventSubscription>;
  listLoops(): Promise<LoopRecord[]>;
  createLoop(request: CreateLoopRequest): Promise<LoopRecord>;
  deleteLoop(idOrPrefix: string): Promise<LoopRecord>;
  /** Fires a loop now, off its cadence (POST /v1/loops/:id/run). */
  runLoop(idOrPrefix: string): Promise<{ loop: LoopRecord; outcome: 'started' | 'waiting' | 'skipped' }>;
  /**
   * Reads the loops the goal.config.json of the workspace containing `dir` declares, arms them and watches
   * the file from then on (POST /v1/loops/sync); resolves with that workspace's config-declared loops.
   */
  syncLoops(dir: string): Promise<LoopRecord[]>;
  /** Deletes finished goals' records and directories beyond the limits (POST /v1/prune). */
  prune(request: PruneRequest): Promise<PruneResult>;
  /** Starts a race of worktree goals (POST /v1/races, `goald race`). */
  startRace(request: StartRaceRequest): Promise<RaceRecord>;
  /** A race by id or unique prefix (GET /v1/races/:id). */
  getRace(idOrPrefix: string): Promise<RaceRecord>;
  /** Daemon facts for /v1/ping. */
  info(): { pid: number; version: string; startedAt: string; home: string; goalsRunning: number };
  /** Asks the daemon to shut down cleanly (POST /v1/daemon/stop). */
  shutdown(): Promise<void>;
}
