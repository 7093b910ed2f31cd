// The loop runtime: keeps each armed loop's absolute `nextRunAt` deadline, asks the daemon to start a run
// when one falls due, and reports every change of a LoopRecord for the daemon to persist. It never
// touches the store, a workspace or a goal itself, and it reads time only through the Clock.
//
// Protocol with the daemon:
// - `arm(loop)` on start (every persisted loop), on create, and when a loop's definition changes (a config
//   edit). It replaces the armed copy. A record whose `nextRunAt` is null gets the first slot after now
//   (a duration's grid starts at `createdAt`); set it to null when `every` changed. A `stopped` loop is
//   not armed. For a first run right away, `arm` then `fireNow`.
// - After downtime (`nextRunAt` already past when armed), or when a wake finds more than one slot gone by
//   (a suspended machine, a wall-clock jump), `catchUp: 'once'` runs once now and `'skip'` does not; the
//   loop then continues on its cadence and every slot that did not run is added to `skipped`.
// - `onDue(loop)` starts a fresh goal run and answers `'started'`, `'waiting'` (a goal is active in that
//   workspace; the scheduler keeps the one waiting run, `waiting: true`) or `'skipped'` (it cannot start,
//   e.g. the workspace is gone). For `'waiting'` it must queue nothing: the scheduler asks again.
// - A waiting run is retried by `fireNow(id)`: the daemon calls it for each of `waitingLoops(workspace)`
//   when a goal in that workspace ends (and after start-up for loops still waiting in a free workspace).
//   A slot that falls due while a run waits counts as skipped and also retries the waiting run, so a
//   missed release cannot wedge a loop.
// - `onChange(loop)` receives the whole record with the scheduler's fields (SCHEDULER_FIELDS) updated; the
//   daemon merges those into its stored record. Reports of one loop arrive in order, and the scheduler
//   awaits the report that consumes a slot before it calls onDue, so a daemon that persists in onChange
//   never starts a run whose slot is not yet recorded (at most once across a crash).
// - `stopAll()` on shutdown cancels every timer and resolves once the runs being started have been
//   reported; afterwards `arm` and `fireNow` refuse.

import type { LoopRecord } from '../../state/types.js';
import type { Clock } from '../clock.js';
import { GoaldError } from '../errors.js';
import { assertTimezone, missedRuns, nextRunAfter, parseSchedule, type Schedule } from './schedule.js';

export type DueOutcome = 'started' | 'waiting' | 'skipped';

/** The LoopRecord fields the scheduler owns; every other field of a reported record is passed through. */
export const SCHEDULER_FIELDS = ['nextRunAt', 'lastRunAt', 'runs', 'skipped', 'waiting'] as const;
export type SchedulerField = (typeof SCHEDULER_FIELDS)[number];

export interface LoopSchedulerOptions {
  clock: Clock;
  /** Starts a run of the loop (a fresh goal in its workspace). Should not throw: a throw counts as skipped. */
  onDue(loop: LoopRecord): Promise<DueOutcome>;
  /** Persists a changed record (merge SCHEDULER_FIELDS). Awaited; a throw goes to onError. */
  onChange(loop: LoopRecord): void | Promise<void>;
  /** An onDue or onChange that threw. */
  onError?(loop: LoopRecord, error: unknown): void;
  /** IANA time zone cron fields are read in. Default `UTC`. */
  timezone?: string;
  /** Longest single wait before the clock is read again. Default 60 s. */
  recheckMs?: number;
}

export interface LoopScheduler {
  /** Arms (or re-arms) a loop; returns the record as armed (nextRunAt filled in). */
  arm(loop: LoopRecord): LoopRecord;
  /**
   * Cancels a loop's timer; the outcome of a run it is starting is no longer reported. Resolves once that
   * run (if any) has started or given up, so a caller that awaits it knows no run of this arming follows.
   */
  disarm(loopId: string): Promise<void>;
  /** Runs the loop now, off its cadence (nextRunAt is kept); the way to release a waiting run. */
  fireNow(loopId: string): Promise<DueOutcome>;
  /** The armed record, as the scheduler sees it. */
  get(loopId: string): LoopRecord | undefined;
  /** Armed loops with a waiting run, optionally only those of one workspace. */
  waitingLoops(workspace?: string): LoopRecord[];
  /** Cancels every timer; resolves when runs being started have been reported. */
  stopAll(): Promise<void>;
}

