// The order of one goal's writes around its turns: each turn's record goes to turns.jsonl (fsync) and the
// goal's progress to state.json before anything of the next step happens, and state.json never says a turn
// ended that turns.jsonl does not hold. Three writes can be under way at once — the pre-check's record,
// stored behind turn 1's start; the agent's spawn record, written beside the agent; the last turn's line,
// flushed beside the next prompt's making — and each step waits for the ones it must follow. The supervisor
// (supervisor.ts) calls these at its steps; a failed write rejects the step that waits for it, which ends
// the goal as `storage` (GoalSession.failOnStorageError).

import { appendTurnRecord, writeTurnRecord } from '../../state/turn-log.js';
import type { GoalSession } from './goal-session.js';
import type { TurnRecord } from './types.js';

export class TurnWrites {
  /**
   * The writes of the goal's record made while a turn's agent runs (its spawn record, or the turn before's
   * end when no spawn says it: storeTurnEndSoon); the turn waits for them before its own record.
   */
  private agentWrites: Promise<void> = Promise.resolve();
  /** The flush of the last turn's record to turns.jsonl, when the next turn starts at once (record). */
  private lastRecordFlushed: Promise<void> = Promise.resolve();
  /** The pre-check's record when it is stored behind turn 1's start (recordAfterNextSpawn). */
  private precheckStored: Promise<void> = Promise.resolve();
  /**
   * The last turn's record is in turns.jsonl, and state.json is to say it ended with the next agent's spawn
   * record, made durable for it (record's `withNextSpawn`).
   */
  private turnEndUnstored = false;
  /** Turn records stored (the pre-check's included). */
  private stored = 0;

  constructor(
    private readonly session: GoalSession,
    private readonly goalDir: string,
    /** Awaited after each turn record is stored (SupervisorDeps.onTurnRecorded). */
    private readonly onTurnRecorded: ((record: TurnRecord) => Promise<void>) | undefined,
  ) {}

  /** Turn records stored so far (the pre-check's included). */
  get count(): number {
    return this.stored;
  }

  /**
   * Appends the turn record (fsync), then stores the goal's progress: before anything else happens.
   * `withNextSpawn`: the next turn starts at once, and state.json says this one ended with that turn's
   * first write, its spawn record (made durable for it), instead of in a write of its own before the
   * spawn: one journaled write of state.json a turn, not two, and none between a turn's checks and the
   * next agent. The record's line is written before this resolves (so turn.finished speaks of a record in
   * the log) and flushed before the next agent starts (beforeAgent), so nothing a turn spent is lost to a
   * crash: a daemon that dies in between finds the turn's record there and its goal `running` that turn,
   * which is recovery's "recorded just before the crash" case (goal-recovery.ts). Every write of the goal's
   * record in between (a pause, a refusal, the goal's end) is renamed into place only after the append
   * (followTurnLog) and says as much as the spawn record would.
   */
  async record(record: TurnRecord, options: { withNextSpawn?: boolean } = {}): Promise<void> {
    // The spawn record's write runs beside the agent, snapshot and checks; a failed one ends the goal here.
    await this.agentWrites;
    await this.precheckStored; // turns.jsonl keeps the turns' order
    if (options.withNextSpawn !== true) return this.store(record, appendTurnRecord(this.goalDir, record));
    const recorded = writeTurnRecord(this.goalDir, record); // throws when the line cannot be written
    this.session.followTurnLog(recorded);
    this.turnEndUnstored = true;
    this.stored += 1;
    if (this.onTurnRecorded !== undefined) {
      await recorded;
      await this.onTurnRecorded(record);
      return;
    }
    // The line is in turns.jsonl now (its readers see it); its flush runs beside the next prompt's making.
    recorded.catch(() => undefined); // awaited before the next agent starts (beforeAgent) and by settled()
    this.lastRecordFlushed = recorded;
  }

  // The pre-check's record when the goal is not met yet: turn 1 starts at once, and this record is stored
  // just after its agent has started rather than before (the run loop reaches the agent's spawn without
  // waiting on anything, and a setImmediate runs after it). On a start's busy path the journaled write, its
  // lock and its schema pass held the first agent back ~3 ms (of ~85 on two cores). Every write the session
  // makes meanwhile (the spawn record's first) is renamed into place only after this record is in
  // turns.jsonl (followTurnLog). A crash in between leaves the goal as registered, its pre-check to run
  // again; the agent just started is the window every spawn record has, until its write.
  recordAfterNextSpawn(record: TurnRecord): void {
    const soon = new Promise<void>((resolve) => setImmediate(resolve));
    const appended = soon.then(() => appendTurnRecord(this.goalDir, record));
    appended.catch(() => undefined); // awaited by store()
    this.session.followTurnLog(appended);
    const stored = soon.then(() => this.store(record, appended));
    stored.catch(() => undefined); // awaited after turn 1's agent (afterAgent), by the next record and by settled()
    this.precheckStored = stored;
  }

  /** Resolves once the turn before is flushed to turns.jsonl: nothing of a turn starts before, so a crash never loses it. */
  beforeAgent(): Promise<void> {
    return this.lastRecordFlushed;
  }

  /** The agent spawned: the goal's record is stored with its pid, made durable when it also says the turn before ended. */
  storeWithSpawn(): void {
    // Not flushed to the directory otherwise: only a crash of this process leaves the agent running, and the
    // file is whole either way; after a power loss (agent gone too) the turn's start is simply redone.
    this.track(this.session.persist({ durable: this.turnEndUnstored }));
    this.turnEndUnstored = false;
  }

  // The turn before's end, when record() left it to this turn's spawn record: an agent that spawns in
  // runTurn's synchronous part (the command and CLI agents) writes it with that record; one that spawns
  // later (after files of its own) or never gets a write of its own, right after the turn has begun.
  storeTurnEndSoon(): void {
    if (!this.turnEndUnstored) return;
    setImmediate(() => {
      if (!this.turnEndUnstored) return;
      this.turnEndUnstored = false;
      this.track(this.session.persist());
    });
  }

  /** Resolves once the agent's turn may go on to its record: a failed pre-check write ends the goal here (storage), after the turn it let start. */
  afterAgent(): Promise<void> {
    return this.precheckStored;
  }

  /** Every write under way, in order; for the run's end (a goal stopped or paused before turn 1, the workspace gone, no next turn after all). */
  async settled(): Promise<void> {
    await this.precheckStored;
    await this.agentWrites;
    await this.lastRecordFlushed;
  }

  private track(write: Promise<void>): void {
    const all = Promise.all([this.agentWrites, write]).then(() => undefined);
    all.catch(() => undefined); // awaited by the turn's record (record) and by settled()
    this.agentWrites = all;
  }

  // The record is written now and flushed beside the state write, whose rename waits for that flush:
  // state.json never says a turn ended that turns.jsonl does not hold, and the two fsyncs overlap.
  private async store(record: TurnRecord, recorded: Promise<void>): Promise<void> {
    recorded.catch(() => undefined); // awaited just below (a failed flush also fails the state write)
    this.session.followTurnLog(recorded);
    await this.session.persist({ after: recorded });
    await recorded;
    this.stored += 1;
    await this.onTurnRecorded?.(record);
  }
}
