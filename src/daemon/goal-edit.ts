// `goald edit <goal>` in the daemon: the owner changes a goal's contract (limits, checks, evaluator) from
// its next turn, applies a held edit of goal.config.json (`--apply-config`), or reopens a goal that failed
// on a budget breaker with the limit raised (`--resume`: same id, same history, turns keep their numbers,
// the breakers' counters kept). Every change is appended to the goal's edit history.

import { readTurnRecords, toJson } from '../../state/index.js';
import type { GoalEdit, GoalRecord, Store } from '../../state/types.js';
import { refuseNextTurn } from '../breakers/index.js';
import { applyEditFlags, requireSomeEdit } from '../config/apply-edit.js';
import { toDurationText } from '../config/duration.js';
import type { EditFlags } from '../config/edit-options.js';
import { parseStoredSettings } from '../config/settings-schema.js';
import type { GoalSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { BUDGET_BREAKERS, diffSettings, isBudgetBreaker, raisesLimit, type BudgetBreaker } from '../supervisor/contract.js';
import type { PreparedGoal } from '../supervisor/launch.js';
import type { GoalSupervisor, RestoredGoal } from '../supervisor/supervisor.js';
import type { ProgressEvent } from '../supervisor/types.js';
import type { LiveConfig } from './live-config.js';
import { loadGoalRuntime } from './load-goal-runtime.js';
import { isLiveGoal } from './resolve-goal.js';
import { KeyedSerialQueue } from './serial-queue.js';
import type { EditGoalRequest, EditGoalResponse } from './types.js';
import { QUEUED_PHASE } from './workspace-queue.js';

export interface GoalEditorOptions {
  store: Store;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  config: LiveConfig;
  /** The running supervisor of a live goal, or a GoaldError saying why it cannot be controlled. */
  controllable(goal: GoalRecord, action: string): GoalSupervisor;
  /** Whether this daemon still runs the goal (a finished goal's supervisor lingers briefly). */
  isRunning(goalId: string): boolean;
  /** Rebuilds a goal's collaborators from its (edited) stored settings. */
  materialize(goal: GoalRecord): Promise<PreparedGoal>;
  /** Runs a reopened goal under this daemon. */
  launch(goal: GoalRecord, prepared: PreparedGoal, restored: RestoredGoal): Promise<void>;
  /** Records an event in a goal's event log and tells its followers. */
  announce(goalId: string, event: ProgressEvent): void;
}

/** The daemon's `goald edit`: one edit of a goal at a time. */
export class GoalEditor {
  private readonly options: GoalEditorOptions;
  private readonly edits = new KeyedSerialQueue<string>();

  constructor(options: GoalEditorOptions) {
    this.options = options;
  }

  /** Edits a goal; throws a GoaldError (exit 2) for an edit that cannot apply, naming what to do instead. */
  edit(goal: GoalRecord, request: EditGoalRequest): Promise<EditGoalResponse> {
    return this.edits.run(goal.id, async () => {
      const fresh = await this.reread(goal.id);
      const stored = settingsOf(fresh);
      const { settings, used } = applyEditFlags(stored, request.flags);
      if (request.resume) return this.reopen(fresh, request, stored, settings);
      requireSomeEdit(used, request);
      if (!isLiveGoal(fresh) && request.applyConfig && used.length === 0 && fresh.heldConfig) {
        // The goal runs no more turns, but the workspace's file (its declared loops) is put in force.
        await this.options.config.applyHeld(fresh.id, fresh.workspace);
        this.options.log(`goal ${fresh.id}: the held edit of its workspace's config applied by the owner`);
        return { goal: await this.reread(fresh.id), changes: [], resumed: false };
      }
      if (!isLiveGoal(fresh)) throw finishedError(fresh, request.applyConfig);
      if (fresh.phase === QUEUED_PHASE) {
        throw new GoaldError('conflict', `goal ${fresh.id} is queued and has not started`, `edit it once it runs, or stop it (goald stop ${fresh.id}) and start it again`);
      }
      const supervisor = this.options.controllable(fresh, 'edit');
      const applied = request.applyConfig ? await this.options.config.applyHeld(fresh.id, fresh.workspace) : null;
      if (used.length === 0) return { goal: await this.reread(fresh.id), changes: applied?.changes ?? [], resumed: false };
      // Re-read: an applied config changed the stored settings the flags now go on top of.
      const base = settingsOf(await this.reread(fresh.id));
      const next = applyEditFlags(base, request.flags).settings;
      const { createCheckRunner, createGoalEvaluator } = await loadGoalRuntime();
      const evaluator = await createGoalEvaluator(next.evaluator, this.options.env);
      if (request.flags.evaluator !== undefined) await assertIndependentEvaluator(next, evaluator.model);
      supervisor.applySettings(next, { checks: createCheckRunner({ workspace: next.workspace, checks: next.checks, passEnv: next.agent.passEnv }), evaluator });
      const changes = [...(applied?.changes ?? []), ...diffSettings(base, next)];
      const updated = await this.record(fresh.id, base, next, request.flags, false);
      this.options.log(`goal ${fresh.id}: edited by the owner (${changes.map((change) => change.setting).join(', ') || 'no change'}); applies from the next turn`);
      return { goal: updated, changes, resumed: false };
    });
  }

  // `--resume`: a goal that failed on a budget breaker runs again, with the limit that tripped raised.
  private async reopen(goal: GoalRecord, request: EditGoalRequest, before: GoalSettings, after: GoalSettings): Promise<EditGoalResponse> {
    if (goal.status !== 'failed') {
      throw new GoaldError(
        'conflict',
        `goal ${goal.id} is ${goal.status}; --resume reopens only a goal that failed on a budget breaker`,
        isLiveGoal(goal) ? `drop --resume: goald edit ${goal.id} applies from its next turn` : 'start a new goal with goald start',
      );
    }
    const breaker = goal.reason;
    if (!isBudgetBreaker(breaker)) {
      throw new GoaldError(
        'conflict',
        `goal ${goal.id} failed on ${breaker ?? 'an unknown reason'}, not on a budget breaker (${Object.keys(BUDGET_BREAKERS).join(', ')})`,
        'start a new goal with goald start; --resume only raises a budget that ran out',
      );
    }
    if (request.applyConfig) {
      throw new GoaldError('usage', '--apply-config and --resume cannot be combined', `apply the file first (goald edit ${goal.id} --apply-config), then resume`);
    }
    if (!raisesLimit(breaker, before.limits, after.limits)) throw notRaisedError(goal, breaker, before);
    const turns = await readTurnRecords(this.options.store.goalDir(goal.id));
    const lastTurn = turns.at(-1) ?? null;
    if (lastTurn !== null) {
      const refusal = refuseNextTurn(lastTurn.breakers, after.limits, goal.summary.activeMs);
      if (refusal !== null) {
        const flag = isBudgetBreaker(refusal.breaker) ? BUDGET_BREAKERS[refusal.breaker].flag : refusal.breaker;
        throw new GoaldError('usage', `goal ${goal.id} would stop again before its next turn: ${refusal.message}`, `raise ${flag} further`);
      }
    }
    if (this.options.isRunning(goal.id)) throw new GoaldError('conflict', `goal ${goal.id} is still finishing`, 'try again in a moment');
    const { goals } = await this.options.store.read();
    const busy = goals.find((other) => other.id !== goal.id && other.workspace === goal.workspace && isLiveGoal(other));
    if (busy) {
      throw new GoaldError('conflict', `goal ${busy.id} is ${busy.status} in ${goal.workspace}`, `wait for it or stop it (goald stop ${busy.id}), then resume ${goal.id}`);
    }
    // A worktree goal's directory went when it failed: its branch is checked out there again first.
    const worktreeBack = await this.reopenWorktree(goal);
    // Validates the edited settings end to end (agent, evaluator key and model) before anything is stored.
    const prepared = await this.options.materialize({ ...goal, settings: toJson(after) }).catch(async (error: unknown) => {
      await worktreeBack.undo();
      throw error;
    });
    if (request.flags.evaluator !== undefined) await assertIndependentEvaluator(after, prepared.evaluator.model);
    const owner = { kind: 'daemon' as const, pid: process.pid };
    const reopened = await this.record(goal.id, before, after, request.flags, true, (record) => {
      record.status = 'active';
      record.phase = 'coolingDown';
      record.finishedAt = null;
      record.reason = null;
      record.reasonMessage = null;
      record.pauseReason = null;
      record.machine = null;
      record.owner = owner;
      record.runningAgent = null;
    });
    const afterTurn = lastTurn?.turn ?? 0;
    this.options.log(`goal ${goal.id}: reopened by the owner after ${breaker} with ${BUDGET_BREAKERS[breaker].flag} raised; continues after turn ${afterTurn}`);
    await this.options.launch(reopened, prepared, { machine: null, lastTurn, initialTree: turns[0]?.tree ?? null, reopenedAfterTurn: afterTurn });
    return { goal: await this.reread(goal.id), changes: diffSettings(before, after), resumed: true };
  }

  // The failed worktree goal's branch in its worktree again (exit 2 when the branch is gone); `undo` removes it.
  private async reopenWorktree(goal: GoalRecord): Promise<{ undo: () => Promise<void> }> {
    const { worktree } = goal;
    if (worktree === undefined) return { undo: async () => undefined };
    const { reopenGoalWorktree, removeGoalWorktree } = await import('../worktree/goal-worktree.js');
    const made = await reopenGoalWorktree(worktree, goal.id);
    if (made) this.options.log(`goal ${goal.id}: ${worktree.branch} checked out again in ${worktree.dir}`);
    return { undo: async () => void (made ? await removeGoalWorktree(worktree, this.options.store.home) : undefined) };
  }

  // Stores the edited settings, the flags (so a later config re-resolution keeps them) and the history entry.
  private async record(
    goalId: string,
    before: GoalSettings,
    after: GoalSettings,
    flags: EditFlags,
    resumed: boolean,
    also: (record: GoalRecord) => void = () => undefined,
  ): Promise<GoalRecord> {
    const edit: GoalEdit = { at: new Date().toISOString(), by: 'goald edit', changes: diffSettings(before, after), resumed };
    const updated = await this.options.store.update((state) => {
      const record = state.goals.find((candidate) => candidate.id === goalId);
      if (!record) throw new GoaldError('not-found', `goal ${goalId} is gone`);
      record.settings = toJson(after);
      record.request = toJson(withFlags(record.request, flags));
      record.edits = [...(record.edits ?? []), edit];
      also(record);
      return { ...record };
    });
    this.options.announce(goalId, { type: 'goal.edited', id: goalId, by: 'goald edit', settings: edit.changes.map((change) => change.setting), resumed });
    return updated;
  }

  private async reread(goalId: string): Promise<GoalRecord> {
    const goal = (await this.options.store.read()).goals.find((candidate) => candidate.id === goalId);
    if (!goal) throw new GoaldError('not-found', `no goal ${goalId}`, 'list goals with: goald status (or goald history)');
    return goal;
  }
}

function settingsOf(goal: GoalRecord): GoalSettings {
  const parsed = parseStoredSettings(goal.settings);
  if (!parsed.ok) throw new GoaldError('state-corrupt', `goal ${goal.id} has invalid stored settings (${parsed.problem})`);
  return parsed.settings;
}

// The stored start request with the edited flags on top (the same shape admission stores).
function withFlags(request: GoalRecord['request'], flags: EditFlags): Record<string, unknown> {
  const base = request !== undefined && request !== null && typeof request === 'object' && !Array.isArray(request) ? request : {};
  const previous = base.flags;
  const stored = previous !== undefined && previous !== null && typeof previous === 'object' && !Array.isArray(previous) ? previous : {};
  return { ...base, flags: { ...stored, ...flags } };
}

/** The evaluator a goal is edited to must not be the agent's own model (unless the goal allows it). */
export async function assertIndependentEvaluator(settings: GoalSettings, evaluatorModel: string | null): Promise<void> {
  if (settings.evaluator.provider === 'none') return;
  const { assertDifferentModels } = await import('../evaluator/create-evaluator.js');
  assertDifferentModels(settings.agent.model, evaluatorModel, settings.allowSameModel);
}

/** Why a finished goal takes no edit, and how to reopen it when it can be. */
export function finishedError(goal: GoalRecord, applyConfig: boolean): GoaldError {
  if (goal.status === 'failed' && isBudgetBreaker(goal.reason)) {
    const { flag } = BUDGET_BREAKERS[goal.reason];
    return new GoaldError('conflict', `goal ${goal.id} already failed (${goal.reason})`, `reopen it with a higher limit: goald edit ${goal.id} ${flag} <more> --resume`);
  }
  const hint = applyConfig ? 'a finished goal runs no more turns; start a new goal with goald start' : 'start a new goal with goald start';
  return new GoaldError('conflict', `goal ${goal.id} already ${goal.status}${goal.reason ? ` (${goal.reason})` : ''}`, hint);
}

/** `--resume` that does not raise the limit the goal failed on. */
export function notRaisedError(goal: GoalRecord, breaker: BudgetBreaker, before: GoalSettings): GoaldError {
  const { limit, flag } = BUDGET_BREAKERS[breaker];
  const value = before.limits[limit];
  // As the flag takes it: a duration for the wall clock, dollars for the cost budget.
  const shown = value === null ? 'off' : limit === 'wallClockMs' ? toDurationText(value) : String(value);
  return new GoaldError(
    'usage',
    `goal ${goal.id} failed on ${breaker} (limit ${shown}): --resume needs a higher ${flag}`,
    `e.g. goald edit ${goal.id} ${flag} <more than ${shown}> --resume`,
  );
}
