import { describe, expect, it } from 'vitest';
import type { LoopRecord } from '../../state/types.js';
import { systemClock, type Clock } from '../../src/clock.js';
import { createLoopScheduler, type DueOutcome, type LoopSchedulerOptions } from '../../src/daemon/loop-scheduler.js';
import { GoaldError } from '../../src/errors.js';
import { makeLoop } from '../state/fixtures.js';

/** Lets every promise chain the last wake started run to its end (they are all microtasks). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Sleeper {
  wakeAt: number;
  wake(): void;
}

/**
 * A Clock whose time moves only when told. `advance` wakes sleepers in deadline order, letting the work
 * each wake starts settle; `jump` moves the wall clock while sleepers keep their time left, as Node's
 * monotonic timers do when the system clock changes.
 */
class ManualClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];
  /** Every wait asked for, in ms. */
  readonly requestedSleeps: number[] = [];

  constructor(start: string) {
    this.current = Date.parse(start);
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.requestedSleeps.push(ms);
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((sleeper) => sleeper !== entry);
        reject(signal?.reason);
      };
      const entry: Sleeper = {
        wakeAt: this.current + ms,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(entry);
    });
  }

  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (;;) {
      const due = this.sleepers.filter((sleeper) => sleeper.wakeAt <= target).sort((a, b) => a.wakeAt - b.wakeAt)[0];
      if (due === undefined) break;
      this.sleepers = this.sleepers.filter((sleeper) => sleeper !== due);
      this.current = Math.max(this.current, due.wakeAt);
      due.wake();
      await settle();
    }
    this.current = target;
    await settle();
  }

  jump(ms: number): void {
    this.current += ms;
    for (const sleeper of this.sleepers) sleeper.wakeAt += ms;
  }
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = '2024-01-01T00:00:00.000Z';

function loopRecord(overrides: Partial<LoopRecord> = {}): LoopRecord {
  return makeLoop('loop-1', { workspace: '/work/repo', every: '45m', condition: 'all tests pass', createdAt: T0, nextRunAt: null, ...overrides });
}

/** A scheduler on a manual clock that records what it was asked and told. */
function harness(
  outcomes: (loop: LoopRecord) => DueOutcome | Promise<DueOutcome> = () => 'started',
  start = T0,
  extra: Partial<LoopSchedulerOptions> = {},
) {
  const clock = new ManualClock(start);
  const dueAt: string[] = [];
  const dueLoops: LoopRecord[] = [];
  const changes: LoopRecord[] = [];
  const log: string[] = [];
  const errors: unknown[] = [];
  const scheduler = createLoopScheduler({
    clock,
    onDue: async (loop) => {
      dueAt.push(new Date(clock.now()).toISOString());
      dueLoops.push(loop);
      log.push(`due ${loop.nextRunAt}`);
      return outcomes(loop);
    },
    onChange: (loop) => {
      changes.push(loop);
      log.push(`change nextRunAt=${loop.nextRunAt} runs=${loop.runs} skipped=${loop.skipped} waiting=${loop.waiting}`);
    },
    onError: (_, error) => errors.push(error),
    ...extra,
  });
  const last = (): LoopRecord => {
    const record = changes.at(-1);
    if (record === undefined) throw new Error('no change reported');
    return record;
  };
  return { clock, scheduler, dueAt, dueLoops, changes, log, errors, last };
}

