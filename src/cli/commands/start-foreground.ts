// `goald start --foreground`: run the goal in this process and print its progress and final box, or JSON
// events with --json. The pre-check's snapshot, and its first check's process (held: it runs nothing of
// the check until registration has admitted the goal), start before the goal is registered.

import { rm } from 'node:fs/promises';
import { isProcessAlive, readTurnRecords } from '../../../state/index.js';
import type { GoalRecord, Store } from '../../../state/types.js';
import type { ConfigFile } from '../../config/schema.js';
import { EXIT, GoaldError } from '../../errors.js';
import { configHash, heldEditError, heldEditOf } from '../../supervisor/contract.js';
import { buildSupervisor, createGoalSnapshotter, newGoalRecord, openHomeStore, prepareGoal } from '../../supervisor/launch.js';
import { createEventLogObserver } from '../../supervisor/event-log-writer.js';
import type { GoalOutcome, GoalSupervisor } from '../../supervisor/supervisor.js';
import type { ProgressEvent, SupervisorObserver } from '../../supervisor/types.js';
import type { ResolvedWorkspace } from '../../workspace/find-workspace.js';
import { withSnapshotUnderWay } from '../../workspace/snapshot.js';
import type { CliIO } from '../io.js';
import { renderFinalBox } from '../render-final-box.js';
import { renderProgressLine } from '../render-progress.js';
import { toStartFlags, type StartOptions } from './start-request.js';
import { createNotifier } from '../../notify/notifier.js';

// One active goal per workspace: registering refuses while a live process runs another goal there, and
// while the workspace's goal.config.json holds an edit made during a turn that nobody approved (the daemon
// refuses the same; a goal started now would be sealed with the agent's edit). `onAdmitted` hears the
// verdict as soon as it is taken, under the state lock, before the record is written.
async function registerGoal(store: Store, goal: GoalRecord, workspaceConfig: ConfigFile | null, onAdmitted: () => void): Promise<void> {
  await store.addGoal(goal, (stored) => {
    if (stored.some((other) => other.workspace === goal.workspace && other.heldConfig)) {
      const held = heldEditOf(stored, goal.workspace, configHash(workspaceConfig));
      if (held !== null) throw heldEditError(goal.workspace, held.goalId);
    }
    const busy = stored.find(
      (other) =>
        other.workspace === goal.workspace &&
        (other.status === 'active' || other.status === 'paused') &&
        other.owner !== null &&
        isProcessAlive(other.owner.pid),
    );
    if (busy) {
      throw new GoaldError(
        'conflict',
        `goal ${busy.id} is already ${busy.status} in ${goal.workspace}`,
        `wait for it, or stop it with: goald stop ${busy.id}`,
      );
    }
    onAdmitted();
    return true;
  });
}

/** Builds the final box from the goal's stored record and its last turn. */
async function renderOutcomeBox(store: Store, goalId: string, outcome: GoalOutcome): Promise<string> {
  const state = await store.read();
  const goal = state.goals.find((candidate) => candidate.id === goalId);
  const turns = await readTurnRecords(store.goalDir(goalId));
  const lastWithChecks = [...turns].reverse().find((turn) => turn.checks.length > 0);
  const estimated = turns.some((turn) => turn.agent?.usage.estimated === true);
  return renderFinalBox({
    status: outcome.status,
    condition: goal?.condition ?? '',
    turns: outcome.turns,
    tokens: outcome.tokens,
    tokensEstimated: estimated,
    elapsedMs: outcome.elapsedMs,
    checks: (lastWithChecks?.checks ?? []).map((check) => ({ name: check.name, passed: check.passed })),
    reason: outcome.failure?.reason ?? null,
    reasonMessage: goal?.reasonMessage ?? outcome.failure?.message ?? null,
    breaker: outcome.breaker,
    files: goal?.summary.files ?? [],
    filesOmitted: goal?.summary.filesOmitted ?? 0,
    tamper: goal?.summary.tamper,
  });
}

// A supervisor that crashed (a goald bug, or git failing in a way goald does not expect) leaves its goal
// failed, `stopped` with the error, and its `goal.finished` told to the goal's observers (event log, output,
// notifications), as the daemon does; the error is still reported (exit 70). Without it the record stayed
// `active`, owned by a process that is gone.
async function recordCrash(store: Store, goalId: string, error: unknown, observers: readonly SupervisorObserver[]): Promise<void> {
  try {
    const { markGoalFailed } = await import('../../daemon/mark-goal-failed.js');
    const { finishedEventOf } = await import('../../daemon/unstored-endings.js');
    // Here, not at the top: the daemon client's chunk (status) has no other place on a start's path.
    const { isLiveGoal } = await import('../../daemon/resolve-goal.js');
    const message = error instanceof Error ? error.message : String(error);
    await markGoalFailed(store, goalId, 'stopped', `goald hit an internal error: ${message}`, new Date());
    const [goal] = await store.readGoals((candidate) => candidate.id === goalId);
    if (goal === undefined || isLiveGoal(goal)) return;
    const event = finishedEventOf(goal);
    for (const observer of observers) observer.onEvent?.(event);
  } catch {
    // The store cannot take it either (disk full): the error itself is what is reported.
  }
}

