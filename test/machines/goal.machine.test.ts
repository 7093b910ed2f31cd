// The goal machine, driven only by events: every state and every failure reason is reached over paths
// enumerated by xstate/graph, each path is replayed on a real actor, and snapshots survive a JSON round trip.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActor, getNextSnapshot, type Actor, type SnapshotFrom } from 'xstate';
import { getShortestPaths, getSimplePaths, type StatePath } from 'xstate/graph';
import {
  BREAKER_NAMES,
  FAILURE_REASONS,
  goalMachine,
  phaseOf,
  statusOf,
  type FailureReason,
  type GoalEvent,
  type GoalInput,
} from '../../machines/goal.machine.js';

type GoalActor = Actor<typeof goalMachine>;
type GoalSnapshot = SnapshotFrom<typeof goalMachine>;
type GoalPath = StatePath<GoalSnapshot, GoalEvent>;

const INPUT: GoalInput = { goalId: 'g1' };

// Breakers the supervisor projects before a turn (see src/breakers refuseNextTurn).
const REFUSABLE: FailureReason[] = ['max-turns', 'token-budget', 'cost-budget', 'wall-clock'];
// Failures the shell (or, for cluster-error, a cluster worker) sends as goal.fail.
const SHELL_FAILURES: FailureReason[] = ['agent-missing', 'workspace-gone', 'storage', 'cluster-error'];

const failure = (reason: FailureReason) => ({ reason, message: `${reason} tripped` });

const ev = {
  precheck: (achieved: boolean): GoalEvent => ({ type: 'precheck.finished', achieved, at: 1_000 }),
  started: (turn = 1): GoalEvent => ({ type: 'turn.started', turn, deadline: 10_000 * turn }),
  refused: (reason: FailureReason): GoalEvent => ({ type: 'turn.refused', failure: failure(reason) }),
  finished: (): GoalEvent => ({ type: 'turn.finished' }),
  checked: (): GoalEvent => ({ type: 'checks.finished' }),
  verdict: (
    over: { achieved?: boolean; blocked?: boolean; trip?: FailureReason | null; nextTurnAt?: number } = {},
  ): GoalEvent => ({
    type: 'verdict.received',
    achieved: over.achieved ?? false,
    blocked: over.blocked ?? false,
    trip: over.trip ? failure(over.trip) : null,
    nextTurnAt: over.nextTurnAt ?? 2_000,
  }),
  pause: (now = false): GoalEvent => ({ type: 'goal.pause', now }),
  resume: (at = 3_000): GoalEvent => ({ type: 'goal.resume', at }),
  stop: (): GoalEvent => ({ type: 'goal.stop' }),
  fail: (reason: FailureReason): GoalEvent => ({ type: 'goal.fail', failure: failure(reason) }),
  usageLimited: (resumeAt = 9_000): GoalEvent => ({ type: 'usage.limited', resumeAt }),
  recovered: (at = 4_000): GoalEvent => ({ type: 'daemon.recovered', at }),
  timer: (at = 9_000): GoalEvent => ({ type: 'timer.fired', timer: 'usage-reset', at }),
  reopened: (turn = 3, at = 5_000): GoalEvent => ({ type: 'goal.reopened', turn, at }),
};

/** One sample per distinct behaviour; every breaker trip and shell failure gets its own event. */
const SAMPLE_EVENTS: GoalEvent[] = [
  ev.precheck(false),
  ev.precheck(true),
  ev.started(1),
  ...REFUSABLE.map(ev.refused),
  ev.finished(),
  ev.checked(),
  ev.verdict(),
  ev.verdict({ achieved: true }),
  ev.verdict({ blocked: true }),
  ...BREAKER_NAMES.map((trip) => ev.verdict({ trip })),
  ev.pause(false),
  ev.pause(true),
  ev.resume(),
  ev.stop(),
  ...SHELL_FAILURES.map(ev.fail),
  ev.usageLimited(),
  ev.recovered(),
  ev.timer(),
  ev.reopened(),
  ev.reopened(0),
];

const ALL_PHASES = ['preparing', 'coolingDown', 'running', 'checking', 'evaluating', 'paused', 'achieved', 'failed'];