describe('cadence', () => {
  it('runs a 45m loop at exact 45-minute deadlines from its creation', async () => {
    const { clock, scheduler, dueAt, last } = harness();
    const armed = scheduler.arm(loopRecord());
    expect(armed.nextRunAt).toBe('2024-01-01T00:45:00.000Z');

    await clock.advance(4 * HOUR);
    expect(dueAt).toEqual([
      '2024-01-01T00:45:00.000Z',
      '2024-01-01T01:30:00.000Z',
      '2024-01-01T02:15:00.000Z',
      '2024-01-01T03:00:00.000Z',
      '2024-01-01T03:45:00.000Z',
    ]);
    expect(last()).toMatchObject({
      nextRunAt: '2024-01-01T04:30:00.000Z',
      lastRunAt: '2024-01-01T03:45:00.000Z',
      runs: 5,
      skipped: 0,
      waiting: false,
    });
    await scheduler.stopAll();
  });

  it('runs a cron loop on its matching minutes', async () => {
    const { clock, scheduler, dueAt } = harness(undefined, '2024-01-01T10:07:00.000Z');
    scheduler.arm(loopRecord({ every: '*/15 * * * *' }));
    await clock.advance(HOUR);
    expect(dueAt).toEqual([
      '2024-01-01T10:15:00.000Z',
      '2024-01-01T10:30:00.000Z',
      '2024-01-01T10:45:00.000Z',
      '2024-01-01T11:00:00.000Z',
    ]);
    await scheduler.stopAll();
  });

  it('hands onDue the record with nextRunAt already moved to the following slot', async () => {
    const { clock, scheduler, dueLoops, log } = harness();
    scheduler.arm(loopRecord({ every: '30m' }));
    await clock.advance(30 * MINUTE);
    expect(dueLoops[0]?.nextRunAt).toBe('2024-01-01T01:00:00.000Z');
    // The slot is reported as consumed before the run starts.
    expect(log.slice(-3)).toEqual([
      'change nextRunAt=2024-01-01T01:00:00.000Z runs=0 skipped=0 waiting=false',
      'due 2024-01-01T01:00:00.000Z',
      'change nextRunAt=2024-01-01T01:00:00.000Z runs=1 skipped=0 waiting=false',
    ]);
    await scheduler.stopAll();
  });

  it('never asks for a wait longer than the recheck period, however far the deadline', async () => {
    const { clock, scheduler, dueAt } = harness();
    const armed = scheduler.arm(loopRecord({ every: '60d' }));
    expect(armed.nextRunAt).toBe('2024-03-01T00:00:00.000Z');
    await clock.advance(2 * HOUR);
    expect(dueAt).toEqual([]);
    expect(clock.requestedSleeps.length).toBeGreaterThan(0);
    expect(Math.max(...clock.requestedSleeps)).toBeLessThanOrEqual(MINUTE);
    await scheduler.stopAll();
  });

  it('replaces the armed copy when a loop is armed again', async () => {
    const { clock, scheduler, dueAt } = harness();
    scheduler.arm(loopRecord({ every: '30m' }));
    scheduler.arm(loopRecord({ every: '30m' }));
    scheduler.arm(loopRecord({ every: '1h', nextRunAt: null }));
    await clock.advance(2 * HOUR);
    expect(dueAt).toEqual(['2024-01-01T01:00:00.000Z', '2024-01-01T02:00:00.000Z']);
    expect(clock.pendingSleeps).toBe(1);
    await scheduler.stopAll();
  });

  it('does not arm a stopped loop', async () => {
    const { clock, scheduler, changes } = harness();
    scheduler.arm(loopRecord({ stopped: true }));
    await clock.advance(2 * HOUR);
    expect(clock.pendingSleeps).toBe(0);
    expect(changes).toEqual([]);
    expect(scheduler.get('loop-1')).toBeUndefined();
  });

  it('refuses a loop whose schedule is not valid and keeps the armed copy', async () => {
    const { clock, scheduler, dueAt } = harness();
    scheduler.arm(loopRecord({ every: '30m' }));
    expect(() => scheduler.arm(loopRecord({ every: 'soon' }))).toThrow(GoaldError);
    await clock.advance(30 * MINUTE);
    expect(dueAt).toEqual(['2024-01-01T00:30:00.000Z']);
    await scheduler.stopAll();
  });
});

describe('catch-up after downtime', () => {
  // Down from 21:00 to 00:10: the 30m slots 21:00, 21:30, ..., 00:00 (7) passed.
  const downtime = { every: '30m', nextRunAt: '2023-12-31T21:00:00.000Z' } as const;
  const now = '2024-01-01T00:10:00.000Z';

  it("'once' fires once on arm, not once per missed slot, then keeps the cadence", async () => {
    const { clock, scheduler, dueAt, log, last } = harness(undefined, now);
    scheduler.arm(loopRecord({ ...downtime, catchUp: 'once' }));
    await clock.advance(0);
    expect(dueAt).toEqual([now]);
    expect(last()).toMatchObject({ nextRunAt: '2024-01-01T00:30:00.000Z', runs: 1, skipped: 6, lastRunAt: now });
    expect(log[0]).toBe('change nextRunAt=2024-01-01T00:30:00.000Z runs=0 skipped=6 waiting=false');

    await clock.advance(HOUR);
    expect(dueAt).toEqual([now, '2024-01-01T00:30:00.000Z', '2024-01-01T01:00:00.000Z']);
    await scheduler.stopAll();
  });

  it("'skip' does not fire, moves to the next slot and counts every missed slot", async () => {
    const { clock, scheduler, dueAt, last } = harness(undefined, now);
    scheduler.arm(loopRecord({ ...downtime, catchUp: 'skip' }));
    await clock.advance(0);
    expect(dueAt).toEqual([]);
    expect(last()).toMatchObject({ nextRunAt: '2024-01-01T00:30:00.000Z', runs: 0, skipped: 7 });

    await clock.advance(20 * MINUTE);
    expect(dueAt).toEqual(['2024-01-01T00:30:00.000Z']);
    await scheduler.stopAll();
  });

  it('catches up a cron loop across a weekend once', async () => {
    // Friday 09:00 was due; the daemon comes back on Monday 10:00 (Monday 09:00 also passed).
    const { clock, scheduler, dueAt, last } = harness(undefined, '2024-01-08T10:00:00.000Z');
    scheduler.arm(loopRecord({ every: '0 9 * * 1-5', nextRunAt: '2024-01-05T09:00:00.000Z' }));
    await clock.advance(0);
    expect(dueAt).toEqual(['2024-01-08T10:00:00.000Z']);
    expect(last()).toMatchObject({ nextRunAt: '2024-01-09T09:00:00.000Z', runs: 1, skipped: 1 });
    await scheduler.stopAll();
  });
});

