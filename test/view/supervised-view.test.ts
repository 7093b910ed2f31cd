// The view state from a real supervisor's events and stored record (real store, git snapshots, checks):
// what `goald watch` and the dashboard show comes from what the goal really did.

import { describe, expect, it } from 'vitest';
import { deriveGoalView } from '../../src/view/goal-view.js';
import { ScriptedAgent, setup, verdict, ScriptedEvaluator } from '../supervisor/support.js';

describe('the view of a supervised goal', () => {
  it('a stagnating agent: breaker proximity turn by turn, then the stop reason and the next action', async () => {
    // The hostile agent does nothing at all, every turn; the evaluator keeps saying "not yet".
    const agent = new ScriptedAgent([() => ({ usage: { inputTokens: 100, outputTokens: 50, totalTokens: 150, costUsd: 0.01, estimated: false } })]);
    const evaluator = new ScriptedEvaluator([() => verdict(false, 'nothing changed')]);
    const { supervisor, events, store, goal } = await setup({ checks: ['true'], agent, evaluator, limits: { stagnation: 3 } });
    const outcome = await supervisor.run();
    expect(outcome).toMatchObject({ status: 'failed', breaker: 'stagnation' });

    const finished = events.filter((event) => event.type === 'turn.finished');
    expect(finished.map((event) => event.view?.breakers.stagnation)).toEqual([1, 2, 3]);
    const stored = (await store.read()).goals.find((candidate) => candidate.id === goal.id);
    if (!stored) throw new Error('goal not stored');

    // Mid-way (after turn 2) the view says how near stagnation is.
    const mid = deriveGoalView({ goal: { ...stored, status: 'active', phase: 'coolingDown', reason: null }, events: events.slice(0, finished[1] === undefined ? 0 : events.indexOf(finished[1]) + 1), now: Date.now() });
    expect(mid.breakers[0]).toMatchObject({ name: 'stagnation', text: 'stagnation 2 of 3' });
    expect(mid.series.map((point) => point.cumulativeTokens)).toEqual([270, 540]) // agent 150 + evaluator 120 a turn;

    const end = deriveGoalView({ goal: stored, events, now: Date.now() });
    expect(end).toMatchObject({ glyph: '✖', statusText: 'failed (stagnation)', turnText: '3/20' });
    expect(end.stop?.reason).toBe('stagnation');
    expect(end.stop?.nextAction).toContain(`goald show ${goal.id}`);
    expect(end.evaluator).toEqual({ reason: 'nothing changed', remaining: ['more'] });
    expect(end.series.map((point) => point.costUsd)).toEqual([0.01, 0.01, 0.01]);
    expect(end.lastTurnFiles).toEqual({ turn: 3, count: 0, paths: [] });
  });
});
