// Shared set-up for the supervisor's tests: the supervisor in-process with real collaborators (store, git
// snapshots, checks) and scripted agent and evaluator objects written for the test against their
// contracts (AgentAdapter, Evaluator): the process boundary, not a module mock.

import { writeFile } from 'node:fs/promises';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { openStore, readTurnRecords } from '../../state/index.js';
import type { GoalRecord, Store } from '../../state/types.js';
import type { AgentAdapter, TurnInput, TurnResult } from '../../src/agents/types.js';
import { systemClock } from '../../src/clock.js';
import { DEFAULT_GUARD, DEFAULT_LIMITS, DEFAULT_NOISE_PATHS } from '../../src/config/defaults.js';
import type { GoalSettings } from '../../src/config/types.js';
import type { EvaluationInput, EvaluationResult, Evaluator } from '../../src/evaluator/types.js';
import { createNoneEvaluator } from '../../src/evaluator/none-evaluator.js';
import { recoverGoals } from '../../src/daemon/goal-recovery.js';
import type { GoalOutcome } from '../../src/supervisor/goal-session.js';
import { buildSupervisor, newGoalRecord } from '../../src/supervisor/launch.js';
import type { GoalSupervisor, RestoredGoal } from '../../src/supervisor/supervisor.js';
import type { ProgressEvent, TurnRecord } from '../../src/supervisor/types.js';
import { resolveWorkspace, type ResolvedWorkspace } from '../../src/workspace/find-workspace.js';
import { gitdir } from '../helpers/gitdir.js';
import { waitUntil } from '../helpers/wait.js';

export type Step = (input: TurnInput) => Promise<Partial<TurnResult>> | Partial<TurnResult>;

// A scripted agent: step i runs on turn i+1 (the last step repeats); records every input it got.
export class ScriptedAgent implements AgentAdapter {
  readonly name = 'scripted';
  readonly model = null;
  readonly inputs: TurnInput[] = [];
  suspended = 0;
  resumed = 0;
  constructor(private readonly steps: Step[]) {}
  async runTurn(input: TurnInput): Promise<TurnResult> {
    this.inputs.push(input);
    const step = this.steps[Math.min(this.inputs.length - 1, this.steps.length - 1)];
    const partial = step ? await step(input) : {};
    return {
      outcome: 'completed',
      exitCode: 0,
      signal: null,
      durationMs: 1,
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: null, estimated: false },
      finalMessage: 'done',
      outputTail: '',
      ...partial,
    };
  }
  suspend(): void {
    this.suspended += 1;
  }
  resume(): void {
    this.resumed += 1;
  }
}

// A scripted evaluator: answer i is given to call i (the last repeats); records every input it got.
export class ScriptedEvaluator implements Evaluator {
  readonly provider = 'openai';
  readonly model = 'judge-model';
  readonly inputs: EvaluationInput[] = [];
  constructor(private readonly answers: ((input: EvaluationInput) => EvaluationResult)[]) {}
  evaluate(input: EvaluationInput): Promise<EvaluationResult> {
    this.inputs.push(input);
    const answer = this.answers[Math.min(this.inputs.length - 1, this.answers.length - 1)];
    return Promise.resolve(answer ? answer(input) : { kind: 'skipped', reason: 'no answer scripted' });
  }
}

export const USAGE = { inputTokens: 100, outputTokens: 20 };

/** A verdict as a real evaluator returns it. */
export function verdict(achieved: boolean, reason = achieved ? 'met' : 'not yet'): EvaluationResult {
  return { kind: 'verdict', verdict: { achieved, blocked: false, reason, remaining: achieved ? [] : ['more'] }, usage: USAGE, model: 'judge-model' };
}

export interface SetupOptions {
  checks: string[];
  limits?: Partial<GoalSettings['limits']>;
  agent: AgentAdapter;
  evaluator?: Evaluator;
  guard?: Partial<GoalSettings['guard']>;
  /** Files of the repository's initial commit (default: a README). */
  files?: Record<string, string>;
  /** The goal's sandbox settings (default: none stored, so the defaults: bubblewrap where it works). */
  sandbox?: GoalSettings['sandbox'];
  /** Called with each event as it is emitted, beside the collected `events`. */
  onEvent?: (event: ProgressEvent, store: Store) => void;
}

