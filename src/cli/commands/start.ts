// `goald start`: validate, then run the goal in this process (--foreground / --wait) and print its
// progress and final box, or JSON events with --json.

import { z } from 'zod';
import { isProcessAlive, readTurnRecords } from '../../../state/index.js';
import type { GoalRecord, Store } from '../../../state/types.js';
import { readStartFlags, type StartFlags } from '../../config/start-options.js';
import { EXIT, GoaldError } from '../../errors.js';
import { buildSupervisor, newGoalRecord, openHomeStore, prepareGoal } from '../../supervisor/launch.js';
import { createEventLogObserver } from '../../supervisor/event-log.js';
import type { GoalOutcome } from '../../supervisor/supervisor.js';
import type { ProgressEvent } from '../../supervisor/types.js';
import type { CliIO } from '../io.js';
import { renderFinalBox } from '../render-final-box.js';
import { renderProgressLine } from '../render-progress.js';

// The options that are not settings (those are read by readStartFlags from the start options' table).
const commandOptionsSchema = z.object({
  dir: z.string().optional(),
  queue: z.boolean().default(true),
  json: z.boolean().default(false),
  foreground: z.boolean().default(false),
  wait: z.boolean().default(false),
  catchUp: z.enum(['once', 'skip']).optional(),
});

export type StartOptions = z.infer<typeof commandOptionsSchema> & { flags: StartFlags };

/** Validates commander's raw options for `start` and `loop`. */
export function parseStartOptions(rawOptions: Record<string, unknown>): StartOptions {
  return { ...commandOptionsSchema.parse(rawOptions), flags: readStartFlags(rawOptions) };
}

/** The config-relevant flags, as resolveGoalSettings takes them. */
export function toStartFlags(options: StartOptions): StartFlags {
  return options.flags;
}

// One active goal per workspace: registering refuses while a live process runs another goal there.
async function registerGoal(store: Store, goal: GoalRecord): Promise<void> {
  await store.update((state) => {
    const busy = state.goals.find(
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
    state.goals.push(goal);
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

/** `goald start` — resolves with the process exit code. */
export async function runStartCommand(condition: string | undefined, rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const options = parseStartOptions(rawOptions);
  if (!options.foreground) {
    const { submitToDaemon } = await import('./start-daemon.js');
    return submitToDaemon(condition, options, io);
  }
  return runInForeground(condition, options, io);
}

async function runInForeground(condition: string | undefined, options: StartOptions, io: CliIO): Promise<number> {
  // Everything is validated before anything is written.
  const prepared = await prepareGoal({ condition, dir: options.dir ?? io.cwd, flags: toStartFlags(options), env: io.env });
  for (const warning of prepared.warnings) io.err(`goald: warning: ${warning}`);
  const store = await openHomeStore(io.env);
  const goal = newGoalRecord(prepared.settings, { kind: 'foreground', pid: process.pid });
  await registerGoal(store, goal);

  const print = (event: ProgressEvent): void => {
    if (options.json) {
      io.out(JSON.stringify(event));
      return;
    }
    const line = renderProgressLine(event);
    if (line !== null) io.out(line);
  };
  const supervisor = await buildSupervisor({
    store,
    goal,
    prepared,
    observers: [createEventLogObserver(store.goalDir(goal.id)), { onEvent: print }],
    owner: 'foreground',
  });

  // Ctrl-C / SIGTERM stop the goal cleanly: the agent's group is killed and the goal recorded as stopped.
  const onSignal = (signal: NodeJS.Signals): void => supervisor.stop(`interrupted by ${signal}`);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcome = await supervisor.run();
    if (outcome === null) throw new GoaldError('internal', 'the goal was detached from this process unexpectedly');
    if (outcome.unstored !== undefined) io.err(`goald: warning: the goal's end could not be stored (${outcome.unstored}); until space is freed, goald status shows its last stored state`);
    if (!options.json) io.out(await renderOutcomeBox(store, goal.id, outcome));
    return outcome.status === 'achieved' ? EXIT.ok : EXIT.goalFailed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