function start(input: GoalInput = INPUT): GoalActor {
  return createActor(goalMachine, { input }).start();
}

function send(actor: GoalActor, ...events: GoalEvent[]): GoalActor {
  for (const event of events) actor.send(event);
  return actor;
}

function phase(actor: GoalActor): string {
  return phaseOf(actor.getSnapshot().value);
}

/** value + context: what must be identical between two actors that saw the same events. */
function essence(snapshot: GoalSnapshot): unknown {
  return { value: snapshot.value, status: snapshot.status, context: snapshot.context };
}

/** Events that bring a fresh actor to each non-final situation. */
const REACH: Record<string, GoalEvent[]> = {
  preparing: [],
  coolingDown: [ev.precheck(false)],
  running: [ev.precheck(false), ev.started()],
  checking: [ev.precheck(false), ev.started(), ev.finished()],
  evaluating: [ev.precheck(false), ev.started(), ev.finished(), ev.checked()],
  'paused (requested)': [ev.precheck(false), ev.pause()],
  'paused (--now)': [ev.precheck(false), ev.started(), ev.pause(true)],
  'paused (blocked)': [
    ev.precheck(false),
    ...[1, 2, 3].flatMap((n) => [ev.started(n), ev.finished(), ev.checked(), ev.verdict({ blocked: true })]),
  ],
  'paused (usage-limited)': [ev.precheck(false), ev.started(), ev.usageLimited()],
};

describe('goal machine graph', () => {
  const paths: GoalPath[] = getShortestPaths(goalMachine, { input: INPUT, events: SAMPLE_EVENTS });

  it('enumerates a bounded state space', () => {
    expect(paths.length).toBeGreaterThan(ALL_PHASES.length);
    expect(paths.length).toBeLessThan(5_000);
  });

  it.each(ALL_PHASES)('reaches %s', (name) => {
    expect(paths.some((path) => phaseOf(path.state.value) === name)).toBe(true);
  });

  it.each([...FAILURE_REASONS])('reaches failed with reason %s', (reason) => {
    const hit = paths.find((path) => path.state.value === 'failed' && path.state.context.failure?.reason === reason);
    expect(hit).toBeDefined();
    expect(hit?.state.status).toBe('done');
    expect(hit?.state.context.failure?.message).toBeTruthy();
  });

  it('holds its invariants in every reachable state', () => {
    for (const { state } of paths) {
      const { context } = state;
      const status = statusOf(state.value);
      expect(context.failure === null).toBe(status !== 'failed');
      expect(state.status === 'done').toBe(status === 'achieved' || status === 'failed');
      expect(context.blockedStreak).toBeLessThanOrEqual(context.blockedLimit);
      if (status === 'active' || status === 'paused') {
        expect(context.pauseReason === null).toBe(status === 'active');
        expect(context.resumeAt === null).toBe(context.pauseReason !== 'usage-limited');
      }
      if (phaseOf(state.value) === 'coolingDown') expect(context.pausePending).toBe(false);
    }
  });

  it('keeps every final state inert, even under the pure transition function', () => {
    // A running actor ignores events once done; getNextSnapshot does not check that, so this catches
    // handlers (e.g. on the root) that would still rewrite an outcome.
    const finals = paths.filter((path) => path.state.status === 'done');
    expect(finals.length).toBeGreaterThan(FAILURE_REASONS.length);
    for (const { state } of finals) {
      for (const event of SAMPLE_EVENTS) {
        expect(essence(getNextSnapshot(goalMachine, state, event))).toEqual(essence(state));
      }
    }
  });

  it('replays every path on a real actor to the same snapshot', () => {
    for (const path of paths) {
      const actor = send(start(), ...path.steps.map((step) => step.event));
      expect(essence(actor.getSnapshot())).toEqual(essence(path.state));
    }
  });

  it('achieves only on a met precheck or a met verdict', () => {
    const lean: GoalEvent[] = [
      ev.precheck(false),
      ev.precheck(true),
      ev.started(1),
      ev.finished(),
      ev.checked(),
      ev.verdict(),
      ev.verdict({ achieved: true }),
      ev.verdict({ achieved: true, trip: 'stagnation' }),
      ev.pause(true),
      ev.resume(),
    ];
    const toAchieved = getSimplePaths(goalMachine, {
      input: INPUT,
      events: lean,
      toState: (snapshot) => snapshot.value === 'achieved',
    });
    expect(toAchieved.length).toBeGreaterThan(0);
    for (const path of toAchieved) {
      const last = path.steps.at(-1)?.event;
      expect(last && (last.type === 'precheck.finished' || last.type === 'verdict.received') && last.achieved).toBe(
        true,
      );
    }
  });

  it('continues identically after a JSON round trip at every step of every path', () => {
    for (const path of paths) {
      const events = path.steps.map((step) => step.event);
      for (let cut = 0; cut <= events.length; cut++) {
        const original = send(start(), ...events.slice(0, cut));
        const persisted: unknown = JSON.parse(JSON.stringify(original.getPersistedSnapshot()));
        const restored = createActor(goalMachine, {
          snapshot: persisted as GoalSnapshot,
          input: INPUT,
        }).start();
        for (const event of events.slice(cut)) {
          original.send(event);
          restored.send(event);
          expect(essence(restored.getSnapshot())).toEqual(essence(original.getSnapshot()));
        }
        expect(essence(restored.getSnapshot())).toEqual(essence(path.state));
      }
    }
  });
});