export interface SupervisedGoal {
  repo: Awaited<ReturnType<typeof gitdir>>;
  store: Store;
  goal: GoalRecord;
  supervisor: GoalSupervisor;
  events: ProgressEvent[];
  turns: () => Promise<TurnRecord[]>;
  settings: GoalSettings;
  workspace: ResolvedWorkspace;
  /** A new supervisor for the same goal, restored from what the store holds (as a restarted daemon does). */
  restore: (agent: AgentAdapter) => Promise<GoalSupervisor>;
  /**
   * A daemon's crash recovery (daemon/goal-recovery.ts) of what the store holds, the goal's new run under
   * `agent`: resolves with that run's outcome (null when no run was launched).
   */
  recover: (agent: AgentAdapter) => Promise<GoalOutcome | null>;
}

export async function setup(options: SetupOptions): Promise<SupervisedGoal> {
  const repo = await gitdir({ files: options.files ?? { 'README.md': '# x\n' }, initialCommit: true });
  const home = await realpath(await mkdtemp(path.join(tmpdir(), 'gs-')));
  onTestFinished(() => rm(home, { recursive: true, force: true }));
  const store: Store = await openStore(home);
  const workspace = await resolveWorkspace(repo.dir);
  const evaluator = options.evaluator ?? createNoneEvaluator();
  const settings: GoalSettings = {
    condition: 'the file answer.txt says 42',
    workspace: workspace.root,
    checks: options.checks.map((run, index) => ({ name: `check${index + 1}`, run, timeoutMs: 10_000 })),
    agent: { adapter: 'command', command: 'scripted', args: [], session: 'fresh', model: null, prices: {} },
    evaluator: {
      provider: evaluator.provider,
      model: evaluator.model,
      baseURL: null,
      maxInputChars: 24_000,
      skipWhenChecksFail: true,
      timeoutMs: 10_000,
      retries: 0,
    },
    limits: { ...DEFAULT_LIMITS, cooldownMs: 0, ...options.limits },
    ancestry: {},
    noisePaths: [...DEFAULT_NOISE_PATHS],
    allowSameModel: false,
    recitation: { everyToolCalls: 10 },
    guard: { ...DEFAULT_GUARD, testFiles: [...DEFAULT_GUARD.testFiles], ...options.guard },
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
  };
  const goal = newGoalRecord(settings, { kind: 'foreground', pid: process.pid });
  await store.update((state) => {
    state.goals.push(goal);
  });
  const events: ProgressEvent[] = [];
  const build = (agent: AgentAdapter, stored: GoalRecord, restored?: RestoredGoal): Promise<GoalSupervisor> =>
    buildSupervisor({
      store,
      goal: stored,
      prepared: { settings, workspace, agent, evaluator },
      observers: [{ onEvent: (event) => {
        events.push(event);
        options.onEvent?.(event, store);
      } }],
      owner: 'foreground',
      clock: systemClock,
      ...(restored ? { restored } : {}),
    });
  const supervisor = await build(options.agent, goal);
  const turns = (): Promise<TurnRecord[]> => readTurnRecords(store.goalDir(goal.id));
  const restore = async (agent: AgentAdapter): Promise<GoalSupervisor> => {
    const stored = (await store.read()).goals.find((candidate) => candidate.id === goal.id);
    if (!stored?.machine) throw new Error('the goal has no stored machine snapshot');
    const records = await turns();
    return build(agent, stored, { machine: stored.machine, lastTurn: records.at(-1) ?? null, initialTree: records[0]?.tree ?? null });
  };
  const recover = async (agent: AgentAdapter): Promise<GoalOutcome | null> => {
    let outcome: Promise<GoalOutcome | null> = Promise.resolve(null);
    await recoverGoals((await store.read()).goals, {
      store,
      clock: systemClock,
      log: () => undefined,
      materialize: () => Promise.resolve({ settings, workspace, agent, evaluator, warnings: [] }),
      launch: async (stored, _prepared, restored) => {
        outcome = (await build(agent, stored, restored)).run();
      },
    });
    return outcome;
  };
  return { repo, store, goal, supervisor, events, turns, settings, workspace, restore, recover };
}

/** The first event that matches, once it arrived (bounded: fails with the events seen so far). */
export function waitForEvent(events: ProgressEvent[], predicate: (event: ProgressEvent) => boolean): Promise<ProgressEvent> {
  return waitUntil('the progress event', () => {
    const found = events.find(predicate);
    if (!found) throw new Error(`seen: ${events.map((event) => event.type).join(', ')}`);
    return found;
  }, 10_000);
}

/** A step that writes answer.txt. */
export const writeAnswer = (value: string): Step => async (input) => {
  await writeFile(path.join(input.workspace, 'answer.txt'), `${value}\n`);
  return {};
};
