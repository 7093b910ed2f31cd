// The goals of a `goald race --foreground` (issue 12): what RaceHost asks of the daemon's goal host
// (RaceGoals), done in this process instead. Each member is an ordinary worktree goal owned by this
// process, as `goald start --worktree --foreground` makes it: its own worktree and branch (so the members
// never share a workspace), its record in state.json, its event log, its supervisor here.

import { toJson } from '../../state/index.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { EventSubscription, StartGoalRequest, StartGoalResponse } from '../daemon/types.js';
import { GoaldError } from '../errors.js';
import { createEventLogObserver } from '../supervisor/event-log-writer.js';
import { buildSupervisor, newGoalRecord, prepareGoal } from '../supervisor/launch.js';
import type { GoalOutcome, GoalSupervisor } from '../supervisor/supervisor.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { abandonWorktree, isolateInWorktree } from '../worktree/worktree-goal.js';
import type { RaceGoals } from './race-host.js';

interface Member {
  supervisor: GoalSupervisor;
  done: Promise<GoalOutcome | null>;
  events: ProgressEvent[];
  listeners: Set<(event: ProgressEvent) => void>;
}

/** RaceGoals run by this process: every member's supervisor lives here. */
export class ForegroundGoals implements RaceGoals {
  private readonly store: Store;
  private readonly env: NodeJS.ProcessEnv;
  private readonly onEvent: (goalId: string, event: ProgressEvent) => void;
  private readonly crashed: (goalId: string, error: unknown) => void;
  private readonly members = new Map<string, Member>();
  private interrupted: string | null = null;

  constructor(options: {
    store: Store;
    env: NodeJS.ProcessEnv;
    onEvent: (goalId: string, event: ProgressEvent) => void;
    crashed: (goalId: string, error: unknown) => void;
  }) {
    this.store = options.store;
    this.env = options.env;
    this.onEvent = options.onEvent;
    this.crashed = options.crashed;
  }

  async startGoal(request: StartGoalRequest): Promise<StartGoalResponse> {
    if (this.interrupted !== null) throw new GoaldError('conflict', `the race was ${this.interrupted}`, 'start it again');
    const inPlace = await prepareGoal({ condition: request.condition, dir: request.dir, flags: request.flags, env: this.env });
    const prepared = await isolateInWorktree(inPlace, this.store.home);
    const goal = newGoalRecord(prepared.settings, { kind: 'foreground', pid: process.pid }, {
      ...(prepared.goalId === undefined ? {} : { id: prepared.goalId }),
      ...(prepared.worktree === undefined ? {} : { worktree: prepared.worktree }),
    });
    goal.request = toJson({ condition: request.condition ?? null, flags: request.flags, env: request.env });
    const events: ProgressEvent[] = [];
    const listeners = new Set<(event: ProgressEvent) => void>();
    const tell = (event: ProgressEvent): void => {
      events.push(event);
      this.onEvent(goal.id, event);
      for (const listener of [...listeners]) listener(event);
    };
    let supervisor: GoalSupervisor;
    try {
      // Its workspace is its own worktree: no other goal can be live there, so nothing is checked first.
      await this.store.addGoal(goal, () => true);
      supervisor = await buildSupervisor({
        store: this.store,
        goal,
        prepared,
        observers: [createEventLogObserver(this.store.goalDir(goal.id)), { onEvent: tell }],
        owner: 'foreground',
      });
    } catch (error) {
      await this.store.update((state) => void (state.goals = state.goals.filter((other) => other.id !== goal.id))).catch(() => undefined);
      await abandonWorktree(prepared, this.store.home);
      throw error;
    }
    const done = supervisor.run().catch((error: unknown) => {
      // A supervisor that crashed still ends its member for the race (else the race would wait forever).
      tell({ type: 'goal.finished', id: goal.id, status: 'failed', reason: null, breaker: null, turns: 0, tokens: 0 });
      this.crashed(goal.id, error);
      return null;
    });
    this.members.set(goal.id, { supervisor, done, events, listeners });
    return { goal, queued: false, warnings: prepared.warnings };
  }

  async stopGoal(ref: string): Promise<GoalRecord> {
    const member = this.members.get(ref);
    if (member) {
      member.supervisor.stop('stopped by the race');
      await member.done;
    }
    return this.getGoal(ref);
  }

  async subscribe(ref: string): Promise<EventSubscription> {
    const member = this.members.get(ref);
    if (!member) throw new GoaldError('not-found', `no member goal ${ref} in this race`);
    const finished = member.events.some((event) => event.type === 'goal.finished');
    return {
      past: [...member.events],
      finished,
      follow: (listener) => {
        member.listeners.add(listener);
        return () => member.listeners.delete(listener);
      },
    };
  }

  async getGoal(ref: string): Promise<GoalRecord> {
    const goal = (await this.store.read()).goals.find((candidate) => candidate.id === ref);
    if (!goal) throw new GoaldError('not-found', `no goal ${ref}`, 'list goals with: goald status');
    return goal;
  }

  /** Ctrl-C / SIGTERM: no member starts any more and the running ones are stopped (recorded as stopped). */
  interrupt(why: string): void {
    this.interrupted ??= why;
    for (const member of this.members.values()) member.supervisor.stop(why);
  }

  /** Resolves once every member's supervisor has returned. */
  async settled(): Promise<void> {
    await Promise.all([...this.members.values()].map((member) => member.done));
  }

}