describe('goal machine', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('starts in preparing at turn 0', () => {
    const actor = start({ goalId: 'g9' });
    expect(actor.getSnapshot().value).toEqual({ active: 'preparing' });
    expect(actor.getSnapshot().context).toMatchObject({ goalId: 'g9', turn: 0, blockedLimit: 3, failure: null });
  });

  it('is achieved after 0 turns when the precheck is met', () => {
    const snapshot = send(start(), ev.precheck(true)).getSnapshot();
    expect(snapshot.value).toBe('achieved');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.turn).toBe(0);
    expect(snapshot.context.failure).toBeNull();
  });

  it('cools down before turn 1 when the precheck is not met, then runs', () => {
    const actor = send(start(), ev.precheck(false));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context.nextTurnAt).toBe(1_000);
    send(actor, ev.started(1));
    expect(phase(actor)).toBe('running');
    expect(actor.getSnapshot().context).toMatchObject({ turn: 1, turnDeadline: 10_000 });
  });

  it('runs a full turn and cools down with the verdict deadline', () => {
    const actor = send(start(), ...REACH.evaluating!, ev.verdict({ nextTurnAt: 7_777 }));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context).toMatchObject({ nextTurnAt: 7_777, turnDeadline: null, blockedStreak: 0 });
  });

  it('pauses at the boundary: a pause while running is taken after the verdict', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(false));
    expect(phase(actor)).toBe('running');
    expect(actor.getSnapshot().context.pausePending).toBe(true);
    send(actor, ev.finished(), ev.checked());
    expect(phase(actor)).toBe('evaluating');
    send(actor, ev.verdict());
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({
      pausePending: false,
      pauseReason: 'requested',
      resumeTo: 'coolingDown',
    });
    send(actor, ev.resume(5_000));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: null, nextTurnAt: 5_000 });
  });

  it.each([
    ['preparing', [], ev.precheck(false)],
    ['running', REACH.running!, ev.finished()],
    ['checking', [...REACH.running!, ev.finished()], ev.checked()],
    ['evaluating', [...REACH.running!, ev.finished(), ev.checked()], ev.verdict()],
  ])('a resume before the boundary cancels a pause pending in %s, and nothing else changes', (_name, reach, next) => {
    const actor = send(start(), ...reach, ev.pause(false));
    const before = actor.getSnapshot();
    send(actor, ev.resume(9_999));
    expect(actor.getSnapshot().value).toEqual(before.value);
    expect(actor.getSnapshot().context).toEqual({ ...before.context, pausePending: false });
    send(actor, next);
    expect(phase(actor)).not.toBe('paused');
  });

  it('ignores a resume of an active goal with no pause pending', () => {
    const actor = send(start(), ...REACH.running!);
    const before = actor.getSnapshot();
    send(actor, ev.resume(1));
    expect(actor.getSnapshot().context).toEqual(before.context);
  });

  it.each([
    ['checking', [ev.finished()]],
    ['evaluating', [ev.finished(), ev.checked()]],
  ])('defers a pause asked in %s to the boundary', (_name, more) => {
    const actor = send(start(), ...REACH.running!, ...more, ev.pause(true));
    expect(actor.getSnapshot().context.pausePending).toBe(true);
    send(actor, ...(more.length === 1 ? [ev.checked()] : []), ev.verdict());
    expect(phase(actor)).toBe('paused');
  });

  it('pauses during preparing at the end of the precheck', () => {
    const actor = send(start(), ev.pause(), ev.precheck(false));
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context.resumeTo).toBe('coolingDown');
  });

  it('still achieves a met precheck while a pause is pending', () => {
    expect(send(start(), ev.pause(), ev.precheck(true)).getSnapshot().value).toBe('achieved');
  });

  it('pause --now suspends a running turn and resume returns to running', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(true));
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: 'requested', resumeTo: 'running', turn: 1 });
    send(actor, ev.resume());
    expect(phase(actor)).toBe('running');
    expect(actor.getSnapshot().context).toMatchObject({ turn: 1, turnDeadline: 10_000, pauseReason: null });
    send(actor, ev.finished());
    expect(phase(actor)).toBe('checking');
  });

  it.each([false, true])('pauses in coolingDown straight away (now: %s)', (now) => {
    const actor = send(start(), ev.precheck(false), ev.pause(now));
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: 'requested', resumeTo: 'coolingDown' });
    send(actor, ev.resume());
    expect(phase(actor)).toBe('coolingDown');
  });

  it('keeps a pause reason given with the event', () => {
    const actor = send(start(), ev.precheck(false), { type: 'goal.pause', now: false, reason: 'drift' });
    expect(actor.getSnapshot().context.pauseReason).toBe('drift');
  });

  it('pauses with reason blocked after 3 consecutive blocked verdicts', () => {
    const actor = send(start(), ev.precheck(false));
    for (const n of [1, 2]) {
      send(actor, ev.started(n), ev.finished(), ev.checked(), ev.verdict({ blocked: true }));
      expect(phase(actor)).toBe('coolingDown');
      expect(actor.getSnapshot().context.blockedStreak).toBe(n);
    }
    send(actor, ev.started(3), ev.finished(), ev.checked(), ev.verdict({ blocked: true }));
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: 'blocked', blockedStreak: 3 });
    send(actor, ev.resume());
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context.blockedStreak).toBe(0);
  });

  it('resets the blocked streak on a verdict that is not blocked', () => {
    const turn = (n: number, blocked: boolean) => [
      ev.started(n),
      ev.finished(),
      ev.checked(),
      ev.verdict({ blocked }),
    ];
    const actor = send(
      start(),
      ev.precheck(false),
      ...turn(1, true),
      ...turn(2, true),
      ...turn(3, false),
      ...turn(4, true),
      ...turn(5, true),
    );
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context.blockedStreak).toBe(2);
  });

  it('honours blockedLimit from the input', () => {
    const actor = send(
      start({ goalId: 'g', blockedLimit: 1 }),
      ...REACH.evaluating!,
      ev.verdict({ blocked: true }),
    );
    expect(actor.getSnapshot().context.pauseReason).toBe('blocked');
  });

  it('pauses usage-limited and cools down when the reset timer fires', () => {
    const actor = send(start(), ...REACH.running!, ev.usageLimited(9_000));
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({
      pauseReason: 'usage-limited',
      resumeAt: 9_000,
      turnDeadline: null,
      resumeTo: 'coolingDown',
    });
    send(actor, ev.timer(9_001));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: null, resumeAt: null, nextTurnAt: 9_001 });
  });

  it('ignores the usage timer when paused for another reason', () => {
    const actor = send(start(), ev.precheck(false), ev.pause(), ev.timer());
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context.pauseReason).toBe('requested');
  });

  it('lets the user resume a usage-limited goal early', () => {
    const actor = send(start(), ...REACH.running!, ev.usageLimited(), ev.resume(5_000));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context).toMatchObject({ resumeAt: null, nextTurnAt: 5_000 });
  });

  it('keeps a pause asked while usage-limited: the reset timer leads to a requested pause', () => {
    const actor = send(start(), ...REACH.running!, ev.usageLimited(), ev.pause());
    expect(actor.getSnapshot().context.pausePending).toBe(true);
    send(actor, ev.timer());
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: 'requested', pausePending: false });
    send(actor, ev.resume());
    expect(phase(actor)).toBe('coolingDown');
  });

  it('keeps a boundary pause pending across a usage limit', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(), ev.usageLimited(), ev.timer());
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context.pauseReason).toBe('requested');
  });

  it('drops a pending pause when the user resumes', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(), ev.usageLimited(), ev.resume());
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context.pausePending).toBe(false);
  });

  it.each(Object.entries(REACH))('fails with reason stopped when stopped from %s', (_name, events) => {
    const actor = send(start(), ...events);
    expect(actor.getSnapshot().status).toBe('active');
    send(actor, { type: 'goal.stop', message: 'stopped from the CLI' });
    const snapshot = actor.getSnapshot();
    expect(snapshot.value).toBe('failed');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.failure).toEqual({ reason: 'stopped', message: 'stopped from the CLI' });
    expect(snapshot.context.pausePending).toBe(false);
  });

  it('uses a default message for a stop without one', () => {
    const snapshot = send(start(), ev.stop()).getSnapshot();
    expect(snapshot.context.failure).toEqual({ reason: 'stopped', message: 'stopped by the user' });
  });

  it.each(Object.entries(REACH))('fails with the given reason on goal.fail from %s', (_name, events) => {
    const snapshot = send(start(), ...events, ev.fail('workspace-gone')).getSnapshot();
    expect(snapshot.value).toBe('failed');
    expect(snapshot.context.failure?.reason).toBe('workspace-gone');
  });

  it.each(REFUSABLE)('fails when the next turn is refused by %s', (reason) => {
    const snapshot = send(start(), ev.precheck(false), ev.refused(reason)).getSnapshot();
    expect(snapshot.value).toBe('failed');
    expect(snapshot.context.failure).toEqual(failure(reason));
  });

  it.each([...BREAKER_NAMES])('fails when the verdict carries a %s trip', (reason) => {
    const snapshot = send(start(), ...REACH.evaluating!, ev.verdict({ trip: reason })).getSnapshot();
    expect(snapshot.value).toBe('failed');
    expect(snapshot.context.failure).toEqual(failure(reason));
  });

  it('achieved wins over a trip in the same verdict', () => {
    const snapshot = send(
      start(),
      ...REACH.evaluating!,
      ev.verdict({ achieved: true, trip: 'max-turns' }),
    ).getSnapshot();
    expect(snapshot.value).toBe('achieved');
    expect(snapshot.context.failure).toBeNull();
  });

  it('a trip wins over a blocked verdict and a pending pause', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(), ev.finished(), ev.checked());
    send(actor, ev.verdict({ blocked: true, trip: 'stagnation' }));
    expect(actor.getSnapshot().value).toBe('failed');
    expect(actor.getSnapshot().context.failure?.reason).toBe('stagnation');
  });

  it('a third blocked verdict pauses as blocked even with a pause pending', () => {
    const actor = send(start({ goalId: 'g', blockedLimit: 1 }), ...REACH.running!, ev.pause());
    send(actor, ev.finished(), ev.checked(), ev.verdict({ blocked: true }));
    expect(actor.getSnapshot().context.pauseReason).toBe('blocked');
  });

  it.each(['running', 'checking', 'evaluating'])('daemon.recovered from %s cools down', (name) => {
    const actor = send(start(), ...REACH[name]!, ev.recovered(4_321));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context).toMatchObject({ nextTurnAt: 4_321, turnDeadline: null, turn: 1 });
    send(actor, ev.started(2));
    expect(actor.getSnapshot().context.turn).toBe(2);
  });

  it('daemon.recovered in preparing and coolingDown stays put', () => {
    expect(phase(send(start(), ev.recovered()))).toBe('preparing');
    const cooling = send(start(), ev.precheck(false), ev.recovered(4_321));
    expect(phase(cooling)).toBe('coolingDown');
    expect(cooling.getSnapshot().context.nextTurnAt).toBe(4_321);
  });

  it('takes a pending pause at recovery instead of starting another turn', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(), ev.recovered());
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ pauseReason: 'requested', pausePending: false });
  });

  it('resumes a --now pause recovered after a crash into a fresh turn, not a vanished one', () => {
    const actor = send(start(), ...REACH.running!, ev.pause(true), ev.recovered());
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ resumeTo: 'coolingDown', turnDeadline: null });
    send(actor, ev.resume());
    expect(phase(actor)).toBe('coolingDown');
  });

  it('a reopened goal continues after its last turn: no pre-check, turns keep their numbers', () => {
    const actor = send(start(), ev.reopened(3, 5_000));
    expect(phase(actor)).toBe('coolingDown');
    expect(actor.getSnapshot().context).toMatchObject({ turn: 3, nextTurnAt: 5_000, failure: null });
    send(actor, ev.started(4));
    expect(actor.getSnapshot().context.turn).toBe(4);
    send(actor, ev.finished(), ev.checked(), ev.verdict({ achieved: true }));
    expect(actor.getSnapshot().value).toBe('achieved');
  });

  it('reopens only before the pre-check, and only after at least one turn', () => {
    expect(phase(send(start(), ev.reopened(0)))).toBe('preparing');
    expect(phase(send(start(), ev.reopened(1.5)))).toBe('preparing');
    const cooling = send(start(), ev.precheck(false), ev.reopened(7));
    expect(cooling.getSnapshot().context.turn).toBe(0);
    const running = send(start(), ...REACH.running!, ev.reopened(7));
    expect(phase(running)).toBe('running');
    expect(running.getSnapshot().context.turn).toBe(1);
  });

  it('takes a pause asked before the reopening at the boundary', () => {
    const actor = send(start(), ev.pause(), ev.reopened(2));
    expect(phase(actor)).toBe('paused');
    expect(actor.getSnapshot().context).toMatchObject({ turn: 2, pauseReason: 'requested', pausePending: false });
  });

  it.each(['achieved', 'failed'])('ignores every event once %s', (final) => {
    // xstate's development build warns about each event sent to a finished actor; keep the output clean.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const actor = send(start(), final === 'achieved' ? ev.precheck(true) : ev.stop());
    const before = essence(actor.getSnapshot());
    for (const event of SAMPLE_EVENTS) {
      actor.send(event);
      expect(essence(actor.getSnapshot())).toEqual(before);
    }
    expect(actor.getSnapshot().status).toBe('done');
    warn.mockRestore();
  });

  it('restores a mid-run snapshot from JSON and behaves identically', () => {
    const original = send(
      start({ goalId: 'g2', blockedLimit: 3 }),
      ev.precheck(false),
      ev.started(1),
      ev.finished(),
      ev.checked(),
      ev.verdict({ blocked: true, nextTurnAt: 1_500 }),
      ev.started(2),
      ev.pause(false),
    );
    const json = JSON.stringify(original.getPersistedSnapshot());
    const restored = createActor(goalMachine, {
      snapshot: JSON.parse(json) as GoalSnapshot,
      input: { goalId: 'g2' },
    }).start();
    expect(essence(restored.getSnapshot())).toEqual(essence(original.getSnapshot()));
    expect(restored.getSnapshot().context).toMatchObject({ turn: 2, blockedStreak: 1, pausePending: true });

    const rest: GoalEvent[] = [
      ev.finished(),
      ev.checked(),
      ev.verdict({ blocked: true }),
      ev.resume(6_000),
      ev.started(3),
      ev.finished(),
      ev.checked(),
      ev.verdict({ blocked: true }),
      ev.started(4),
      ev.finished(),
      ev.checked(),
      ev.verdict({ trip: 'repeated-diff' }),
    ];
    for (const event of rest) {
      original.send(event);
      restored.send(event);
      expect(essence(restored.getSnapshot())).toEqual(essence(original.getSnapshot()));
    }
    expect(restored.getSnapshot().value).toBe('failed');
    expect(restored.getSnapshot().context.failure?.reason).toBe('repeated-diff');
  });
});
