// The persisted shapes. state.json stays small (goals, loops, machine snapshots); per-turn detail lives
// in each goal's append-only turns.jsonl. Nothing here may hold a secret.

import type { GoalStatus, FailureReason, PauseReason } from '../machines/goal.machine.js';
import type { TamperFinding } from '../src/guard/types.js';

/** JSON value (what a persisted XState snapshot is). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Totals shown in status, history and the final box. */
export interface GoalSummary {
  turns: number;
  tokens: number;
  costUsd: number;
  /** Cumulative files changed since the goal started, with line counts. */
  files: { path: string; added: number | null; deleted: number | null }[];
  /** Files changed beyond the ones `files` lists (it is capped: src/supervisor/goal-summary.ts). */
  filesOmitted?: number;
  lastVerdictReason: string | null;
  remaining: string[];
  checksPassing: number;
  checksFailing: number;
  activeMs: number;
  /** Turns the tamper guard found tampering, and the findings of the latest one (absent before any). */
  tamper?: { turns: number; last: TamperFinding[] };
}

/** The agent process group of the turn in flight, so a restarted daemon can kill leftovers. */
export interface RunningAgent {
  pid: number;
  /** Process start time as the OS reports it (guards against pid reuse). */
  startTime: string | null;
  turn: number;
  /** The GOALD_TURN_TOKEN in the agent's environment: finds the processes that left its group. */
  token?: string;
}

/** A check's process group while it runs (crash recovery kills it like a leftover agent group). */
export interface RunningCheck {
  pid: number;
  startTime: string | null;
  token: string;
}

export interface GoalRecord {
  id: string;
  condition: string;
  workspace: string;
  status: GoalStatus;
  /** Substate for display (`running`, `checking`, `queued`, ...). */
  phase: string;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** The failure reason, or `breaker` name, when status is failed. */
  reason: FailureReason | null;
  reasonMessage: string | null;
  pauseReason: PauseReason | null;
  loopId: string | null;
  /** The resolved settings (no secrets), as plain JSON. */
  settings: Json;
  /** The XState persisted snapshot. */
  machine: Json | null;
  summary: GoalSummary;
  /** Which process runs it: `daemon` or `foreground`, and its pid. */
  owner: { kind: 'daemon' | 'foreground'; pid: number } | null;
  runningAgent: RunningAgent | null;
  /** How it was started (condition, flags, non-secret env), so live config edits can be re-resolved. */
  request?: Json;
  /** The last invalid edit of the workspace's goal.config.json (the last good config stays in force). */
  configError?: string | null;
  /** Why the daemon that last started could not pick this live goal up again (it does not run); absent once it could. */
  notRecovered?: string;
  /** What the goal was started with beyond its settings: the workspace file and the loops it declared. */
  contract?: GoalContract;
  /** An edit of goal.config.json made while a turn ran (or in a turn's delta): never applied on its own. */
  heldConfig?: HeldConfig | null;
  /** Every change of the goal's contract after it started, oldest first (append-only). */
  edits?: GoalEdit[];
  /** A worktree goal's worktree and branch (issue 12, src/worktree/); absent for an in-place goal. */
  worktree?: GoalWorktree;
  /** Every rollback of the goal's files, oldest first (issue 12: `goald rollback`, `--keep-best`). */
  rollbacks?: GoalRollback[];
}

/** What a worktree goal's record says about its worktree and branch (src/worktree/goal-worktree.ts). */
export interface GoalWorktree {
  /** The user's repository (its work tree's top level) the goal was started in. */
  repo: string;
  /** The goal's worktree directory, under GOALD_HOME/worktrees/. */
  dir: string;
  /** The goal's branch, `goald/<id>` (with a suffix when that name was taken). */
  branch: string;
  /** The commit the branch was made from (the user's HEAD at start). */
  base: string;
  /** The author of the turn commits, `Name <email>`. */
  author: string;
  /** A failed goal's branch is deleted too. */
  discardOnFail: boolean;
}

/** One rollback of a goal's files to an earlier turn's snapshot. */
export interface GoalRollback {
  at: string;
  /** The owner's `goald rollback`, or the regression guard (`--keep-best`). */
  by: 'goald rollback' | 'keep-best';
  /** The turn whose files were restored. */
  toTurn: number;
  /** The goal's last turn when it happened. */
  afterTurn: number;
  /** The work tree's snapshot afterwards (the next rollback compares the user's edits with it). */
  tree: string;
  /** Paths written back and paths removed (at most 50 each named; the counts are whole). */
  written: string[];
  removed: string[];
  writtenCount: number;
  removedCount: number;
  /** A worktree goal: the commit its branch was rolled back to, and the one it was at before. */
  commit?: string;
  fromCommit?: string;
}

