// Each way a turn can end, through the real supervisor with a scripted agent and evaluator at the process
// boundary: what the machine decides, what the turn record says, and what the budgets count.

import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnResult } from '../../src/agents/types.js';
import type { EvaluationResult } from '../../src/evaluator/types.js';
import type { GoalSupervisor } from '../../src/supervisor/supervisor.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';
import type { Store } from '../../state/types.js';
import { ScriptedAgent, ScriptedEvaluator, setup, USAGE, verdict, waitForEvent, writeAnswer, type Step } from './support.js';

const fails = (outcome: TurnResult['outcome'], extra: Partial<TurnResult> = {}): Step => () => ({ outcome, exitCode: 1, error: outcome, ...extra });

describe('supervisor: how each turn ends', () => {
  it('achieves when the checks pass and the evaluator agrees, and gives the evaluator the condition', async () => {
    const evaluator = new ScriptedEvaluator([() => verdict(true)]);
    const agent = new ScriptedAgent([writeAnswer('42')]);
    const { supervisor, turns } = await setup({ checks: ['grep -q 42 answer.txt'], agent, evaluator });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 1, failure: null, breaker: null });
    expect(evaluator.inputs).toHaveLength(1);
    expect(evaluator.inputs[0]).toMatchObject({ condition: 'the file answer.txt says 42', turn: 1 });
    expect(evaluator.inputs[0]?.files.map((file) => file.path)).toEqual(['answer.txt']);
    const [precheck, turn1] = await turns();
    expect(precheck).toMatchObject({ turn: 0, agent: null, promptFile: null, evaluation: { kind: 'skipped' } });
    expect(turn1).toMatchObject({
      turn: 1,
      achieved: true,
      agent: { outcome: 'completed' },
      evaluation: { kind: 'verdict' },
      promptFile: 'turn-1.prompt.txt',
      transcriptFile: 'turn-1.log',
      tokens: 15 + 120,
    });
  });

  it('does not achieve on an "achieved" verdict while a check fails', async () => {
    const evaluator = new ScriptedEvaluator([() => verdict(true)]);
    const agent = new ScriptedAgent([writeAnswer('41')]);
    const { supervisor, turns, settings } = await setup({ checks: ['grep -q 42 answer.txt'], agent, evaluator, limits: { maxTurns: 2 } });
    settings.evaluator.skipWhenChecksFail = false; // ask the evaluator anyway: its "yes" must not count
    expect(await supervisor.run()).toMatchObject({ status: 'failed', breaker: 'max-turns', turns: 2 });
    expect(evaluator.inputs.length).toBeGreaterThan(0);
    expect((await turns()).every((record) => !record.achieved)).toBe(true);
  });

  it('skips the evaluator while a check fails, by default', async () => {
    const evaluator = new ScriptedEvaluator([() => verdict(true)]);
    const agent = new ScriptedAgent([writeAnswer('41'), writeAnswer('42')]);
    const { supervisor, turns } = await setup({ checks: ['grep -q 42 answer.txt'], agent, evaluator });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    expect(evaluator.inputs.map((input) => input.turn)).toEqual([2]);
    expect((await turns())[1]?.evaluation).toMatchObject({ kind: 'skipped', reason: expect.stringMatching(/a check failed/) });
  });

  it('achieves at the pre-check, spending no agent turn, when the condition already holds', async () => {
    const evaluator = new ScriptedEvaluator([() => verdict(true)]);
    const agent = new ScriptedAgent([writeAnswer('42')]);
    const { supervisor, turns } = await setup({ checks: ['true'], agent, evaluator });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 0, tokens: 120 });
    expect(agent.inputs).toHaveLength(0);
    expect(await turns()).toHaveLength(1);
  });

  it('ends with agent-failures after three failed turns, and records each failure', async () => {
    const agent = new ScriptedAgent([fails('failed')]);
    const { supervisor, turns } = await setup({ checks: ['false'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', breaker: 'agent-failures', turns: 3 });
    const records = (await turns()).slice(1);
    expect(records.map((record) => record.agent?.outcome)).toEqual(['failed', 'failed', 'failed']);
    expect(records.map((record) => record.breakers.consecutiveAgentFailures)).toEqual([1, 2, 3]);
  });

  it('counts a timed-out turn as an agent failure', async () => {
    const agent = new ScriptedAgent([fails('timed-out'), writeAnswer('42')]);
    const { supervisor, turns } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    const records = await turns();
    expect(records[1]).toMatchObject({ agent: { outcome: 'timed-out' }, breakers: { consecutiveAgentFailures: 1 } });
    expect(records[2]?.breakers.consecutiveAgentFailures).toBe(0);
  });

  it('ends with turn-token-limit when a turn was killed for its tokens', async () => {
    const usage = { inputTokens: 60_000, outputTokens: 10, totalTokens: 60_010, costUsd: null, estimated: false };
    const agent = new ScriptedAgent([fails('token-limit', { usage })]);
    const { supervisor } = await setup({ checks: ['false'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', breaker: 'turn-token-limit', turns: 1, tokens: 60_010 });
  });

  it('ends with agent-missing when the agent cannot be started', async () => {
    const agent = new ScriptedAgent([fails('spawn-failed', { error: 'spawn nope ENOENT' })]);
    const { supervisor, turns } = await setup({ checks: ['false'], agent });
    const outcome = await supervisor.run();
    expect(outcome).toMatchObject({ status: 'failed', breaker: null, failure: { reason: 'agent-missing', message: 'spawn nope ENOENT' } });
    expect((await turns())[1]).toMatchObject({ agent: { outcome: 'spawn-failed' }, evaluation: { kind: 'skipped', reason: 'goal ended during the turn' } });
  });

  it('ends with evaluator-failures after three evaluator errors in a row', async () => {
    const evaluator = new ScriptedEvaluator([() => ({ kind: 'error', message: 'HTTP 500', usage: { inputTokens: 0, outputTokens: 0 }, attempts: 2 })]);
    const agent = new ScriptedAgent([writeAnswer('42')]);
    const { supervisor, events } = await setup({ checks: ['grep -q 42 answer.txt'], agent, evaluator, limits: { stagnation: 0 } });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', breaker: 'evaluator-failures', turns: 3 });
    const finished = events.filter((event) => event.type === 'turn.finished');
    expect(finished.map((event) => event.type === 'turn.finished' && event.evaluatorError)).toEqual(['HTTP 500', 'HTTP 500', 'HTTP 500']);
  });

  it('ends with workspace-gone when the agent removed its workspace', async () => {
    const agent = new ScriptedAgent([
      async (input) => {
        await rm(input.workspace, { recursive: true, force: true });
        return {};
      },
    ]);
    const { supervisor } = await setup({ checks: ['false'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', failure: { reason: 'workspace-gone' } });
  });

  it('pauses for a human after three blocked verdicts', async () => {
    const blocked = (): EvaluationResult => ({
      kind: 'verdict',
      verdict: { achieved: false, blocked: true, reason: 'needs a key', remaining: ['a key'] },
      usage: USAGE,
      model: 'judge-model',
    });
    const evaluator = new ScriptedEvaluator([blocked]);
    const agent = new ScriptedAgent([writeAnswer('42')]);
    const { supervisor, events, store, goal } = await setup({ checks: ['true'], agent, evaluator, limits: { stagnation: 0 } });
    const run = supervisor.run();
    await expect.poll(() => events.find((event) => event.type === 'goal.paused'), { timeout: 10_000 }).toMatchObject({ reason: 'blocked' });
    expect(agent.inputs).toHaveLength(3);
    const stored = (await store.read()).goals.find((candidate) => candidate.id === goal.id);
    expect(stored).toMatchObject({ status: 'paused', pauseReason: 'blocked' });
    supervisor.stop();
    expect(await run).toMatchObject({ status: 'failed', failure: { reason: 'stopped' } });
  });

  it('stores a pause and a resume before announcing them: a reader woken by the event finds the record', async () => {
    // Read synchronously inside the observer, at the very moment the event is emitted.
    const storedAtEvent: string[] = [];
    const onEvent = (event: ProgressEvent, store: Store): void => {
      if (event.type !== 'goal.paused' && event.type !== 'goal.resumed') return;
      const state = JSON.parse(readFileSync(path.join(store.home, 'state.json'), 'utf8')) as { goals: Array<{ status: string }> };
      storedAtEvent.push(`${event.type}: ${state.goals[0]?.status ?? 'none'}`);
    };
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const agent = new ScriptedAgent([
      async (input) => {
        await gate;
        return writeAnswer('41')(input);
      },
      writeAnswer('42'),
    ]);
    const { supervisor, events } = await setup({ checks: ['grep -qx 42 answer.txt'], agent, onEvent });
    const run = supervisor.run();
    await waitForEvent(events, (event) => event.type === 'turn.started' && event.turn === 1);
    await supervisor.pause(false);
    open();
    await waitForEvent(events, (event) => event.type === 'goal.paused');
    await supervisor.resume();
    expect(await run).toMatchObject({ status: 'achieved' });
    expect(storedAtEvent).toEqual(['goal.paused: paused', 'goal.resumed: active']);
  });

  it('records a turn stopped mid-way with what it spent, and ends stopped', async () => {
    let supervisor: GoalSupervisor | null = null;
    const usage = { inputTokens: 300, outputTokens: 30, totalTokens: 330, costUsd: 0.25, estimated: false };
    const agent = new ScriptedAgent([
      () => {
        supervisor?.stop('stopped by the user');
        return { outcome: 'aborted', exitCode: null, signal: 'SIGTERM', usage };
      },
    ]);
    const goal = await setup({ checks: ['false'], agent });
    supervisor = goal.supervisor;
    expect(await supervisor.run()).toMatchObject({ status: 'failed', failure: { reason: 'stopped', message: 'stopped by the user' }, turns: 1, tokens: 330 });
    const turn1 = (await goal.turns())[1];
    expect(turn1).toMatchObject({ agent: { outcome: 'aborted' }, tokens: 330, status: 'failed', evaluation: { reason: 'goal ended during the turn' } });
    expect(turn1?.breakers).toMatchObject({ turns: 1, tokens: 330, costUsd: 0.25 });
    const stored = (await goal.store.read()).goals.find((candidate) => candidate.id === goal.goal.id);
    expect(stored?.summary).toMatchObject({ turns: 1, tokens: 330, costUsd: 0.25 });
  });

  it('lets go of a goal detached mid-turn (shutdown), and a restored supervisor runs the next turn', async () => {
    let supervisor: GoalSupervisor | null = null;
    const agent = new ScriptedAgent([
      () => {
        supervisor?.detach();
        return { outcome: 'aborted', exitCode: null, signal: 'SIGTERM' };
      },
    ]);
    const goal = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    supervisor = goal.supervisor;
    expect(await supervisor.run()).toBeNull();
    expect((await goal.turns())[1]).toMatchObject({ agent: { outcome: 'interrupted', error: expect.stringMatching(/daemon shut down/) }, status: 'active' });
    const next = new ScriptedAgent([writeAnswer('42')]);
    const restored = await goal.restore(next);
    expect(await restored.run()).toMatchObject({ status: 'achieved', turns: 2 });
    expect(next.inputs.map((input) => input.turn)).toEqual([2]);
  });

  // The bug issue 8 names: an interrupted turn added its tokens to the breakers but not its cost, so a
  // daemon restart mid-turn let the goal spend past its cost budget.
  it('counts the cost of a turn interrupted mid-way toward the cost budget', async () => {
    let supervisor: GoalSupervisor | null = null;
    const usage = { inputTokens: 1_000, outputTokens: 100, totalTokens: 1_100, costUsd: 0.6, estimated: false };
    const agent = new ScriptedAgent([
      () => {
        supervisor?.detach();
        return { outcome: 'aborted', exitCode: null, signal: 'SIGTERM', usage };
      },
    ]);
    const goal = await setup({ checks: ['grep -q 42 answer.txt'], agent, limits: { costBudgetUsd: 1 } });
    supervisor = goal.supervisor;
    expect(await supervisor.run()).toBeNull();
    expect((await goal.turns())[1]?.breakers).toMatchObject({ turns: 1, tokens: 1_100, costUsd: 0.6 });
    // The next turn would cost about as much again: $1.20 passes the $1 budget, so it is refused.
    const next = new ScriptedAgent([writeAnswer('42')]);
    const restored = await goal.restore(next);
    expect(await restored.run()).toMatchObject({ status: 'failed', breaker: 'cost-budget' });
    expect(next.inputs).toHaveLength(0);
  });

  it('counts a usage-limited turn and its cost, so a next turn that would pass the cost budget is refused', async () => {
    const usage = { inputTokens: 1_000, outputTokens: 100, totalTokens: 1_100, costUsd: 0.6, estimated: false };
    const agent = new ScriptedAgent([
      () => ({ outcome: 'usage-limited', exitCode: 1, usage, usageLimit: { resetAt: Date.now() + 50, message: 'limit' } }),
      writeAnswer('42'),
    ]);
    const { supervisor } = await setup({ checks: ['grep -q 42 answer.txt'], agent, limits: { costBudgetUsd: 1 } });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', breaker: 'cost-budget' });
    expect(agent.inputs).toHaveLength(1);
  });
});