/** Runs the goal here; `early` is the workspace lookup start.ts began for `early.dir`. Resolves with the exit code. */
export async function runInForeground(
  condition: string | undefined,
  options: StartOptions,
  io: CliIO,
  early?: { dir: string; resolved: Promise<ResolvedWorkspace> },
): Promise<number> {
  const dir = options.dir ?? io.cwd;
  // Everything is validated before anything is written.
  const { sandbox, ...inPlace } = await prepareGoal({
    condition,
    dir,
    flags: toStartFlags(options),
    env: io.env,
    workspace: early?.dir === dir ? early.resolved : undefined,
  });
  for (const warning of inPlace.warnings) io.err(`goald: warning: ${warning}`);
  const store = await openHomeStore(io.env);
  // Only a goal isolated in a worktree loads what makes one.
  const worktrees = inPlace.settings.isolation?.mode === 'worktree' ? await import('../../worktree/worktree-goal.js') : null;
  const prepared = worktrees === null ? inPlace : await worktrees.isolateInWorktree(inPlace, store.home);
  const goal = newGoalRecord(prepared.settings, { kind: 'foreground', pid: process.pid }, {
    ...(prepared.goalId === undefined ? {} : { id: prepared.goalId }),
    ...(prepared.worktree === undefined ? {} : { worktree: prepared.worktree }),
  });
  // The pre-check's snapshot (git, into the goal's own index) starts before the goal is registered.
  const snapshotter = await createGoalSnapshotter(store, goal, prepared.workspace);
  let markIndexed = (): void => undefined;
  const firstIndexed = new Promise<void>((resolve) => (markIndexed = resolve));
  const firstSnapshot = snapshotter.snapshot(undefined, () => markIndexed());
  firstSnapshot.catch(() => undefined); // the pre-check awaits it
  // A goal that is not registered leaves no directory (nor worktree) behind.
  const abandon = async (): Promise<void> => {
    await firstSnapshot.catch(() => undefined);
    await rm(store.goalDir(goal.id), { recursive: true, force: true });
    await worktrees?.abandonWorktree(prepared, store.home);
  };
  const print = (event: ProgressEvent): void => {
    if (options.json) {
      io.out(JSON.stringify(event));
      return;
    }
    const line = renderProgressLine(event);
    if (line !== null) io.out(line);
  };
  // Notifications (the user's config.json `notify`): the process waits for them before it exits.
  const notifier = createNotifier({ store, env: process.env, log: (line) => io.err(`goald: ${line}`) });
  const observers: SupervisorObserver[] = [createEventLogObserver(store.goalDir(goal.id)), { onEvent: print }, { onEvent: (event) => notifier.notify(goal.id, event) }];
  let supervisor: GoalSupervisor;
  try {
    supervisor = await buildSupervisor({
      store,
      goal,
      prepared,
      observers,
      owner: 'foreground',
      snapshotter: withSnapshotUnderWay(snapshotter, firstSnapshot, firstIndexed),
      // prepareGoal's, unless the goal moved to a worktree (a sandbox is made for its workspace).
      ...(prepared.workspace === inPlace.workspace ? { sandbox } : {}),
    });
  } catch (error) {
    await abandon();
    throw error;
  }
  // The pre-check's first check gets its process (its sandbox) ready at once; it runs once registration
  // has admitted the goal (under the state lock, before the record is on disk), and never for a goal
  // refused: a busy workspace, or a held edit of goal.config.json whose checks the agent wrote.
  let admit = (): void => undefined;
  let refuse: (error: unknown) => void = () => undefined;
  const admitted = new Promise<void>((resolve, reject) => {
    admit = resolve;
    refuse = reject;
  });
  supervisor.beginPrecheck(admitted);
  try {
    await registerGoal(store, goal, prepared.workspaceConfig ?? null, admit);
  } catch (error) {
    // Not registered (another goal runs in this workspace, or the write failed): its check is ended.
    refuse(error);
    await supervisor.abandonPrecheck();
    await abandon();
    throw error;
  }

  // Ctrl-C / SIGTERM stop the goal cleanly: the agent's group is killed and the goal recorded as stopped.
  const onSignal = (signal: NodeJS.Signals): void => supervisor.stop(`interrupted by ${signal}`);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcome = await supervisor.run().catch(async (error: unknown) => {
      await recordCrash(store, goal.id, error, observers);
      throw error;
    });
    if (outcome === null) throw new GoaldError('internal', 'the goal was detached from this process unexpectedly');
    if (outcome.unstored !== undefined) io.err(`goald: warning: the goal's end could not be stored (${outcome.unstored}); until space is freed, goald status shows its last stored state`);
    if (!options.json) io.out(await renderOutcomeBox(store, goal.id, outcome));
    return outcome.status === 'achieved' ? EXIT.ok : EXIT.goalFailed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await notifier.idle();
  }
}