describe('clock jumps', () => {
  it('notices a forward wall-clock jump within the recheck period', async () => {
    const { clock, scheduler, dueAt } = harness();
    scheduler.arm(loopRecord({ every: '2h' }));
    await clock.advance(10 * MINUTE);
    clock.jump(HOUR + 55 * MINUTE); // 02:05 by the wall clock; the timer still thinks 1 minute is left
    await clock.advance(MINUTE);
    expect(dueAt).toEqual(['2024-01-01T02:06:00.000Z']);
    await scheduler.stopAll();
  });

  it('treats a jump over several slots like downtime (catchUp once)', async () => {
    const { clock, scheduler, dueAt, last } = harness();
    scheduler.arm(loopRecord({ every: '2h' }));
    clock.jump(5 * HOUR); // slots 02:00 and 04:00 passed
    await clock.advance(MINUTE);
    expect(dueAt).toEqual(['2024-01-01T05:01:00.000Z']);
    expect(last()).toMatchObject({ nextRunAt: '2024-01-01T06:00:00.000Z', runs: 1, skipped: 1 });
    await scheduler.stopAll();
  });

  it('does not fire early when the wall clock goes back', async () => {
    const { clock, scheduler, dueAt } = harness();
    scheduler.arm(loopRecord({ every: '2h' }));
    await clock.advance(HOUR);
    clock.jump(-24 * HOUR);
    await clock.advance(2 * HOUR);
    expect(dueAt).toEqual([]);
    await clock.advance(24 * HOUR);
    expect(dueAt[0]).toBe('2024-01-01T02:00:00.000Z');
    await scheduler.stopAll();
  });
});

describe('waiting runs', () => {
  it('keeps one waiting run, counts later slots as skipped, and runs on fireNow', async () => {
    let busy = true;
    const { clock, scheduler, dueAt, last } = harness(() => (busy ? 'waiting' : 'started'));
    scheduler.arm(loopRecord({ every: '30m' }));

    await clock.advance(30 * MINUTE);
    expect(last()).toMatchObject({ waiting: true, runs: 0, skipped: 0 });
    expect(scheduler.waitingLoops('/work/repo').map((loop) => loop.id)).toEqual(['loop-1']);
    expect(scheduler.waitingLoops('/elsewhere')).toEqual([]);

    // Two more slots while the workspace is busy: each is skipped (and retries the waiting run).
    await clock.advance(HOUR);
    expect(last()).toMatchObject({ waiting: true, runs: 0, skipped: 2, nextRunAt: '2024-01-01T02:00:00.000Z' });

    // The goal in the workspace ends: the daemon releases the waiting run.
    busy = false;
    await expect(scheduler.fireNow('loop-1')).resolves.toBe('started');
    expect(last()).toMatchObject({
      waiting: false,
      runs: 1,
      skipped: 2,
      lastRunAt: '2024-01-01T01:30:00.000Z',
      nextRunAt: '2024-01-01T02:00:00.000Z', // the cadence is kept
    });
    expect(scheduler.waitingLoops()).toEqual([]);
    expect(dueAt).toHaveLength(4);
    await scheduler.stopAll();
  });

  it('a slot that finds the workspace free again runs the waiting run itself', async () => {
    let busy = true;
    const { clock, scheduler, last } = harness(() => (busy ? 'waiting' : 'started'));
    scheduler.arm(loopRecord({ every: '30m' }));
    await clock.advance(30 * MINUTE);
    busy = false;
    await clock.advance(30 * MINUTE);
    expect(last()).toMatchObject({ waiting: false, runs: 1, skipped: 1 });
    await scheduler.stopAll();
  });

  it("counts 'skipped' outcomes and onDue failures as skipped runs", async () => {
    let calls = 0;
    const { clock, scheduler, errors, last } = harness(() => {
      calls += 1;
      if (calls === 1) return 'skipped';
      throw new Error('workspace gone');
    });
    scheduler.arm(loopRecord({ every: '30m' }));
    await clock.advance(HOUR);
    expect(last()).toMatchObject({ runs: 0, skipped: 2, waiting: false });
    expect(errors).toEqual([new Error('workspace gone')]);
    await scheduler.stopAll();
  });

  it('fireNow while a run is starting returns that run instead of starting another', async () => {
    let release: (outcome: DueOutcome) => void = () => undefined;
    const { scheduler, dueAt, last } = harness(() => new Promise<DueOutcome>((resolve) => (release = resolve)));
    scheduler.arm(loopRecord({ every: '30m' }));
    const first = scheduler.fireNow('loop-1');
    const second = scheduler.fireNow('loop-1');
    await settle();
    release('started');
    await expect(first).resolves.toBe('started');
    await expect(second).resolves.toBe('started');
    expect(dueAt).toHaveLength(1);
    expect(last()).toMatchObject({ runs: 1 });
    await scheduler.stopAll();
  });

  it('fireNow refuses a loop that is not armed', async () => {
    const { scheduler } = harness();
    await expect(scheduler.fireNow('nope')).rejects.toMatchObject({ code: 'not-found' });
  });
});

