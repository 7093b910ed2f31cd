// The goal's lifecycle as a pure XState machine: no invoke, no after, no I/O. The supervisor performs
// every side effect and feeds the result back as an event, so a persisted snapshot is plain JSON that
// restores exactly (xstate issue 5331: invoked promises re-run on restore, `after` delays are lost).
// Deadlines are absolute timestamps in context that the shell arms.
//
// This file imports nothing from goald.

import { assign, setup } from 'xstate';

/** Breakers of DESIGN.md's table (plus `permission-denied` for structured agents). */
export const BREAKER_NAMES = [
  'max-turns',
  'token-budget',
  'turn-token-limit',
  'repeated-diff',
  'oscillation',
  'stagnation',
  'evaluator-failures',
  'agent-failures',
  'cost-budget',
  'wall-clock',
  'permission-denied',
  'tamper',
  'no-progress',
] as const;
export type BreakerName = (typeof BREAKER_NAMES)[number];

/** Every way a goal can end as `failed` (`storage`: goald could not write the goal's files: disk full, read-only, I/O error). */
// `cluster-error`: a cluster turn failed on every attempt (its worker could not fetch, check out or push the goal's commits).
export const FAILURE_REASONS = [...BREAKER_NAMES, 'stopped', 'agent-missing', 'workspace-gone', 'storage', 'cluster-error'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** Why a goal is paused. */
export type PauseReason = 'requested' | 'blocked' | 'usage-limited' | 'drift';

export type GoalStatus = 'active' | 'paused' | 'achieved' | 'failed';

export interface GoalFailure {
  reason: FailureReason;
  message: string;
}

export interface GoalContext {
  goalId: string;
  /** Turns started so far (0 before the first). */
  turn: number;
  /** Consecutive `blocked` verdicts, and how many pause the goal. */
  blockedStreak: number;
  blockedLimit: number;
  /** A pause asked for mid-turn: taken at the next turn boundary. */
  pausePending: boolean;
  pauseReason: PauseReason | null;
  /** Where `goal.resume` returns to: `running` only after `pause --now` (the agent was SIGSTOPped). */
  resumeTo: 'running' | 'coolingDown';
  /** Absolute deadlines (ms since epoch) the shell arms. */
  turnDeadline: number | null;
  nextTurnAt: number | null;
  resumeAt: number | null;
  failure: GoalFailure | null;
}

export interface GoalInput {
  goalId: string;
  blockedLimit?: number;
}

export type GoalEvent =
  | { type: 'precheck.finished'; achieved: boolean; at: number }
  | { type: 'turn.started'; turn: number; deadline: number | null }
  | { type: 'turn.refused'; failure: GoalFailure }
  | { type: 'turn.finished' }
  | { type: 'checks.finished' }
  | {
      type: 'verdict.received';
      achieved: boolean;
      blocked: boolean;
      /** A tripped breaker (checked after `achieved`: a met goal is never failed by a breaker). */
      trip: GoalFailure | null;
      /** When the next turn may start (now + cool-down). */
      nextTurnAt: number;
    }
  | { type: 'goal.pause'; now: boolean; reason?: PauseReason }
  | { type: 'goal.resume'; at: number }
  | { type: 'goal.stop'; message?: string }
  | { type: 'goal.fail'; failure: GoalFailure }
  | { type: 'usage.limited'; resumeAt: number }
  | { type: 'daemon.recovered'; at: number }
  | { type: 'timer.fired'; timer: 'usage-reset'; at: number }
  /**
   * A goal that failed on a budget breaker, reopened by the owner with a raised limit (`goald edit
   * --resume`): a fresh machine continues after its last turn instead of running a pre-check. Whether the
   * failure and the edit allow it is decided by the shell (the machine does not know limits).
   */
  | { type: 'goal.reopened'; turn: number; at: number };

export const goalMachine = setup({
  types: {
    context: {} as GoalContext,
    events: {} as GoalEvent,
    input: {} as GoalInput,
  },
  guards: {
    isGoalMet: ({ event }) => event.type === 'verdict.received' && event.achieved,
    hasTrippedBreaker: ({ event }) => event.type === 'verdict.received' && event.trip !== null,
    isBlockedTooOften: ({ context, event }) =>
      event.type === 'verdict.received' && event.blocked && context.blockedStreak + 1 >= context.blockedLimit,
    isPausePending: ({ context }) => context.pausePending,
    isPauseNow: ({ event }) => event.type === 'goal.pause' && event.now,
    isPrecheckMet: ({ event }) => event.type === 'precheck.finished' && event.achieved,
    wasSuspendedMidTurn: ({ context }) => context.resumeTo === 'running',
    isUsageLimited: ({ context }) => context.pauseReason === 'usage-limited',
    hasTurnsBehind: ({ event }) => event.type === 'goal.reopened' && Number.isInteger(event.turn) && event.turn >= 1,
  },
  actions: {
    markPausePending: assign({ pausePending: true }),
    cancelPendingPause: assign({ pausePending: false }),
    recordVerdict: assign(({ context, event }) => {
      if (event.type !== 'verdict.received') return {};
      return {
        blockedStreak: event.blocked ? context.blockedStreak + 1 : 0,
        nextTurnAt: event.nextTurnAt,
        turnDeadline: null,
      };
    }),
    recordTrip: assign(({ event }) => (event.type === 'verdict.received' ? { failure: event.trip } : {})),
    pauseAtBoundary: assign(({ context }) => ({
      pausePending: false,
      pauseReason: context.pauseReason ?? ('requested' as const),
      resumeTo: 'coolingDown' as const,
    })),
    pauseForBlocked: assign({ pausePending: false, pauseReason: 'blocked' as const, resumeTo: 'coolingDown' as const }),
    pauseNow: assign(({ event }) => ({
      pausePending: false,
      pauseReason: event.type === 'goal.pause' ? (event.reason ?? 'requested') : ('requested' as const),
      resumeTo: 'running' as const,
    })),
    pauseIdle: assign(({ event }) => ({
      pausePending: false,
      pauseReason: event.type === 'goal.pause' ? (event.reason ?? 'requested') : ('requested' as const),
      resumeTo: 'coolingDown' as const,
    })),
    // Keeps pausePending: a pause asked for before the limit hit is taken when the usage timer fires.
    pauseForUsage: assign(({ event }) => ({
      pauseReason: 'usage-limited' as const,
      resumeTo: 'coolingDown' as const,
      resumeAt: event.type === 'usage.limited' ? event.resumeAt : null,
      turnDeadline: null,
    })),
    clearPause: assign(({ context, event }) => ({
      // Only the user's resume cancels a pending pause; the usage timer leaves it to be taken on arrival.
      pausePending: event.type === 'timer.fired' ? context.pausePending : false,
      pauseReason: null,
      resumeAt: null,
      blockedStreak: 0,
      nextTurnAt: event.type === 'goal.resume' || event.type === 'timer.fired' ? event.at : null,
    })),
    startTurn: assign(({ event }) =>
      event.type === 'turn.started' ? { turn: event.turn, turnDeadline: event.deadline } : {},
    ),
    recordStop: assign(({ event }) => ({
      failure: {
        reason: 'stopped' as const,
        message: event.type === 'goal.stop' && event.message ? event.message : 'stopped by the user',
      },
      pausePending: false,
    })),
    recordFailure: assign(({ event }) =>
      event.type === 'goal.fail' || event.type === 'turn.refused' ? { failure: event.failure } : {},
    ),
    recordRecovery: assign(({ event }) =>
      event.type === 'daemon.recovered' ? { nextTurnAt: event.at, turnDeadline: null } : {},
    ),
    // After a crash the SIGSTOPped agent of a `pause --now` is gone: resume must start a new turn.
    recordRecoveryWhilePaused: assign({ resumeTo: 'coolingDown' as const, turnDeadline: null }),
    firstTurnNow: assign(({ event }) => (event.type === 'precheck.finished' ? { nextTurnAt: event.at } : {})),
    continueAfterTurn: assign(({ event }) =>
      event.type === 'goal.reopened' ? { turn: event.turn, nextTurnAt: event.at, turnDeadline: null } : {},
    ),
  },
}).createMachine({
  id: 'goal',
  context: ({ input }) => ({
    goalId: input.goalId,
    turn: 0,
    blockedStreak: 0,
    blockedLimit: input.blockedLimit ?? 3,
    pausePending: false,
    pauseReason: null,
    resumeTo: 'coolingDown',
    turnDeadline: null,
    nextTurnAt: null,
    resumeAt: null,
    failure: null,
  }),
  initial: 'active',
  states: {
    // goal.stop and goal.fail live on `active` and `paused`, not on the root: root handlers also apply in
    // the final states under the pure `transition()`/`getNextSnapshot()` (only a running actor ignores
    // events once done), which would let a late stop turn `achieved` into `failed`.
    active: {
      initial: 'preparing',
      on: {
        'usage.limited': { target: 'paused', actions: 'pauseForUsage' },
        // The owner changed their mind before the turn ended: the pause asked for is not taken.
        'goal.resume': { guard: 'isPausePending', actions: 'cancelPendingPause' },
        'goal.stop': { target: 'failed', actions: 'recordStop' },
        'goal.fail': { target: 'failed', actions: 'recordFailure' },
      },
      states: {
        // Turn 0: snapshot + checks (+ verdict) before any agent token is spent.
        preparing: {
          on: {
            'precheck.finished': [
              { guard: 'isPrecheckMet', target: '#goal.achieved' },
              { guard: 'isPausePending', target: '#goal.paused', actions: 'pauseAtBoundary' },
              { target: 'coolingDown', actions: 'firstTurnNow' },
            ],
            'goal.pause': { actions: 'markPausePending' },
            'daemon.recovered': { target: 'preparing' },
            // Before any pre-check: a reopened goal's turns so far stay counted and numbered.
            'goal.reopened': { guard: 'hasTurnsBehind', target: 'coolingDown', actions: 'continueAfterTurn' },
          },
        },
        coolingDown: {
          // A pause still pending on arrival (after daemon.recovered or a usage reset) is taken here,
          // at the boundary, before another turn starts.
          always: { guard: 'isPausePending', target: '#goal.paused', actions: 'pauseAtBoundary' },
          on: {
            'turn.started': { target: 'running', actions: 'startTurn' },
            'turn.refused': { target: '#goal.failed', actions: 'recordFailure' },
            'goal.pause': { target: '#goal.paused', actions: 'pauseIdle' },
            'daemon.recovered': { target: 'coolingDown', actions: 'recordRecovery' },
          },
        },
        running: {
          on: {
            'turn.finished': { target: 'checking' },
            'goal.pause': [
              { guard: 'isPauseNow', target: '#goal.paused', actions: 'pauseNow' },
              { actions: 'markPausePending' },
            ],
            'daemon.recovered': { target: 'coolingDown', actions: 'recordRecovery' },
          },
        },
        checking: {
          on: {
            'checks.finished': { target: 'evaluating' },
            'goal.pause': { actions: 'markPausePending' },
            'daemon.recovered': { target: 'coolingDown', actions: 'recordRecovery' },
          },
        },
        evaluating: {
          on: {
            'verdict.received': [
              { guard: 'isGoalMet', target: '#goal.achieved', actions: 'recordVerdict' },
              { guard: 'hasTrippedBreaker', target: '#goal.failed', actions: ['recordVerdict', 'recordTrip'] },
              { guard: 'isBlockedTooOften', target: '#goal.paused', actions: ['recordVerdict', 'pauseForBlocked'] },
              { guard: 'isPausePending', target: '#goal.paused', actions: ['recordVerdict', 'pauseAtBoundary'] },
              { target: 'coolingDown', actions: 'recordVerdict' },
            ],
            'goal.pause': { actions: 'markPausePending' },
            'daemon.recovered': { target: 'coolingDown', actions: 'recordRecovery' },
          },
        },
      },
    },
    paused: {
      on: {
        'goal.resume': [
          { guard: 'wasSuspendedMidTurn', target: 'active.running', actions: 'clearPause' },
          { target: 'active.coolingDown', actions: 'clearPause' },
        ],
        'timer.fired': { guard: 'isUsageLimited', target: 'active.coolingDown', actions: 'clearPause' },
        // Taken when the usage timer fires (see coolingDown); any other pause needs goal.resume anyway.
        'goal.pause': { guard: 'isUsageLimited', actions: 'markPausePending' },
        'daemon.recovered': { actions: 'recordRecoveryWhilePaused' },
        'goal.stop': { target: 'failed', actions: 'recordStop' },
        'goal.fail': { target: 'failed', actions: 'recordFailure' },
      },
    },
    achieved: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** The top-level status of a machine state value. */
export function statusOf(value: unknown): GoalStatus {
  if (value === 'achieved' || value === 'failed' || value === 'paused') return value;
  return 'active';
}

/** The active substate (`running`, `coolingDown`, ...) or the top-level status. */
export function phaseOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'active' in value) {
    const sub = value.active;
    if (typeof sub === 'string') return sub;
  }
  return 'active';
}