/** The part of a goal's contract that is not in its settings (issue 9: sealed at start). */
export interface GoalContract {
  /** sha256 of the workspace's goal.config.json as parsed when the goal started (null: no file). */
  configHash: string | null;
  /** The loops that file declared then (plain JSON; null: none). */
  loops: Json;
  sealedAt: string;
}

/** A config edit the daemon holds until the owner applies it (`goald edit <goal> --apply-config`). */
export interface HeldConfig {
  /** sha256 of the held file content, and of the content still in force. */
  hash: string | null;
  inForceHash: string | null;
  since: string;
  /** The turn during which (or in whose delta) the edit was seen; null when seen while a turn ran elsewhere. */
  turn: number | null;
  /** The setting paths the edit would change (`limits.maxTurns`, `checks`, `loops`). */
  settings: string[];
}

/** One setting an edit changed: its path and its value before and after (plain JSON). */
export interface SettingChange {
  setting: string;
  from: Json;
  to: Json;
}

/** One entry of a goal's edit history. */
export interface GoalEdit {
  at: string;
  /** Who changed it: the owner's `goald edit`, a held config applied by the owner, or an edit of the file made while no turn ran. */
  by: 'goald edit' | 'goald edit --apply-config' | 'goal.config.json';
  changes: SettingChange[];
  /** True when the edit reopened a goal that had failed on a budget breaker. */
  resumed: boolean;
}

export interface LoopRecord {
  id: string;
  workspace: string;
  /** The schedule as typed: a duration (`30m`) or a 5-field cron expression. */
  every: string;
  condition: string | null;
  /** Start options (flags) as plain JSON. */
  options: Json;
  source: 'cli' | 'config';
  createdAt: string;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastGoalId: string | null;
  lastOutcome: GoalStatus | null;
  runs: number;
  skipped: number;
  waiting: boolean;
  catchUp: 'once' | 'skip';
  stopped: boolean;
  /** A label (config-declared loops may name themselves). */
  name?: string | null;
  /** The last invalid edit of the workspace's goal.config.json that concerns this loop. */
  configError?: string | null;
}

export interface StateFile {
  version: 1;
  goals: GoalRecord[];
  loops: LoopRecord[];
}

export interface StoreUpdateOptions {
  /**
   * false: for a write only a crash of this process (not of the machine) needs to see, such as the pid of
   * an agent that a power loss kills too. The new file is still flushed before it replaces the old one
   * (never torn), but the rename is not, so after a power loss the previous version may be back. Default true.
   */
  durable?: boolean;
  /**
   * The new file replaces the old only once this has resolved (and not at all when it rejects): for a write
   * that says another file already holds something, such as a turn's end and its record in turns.jsonl.
   * That file's flush then runs beside this one's instead of before it.
   */
  after?: Promise<unknown>;
}

/** A version of state.json a store has seen: its identity (state-seal.ts) and its checked state. */
export interface SeenState {
  identity: string;
  /** The store's own: never to be changed. */
  state: Readonly<StateFile>;
}

/** Told of each new version of state.json a store reads or writes (synchronously; must not throw). */
export type SeenStateListener = (seen: SeenState) => void;

/** Locked, atomic access to state.json. */
export interface Store {
  readonly home: string;
  /** A fresh read of the whole file (no lock). */
  read(): Promise<StateFile>;
  /**
   * read().goals, only those `keep` accepts (no lock): each kept goal is a copy, and the others are neither
   * copied nor, when the file is the one last read or written, parsed again: beside a thousand finished
   * goals, a list of the live ones costs ~2 ms (the file's bytes read and compared) where read() costs ~25.
   */
  readGoals(keep: (goal: Readonly<GoalRecord>) => boolean): Promise<GoalRecord[]>;
  /** Read-modify-write under the cross-process lock; re-reads first, fsyncs after. */
  update<T>(mutate: (state: StateFile) => T, options?: StoreUpdateOptions): Promise<T>;
  /**
   * update() for one goal's record: `mutate` changes that goal only (the hot path of a running goal, which
   * costs the same however many finished goals the home holds); false when the goal is not stored.
   */
  updateGoal(goalId: string, mutate: (goal: GoalRecord) => void, options?: StoreUpdateOptions): Promise<boolean>;
  /**
   * update() that adds one goal (a registration): `admit` sees the goals stored first, not to be changed;
   * it throws to refuse, returns null to add nothing (resolves null), and what else it returns is resolved.
   * Only the new record is checked, whatever the home's history.
   */
  addGoal<T>(goal: GoalRecord, admit: (stored: readonly GoalRecord[]) => T | null, options?: StoreUpdateOptions): Promise<T | null>;
  /** The directory for one goal's own files (turns.jsonl, transcripts, snapshot index/objects). */
  goalDir(goalId: string): string;
  /**
   * Tells `listener` of each new version of state.json this store reads or writes from now on (a write's
   * under the lock, right after its rename), and at once of the version on disk now. One listener at a time.
   */
  watch(listener: SeenStateListener): void;
}