describe('stopping', () => {
  it('disarm cancels the timer and nothing fires afterwards', async () => {
    const { clock, scheduler, dueAt } = harness();
    scheduler.arm(loopRecord({ every: '30m' }));
    scheduler.arm(loopRecord({ id: 'loop-2', every: '45m' }));
    await clock.advance(0);
    expect(clock.pendingSleeps).toBe(2);
    await scheduler.disarm('loop-1');
    await clock.advance(0);
    expect(clock.pendingSleeps).toBe(1);
    await clock.advance(HOUR);
    expect(dueAt).toEqual(['2024-01-01T00:45:00.000Z']);
    await scheduler.disarm('loop-2');
    await clock.advance(0);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('stopAll cancels every timer, waits for the run being started and reports it', async () => {
    let release: (outcome: DueOutcome) => void = () => undefined;
    const { clock, scheduler, last } = harness(() => new Promise<DueOutcome>((resolve) => (release = resolve)));
    scheduler.arm(loopRecord({ every: '30m' }));
    scheduler.arm(loopRecord({ id: 'loop-2', every: '1h' }));
    await clock.advance(30 * MINUTE); // loop-1's run is now starting

    let stopped = false;
    const stopping = scheduler.stopAll().then(() => (stopped = true));
    await settle();
    expect(clock.pendingSleeps).toBe(0);
    expect(stopped).toBe(false);
    release('started');
    await stopping;
    expect(last()).toMatchObject({ id: 'loop-1', runs: 1 });
    expect(() => scheduler.arm(loopRecord())).toThrow('the loop scheduler is stopped');
    await expect(scheduler.fireNow('loop-1')).rejects.toBeInstanceOf(GoaldError);
  });
});

describe('real time', () => {
  const timeouts = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

  it('fires a 1s loop twice on the system clock and leaves no timer behind', async () => {
    const baseline = timeouts();
    // The system clock, counting the sleeps that are neither finished nor cancelled.
    let sleeping = 0;
    const clock: Clock = {
      now: () => systemClock.now(),
      sleep: async (ms, signal) => {
        sleeping += 1;
        try {
          await systemClock.sleep(ms, signal);
        } finally {
          sleeping -= 1;
        }
      },
    };
    const fired: number[] = [];
    let firedTwice: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => (firedTwice = resolve));
    const scheduler = createLoopScheduler({
      clock,
      onDue: async () => {
        fired.push(Date.now());
        if (fired.length === 2) firedTwice();
        return 'started';
      },
      onChange: () => undefined,
    });
    const createdAt = new Date().toISOString();
    scheduler.arm(loopRecord({ every: '1s', createdAt }));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`fired ${fired.length} times in 5s`)), 5_000);
    });
    try {
      await Promise.race([twice, bound]);
    } finally {
      clearTimeout(timer);
    }
    await scheduler.stopAll();
    const [first = 0, second = 0] = fired;
    expect(second - first).toBeGreaterThanOrEqual(900);
    expect(sleeping).toBe(0);
    expect(timeouts()).toBeLessThanOrEqual(baseline);
  });
});