// One minute: a wall-clock deadline is re-read at least this often. Node's timers run on a monotonic
// clock, which stands still while a machine sleeps and ignores wall-clock corrections, so one long timer
// could fire hours late; a minute of lateness is within cron's own resolution. It also keeps every wait
// far below setTimeout's limit of 2^31-1 ms (about 24.8 days), past which Node fires after 1 ms.
const RECHECK_MS = 60_000;

interface ArmedLoop {
  record: LoopRecord;
  schedule: Schedule;
  controller: AbortController;
}

/** Creates the loop runtime the daemon arms its loops in (see the protocol at the top of this file). */
export function createLoopScheduler(options: LoopSchedulerOptions): LoopScheduler {
  const { clock, onDue, onChange } = options;
  const timezone = options.timezone ?? 'UTC';
  assertTimezone(timezone);
  const recheckMs = options.recheckMs ?? RECHECK_MS;
  if (!(recheckMs >= 1)) throw new GoaldError('internal', `loop scheduler: recheckMs must be 1 or more, got ${recheckMs}`);

  const armed = new Map<string, ArmedLoop>();
  /** onDue calls in flight, by loop id: one at a time per loop. */
  const starting = new Map<string, Promise<DueOutcome>>();
  /** The tail of each loop's chain of onChange calls, so reports arrive in order. */
  const reports = new Map<string, Promise<void>>();
  /** Everything still running, for stopAll to wait on. */
  const work = new Set<Promise<unknown>>();
  let stopped = false;

  const reportError = (record: LoopRecord, error: unknown): void => {
    try {
      options.onError?.(structuredClone(record), error);
    } catch {
      // An error handler that throws has nowhere left to report to.
    }
  };

  function track<T>(promise: Promise<T>): Promise<T> {
    work.add(promise);
    const forget = (): void => {
      work.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  }

  function assertRunning(): void {
    if (stopped) throw new GoaldError('internal', 'the loop scheduler is stopped', 'create a new scheduler after stopAll()');
  }

  /** Applies a change to the armed record and reports it (no report when nothing changed). */
  function update(entry: ArmedLoop, patch: Partial<Pick<LoopRecord, SchedulerField>>): Promise<void> {
    const next = { ...entry.record, ...patch };
    if (SCHEDULER_FIELDS.every((field) => next[field] === entry.record[field])) return Promise.resolve();
    entry.record = next;
    const copy = structuredClone(next);
    const previous = reports.get(copy.id) ?? Promise.resolve();
    const reported = track(
      previous.then(() => onChange(copy)).then(
        () => undefined,
        (error: unknown) => reportError(copy, error),
      ),
    );
    reports.set(copy.id, reported);
    return reported;
  }

  function arm(loop: LoopRecord): LoopRecord {
    assertRunning();
    // Parsed before anything is cancelled: a bad edit leaves the armed copy running.
    const schedule = loop.stopped ? null : parseSchedule(loop.every);
    cancelTimer(loop.id);
    if (schedule === null) {
      armed.delete(loop.id);
      return structuredClone(loop);
    }
    const entry: ArmedLoop = { record: structuredClone(loop), schedule, controller: new AbortController() };
    armed.set(loop.id, entry);
    const now = clock.now();
    if (Number.isNaN(Date.parse(entry.record.nextRunAt ?? ''))) {
      const created = Date.parse(entry.record.createdAt);
      const anchor = new Date(Number.isNaN(created) ? now : created);
      void update(entry, { nextRunAt: nextRunAfter(schedule, new Date(now), { anchor, timezone }).toISOString() });
    }
    const afterDowntime = Date.parse(entry.record.nextRunAt ?? '') <= now;
    void track(drive(entry, afterDowntime));
    return structuredClone(entry.record);
  }

  function cancelTimer(loopId: string): void {
    armed.get(loopId)?.controller.abort();
  }

  /** Waits for each deadline of one arming and handles it, until the arming is cancelled. */
  async function drive(entry: ArmedLoop, afterDowntime: boolean): Promise<void> {
    const { signal } = entry.controller;
    let missedDeadline = afterDowntime;
    try {
      while (!signal.aborted) {
        const dueAt = Date.parse(entry.record.nextRunAt ?? '');
        const now = clock.now();
        if (now < dueAt) {
          missedDeadline = false;
          await clock.sleep(Math.min(dueAt - now, recheckMs), signal);
          continue;
        }
        await handleDue(entry, now, missedDeadline);
        missedDeadline = false;
      }
    } catch (error) {
      if (!signal.aborted) reportError(entry.record, error);
    }
  }

  /** Consumes the due slot (and any others already gone by), then starts the run the policy allows. */
  async function handleDue(entry: ArmedLoop, now: number, afterDowntime: boolean): Promise<void> {
    const { record, schedule } = entry;
    const slot = new Date(record.nextRunAt ?? now);
    const due = missedRuns(schedule, slot, new Date(now), { timezone });
    const missed = afterDowntime || due > 1;
    const runs = !(missed && record.catchUp === 'skip');
    await update(entry, {
      nextRunAt: nextRunAfter(schedule, new Date(now), { anchor: slot, timezone }).toISOString(),
      skipped: record.skipped + (runs ? due - 1 : due),
    });
    if (runs && !entry.controller.signal.aborted) await trigger(record.id, true);
  }

  /**
   * Starts a run unless one is already starting. A scheduled trigger that finds a run starting or waiting
   * merges into it and counts as skipped (at most one waiting run per loop).
   */
  function trigger(loopId: string, scheduled: boolean): Promise<DueOutcome> {
    const entry = armed.get(loopId);
    if (entry === undefined) return Promise.reject(notArmed(loopId));
    const inFlight = starting.get(loopId);
    if (inFlight !== undefined) {
      if (scheduled) void update(entry, { skipped: entry.record.skipped + 1 });
      return inFlight;
    }
    const attempt = track(startRun(loopId, scheduled && entry.record.waiting));
    starting.set(loopId, attempt);
    return attempt;
  }

  async function startRun(loopId: string, mergesIntoWaiting: boolean): Promise<DueOutcome> {
    // Yield once so `starting` holds this attempt before anything below can re-enter trigger().
    await Promise.resolve();
    const entry = armed.get(loopId);
    if (entry === undefined) {
      starting.delete(loopId);
      return 'skipped';
    }
    if (mergesIntoWaiting) await update(entry, { skipped: entry.record.skipped + 1 });
    const startedAt = clock.now();
    const snapshot = structuredClone(entry.record);
    let outcome: DueOutcome;
    try {
      outcome = await onDue(snapshot);
    } catch (error) {
      reportError(snapshot, error);
      outcome = 'skipped';
    }
    starting.delete(loopId);
    // Re-armed meanwhile: the outcome belongs to the new arming. Disarmed: the loop is gone.
    const current = armed.get(loopId);
    if (current !== undefined) await update(current, outcomePatch(current.record, outcome, startedAt));
    return outcome;
  }

  function notArmed(loopId: string): GoaldError {
    return new GoaldError('not-found', `loop ${loopId} is not armed`, 'arm the loop first (goald loop list shows loops)');
  }

  return {
    arm,
    disarm(loopId) {
      cancelTimer(loopId);
      armed.delete(loopId);
      const inFlight = starting.get(loopId);
      return inFlight === undefined ? Promise.resolve() : inFlight.then(() => undefined, () => undefined);
    },
    fireNow(loopId) {
      if (stopped) return Promise.reject(new GoaldError('internal', 'the loop scheduler is stopped'));
      return trigger(loopId, false);
    },
    get(loopId) {
      const entry = armed.get(loopId);
      return entry === undefined ? undefined : structuredClone(entry.record);
    },
    waitingLoops(workspace) {
      return [...armed.values()]
        .filter((entry) => entry.record.waiting && (workspace === undefined || entry.record.workspace === workspace))
        .map((entry) => structuredClone(entry.record));
    },
    async stopAll() {
      stopped = true;
      for (const entry of armed.values()) entry.controller.abort();
      // Reports made while waiting join `work`; loop until nothing is left.
      while (work.size > 0) await Promise.allSettled([...work]);
      armed.clear();
    },
  };
}

function outcomePatch(record: LoopRecord, outcome: DueOutcome, startedAt: number): Partial<Pick<LoopRecord, SchedulerField>> {
  switch (outcome) {
    case 'started':
      return { runs: record.runs + 1, lastRunAt: new Date(startedAt).toISOString(), waiting: false };
    case 'waiting':
      return { waiting: true };
    case 'skipped':
      return { skipped: record.skipped + 1, waiting: false };
  }
}
