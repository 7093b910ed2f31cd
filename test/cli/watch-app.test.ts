// The watch view's ink components with ink-testing-library: frames drawn from view states, and every key
// of the hint line turned into the right call on the source (an in-memory WatchSource: goald's own
// interface, kept for the test), on a goal's row and on a loop's.

import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { describe, expect, it } from 'vitest';
import { WatchApp } from '../../src/cli/watch/watch-app.js';
import type { WatchSnapshot, WatchSource } from '../../src/cli/watch/watch-source.js';
import { deriveGoalView } from '../../src/view/goal-view.js';
import { deriveLoopView } from '../../src/view/loop-view.js';
import { terminalView } from '../../src/view/terminal-view.js';
import { createEmptySummary } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { waitUntil } from '../helpers/wait.js';
import { makeLoop } from '../state/fixtures.js';

function record(id: string, overrides: Partial<GoalRecord> = {}): GoalRecord {
  return {
    id, condition: `goal ${id}`, workspace: '/ws', status: 'active', phase: 'running', createdAt: '2026-12-02T09:00:00.000Z', updatedAt: '',
    startedAt: '2026-12-02T09:00:00.000Z', finishedAt: null, reason: null, reasonMessage: null, pauseReason: null, loopId: null,
    settings: { limits: { maxTurns: 10, tokenBudget: 0, costBudgetUsd: null, stagnation: 5 } }, machine: null,
    summary: { ...createEmptySummary(), turns: 2, tokens: 3000 }, owner: { kind: 'daemon', pid: 1 }, runningAgent: null, ...overrides,
  };
}

function loopRecord(id: string, overrides: Partial<LoopRecord> = {}): LoopRecord {
  return makeLoop(id, { workspace: '/ws/loop', condition: `loop ${id}`, nextRunAt: '2026-12-02T09:30:00.000Z', lastRunAt: '2026-12-02T09:00:00.000Z', ...overrides });
}

class MemorySource implements WatchSource {
  readonly calls: string[] = [];
  constructor(public goals: GoalRecord[], public loops: LoopRecord[] = []) {}
  async load(): Promise<WatchSnapshot> {
    const now = Date.parse('2026-12-02T09:10:00.000Z');
    const events = [
      { type: 'turn.finished' as const, id: 'g1', turn: 2, maxTurns: 10, outcome: 'completed' as const, durationMs: 5, tokens: 2000, tokensEstimated: false,
        filesChanged: 1, checks: [{ name: 't', passed: false }], verdict: { achieved: false, reason: 'still \u001b[2Jfailing' }, evaluatorError: null, agentError: null, tamper: [],
        view: { costUsd: null, remaining: ['fix it'], files: ['src/a.ts'], breakers: { stagnation: 2 } } },
    ];
    return {
      goals: this.goals.map((goal) => terminalView(deriveGoalView({ goal, events: goal.id === 'g1' ? events : [], now }))),
      loops: this.loops.map((loop) => terminalView(deriveLoopView({ loop, goals: this.goals, now }))),
      logLines: ['turn 2/10 · log line'],
    };
  }
  failWith: string | null = null;
  async pause(id: string, now: boolean): Promise<string> {
    if (this.failWith !== null) throw new Error(this.failWith);
    this.calls.push(`pause ${id}${now ? ' now' : ''}`);
    return `goal ${id} paused`;
  }
  async resume(id: string): Promise<string> {
    this.calls.push(`resume ${id}`);
    return `goal ${id} resumed`;
  }
  async stop(id: string): Promise<string> {
    this.calls.push(`stop ${id}`);
    return `goal ${id} stopped`;
  }
  async say(id: string, text: string): Promise<string> {
    this.calls.push(`say ${id} ${text}`);
    return `goal ${id}: guidance queued`;
  }
  async runLoop(id: string): Promise<string> {
    this.calls.push(`run loop ${id}`);
    return `loop ${id} fired`;
  }
  async stopLoop(id: string): Promise<string> {
    this.calls.push(`stop loop ${id}`);
    return `loop ${id} stopped`;
  }
}

function mount(source: MemorySource, width = 100) {
  const app = render(createElement(WatchApp, { source, initialSelectedId: null, refreshMs: 10_000, width, height: 30 }));
  const frame = (what: string, predicate: (text: string) => boolean): Promise<string> =>
    waitUntil(what, () => {
      const text = app.lastFrame() ?? '';
      return predicate(text) ? text : undefined;
    }, 5_000);
  return { ...app, frame };
}

describe('WatchApp', () => {
  it('draws the list, the detail pane with breaker proximity and the hint; agent text escaped', async () => {
    const app = mount(new MemorySource([record('g1'), record('g2', { status: 'paused', phase: 'paused', pauseReason: 'drift' })]));
    const text = await app.frame('the detail pane', (frame) => frame.includes('Goal: goal g1'));
    expect(text).toContain('› ▶ g1');
    expect(text).toContain('‖ g2');
    expect(text).toContain('paused (drift)');
    expect(text).toContain('breakers: stagnation 2 of 5');
    expect(text).toContain('evaluator: still \\u001b[2Jfailing');
    expect(text).toContain('files (turn 2): 1: src/a.ts');
    expect(text).toContain('q quit');
    app.unmount();
  });

  it('keys: j/k select, p P r act on the selected goal, s asks then s stops, g sends guidance, l shows the log, q quits', async () => {
    const source = new MemorySource([record('g1'), record('g2')]);
    const app = mount(source);
    await app.frame('loaded', (frame) => frame.includes('Goal: goal g1'));
    // ink reads keys once its input hook has attached to stdin.
    await waitUntil('keys read', () => app.stdin.listenerCount('readable') > 0);
    app.stdin.write('j');
    await app.frame('g2 selected', (frame) => frame.includes('Goal: goal g2'));
    app.stdin.write('p');
    await app.frame('pause answered', (frame) => frame.includes('goal g2 paused'));
    app.stdin.write('Pk'); // two keys in one read, as a fast typist's terminal delivers them
    await app.frame('g1 selected', (frame) => frame.includes('Goal: goal g1'));
    app.stdin.write('r');
    await waitUntil('resume', () => source.calls.includes('resume g1'));
    app.stdin.write('s');
    await app.frame('the stop question', (frame) => frame.includes('stop goal g1? press s again'));
    app.stdin.write('x');
    await app.frame('cancelled', (frame) => frame.includes('stop cancelled'));
    app.stdin.write('s');
    await app.frame('asked again', (frame) => frame.includes('press s again'));
    app.stdin.write('s');
    await waitUntil('stop', () => source.calls.includes('stop g1'));
    app.stdin.write('g');
    await app.frame('the guidance prompt', (frame) => frame.includes('guidance for g1'));
    for (const char of 'look at src/net') app.stdin.write(char);
    await app.frame('typed', (frame) => frame.includes('look at src/net'));
    app.stdin.write('\r');
    await waitUntil('say', () => source.calls.includes('say g1 look at src/net'));
    app.stdin.write('l');
    await app.frame('the log pane', (frame) => frame.includes('turn 2/10 · log line'));
    expect(source.calls).toEqual(['pause g2', 'pause g2 now', 'resume g1', 'stop g1', 'say g1 look at src/net']);
    app.stdin.write('q');
    app.unmount();
  });

  it("a lever's error and typed guidance are shown escaped, on one line", async () => {
    const source = new MemorySource([record('g1')]);
    source.failWith = 'goal g1 says \u001b]0;owned\u0007 no\nsecond line';
    const app = mount(source);
    await app.frame('loaded', (frame) => frame.includes('Goal: goal g1'));
    await waitUntil('keys read', () => app.stdin.listenerCount('readable') > 0);
    app.stdin.write('p');
    const failed = await app.frame('the error', (frame) => frame.includes('goal g1 says'));
    expect(failed).toContain('goal g1 says \\u001b]0;owned\\u0007 no second line');
    app.stdin.write('g');
    await app.frame('the guidance prompt', (frame) => frame.includes('guidance for g1'));
    app.stdin.write('a\u0007b');
    const typed = await app.frame('typed', (frame) => frame.includes('a\\u0007b'));
    expect(typed).not.toContain('\u0007');
    app.unmount();
  });

  it('a narrow terminal drops the low-priority fields and shortens the hint', async () => {
    const app = mount(new MemorySource([record('g1')]), 50);
    const text = await app.frame('loaded', (frame) => frame.includes('Goal: '));
    expect(text).toContain('j/k p P r s g l q');
    expect(text).not.toContain('tok '); // no tokens column below 60 columns
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    app.unmount();
  });

  it('lists a loop between live and finished goals; its pane shows the next run and last runs; r runs it, s s stops it, p says it is for goals', async () => {
    const finished = record('g0', { status: 'achieved', phase: 'achieved', finishedAt: '2026-12-02T09:05:00.000Z', loopId: 'l1', createdAt: '2026-12-02T09:00:00.000Z' });
    const loop = loopRecord('l1', { condition: 'nightly \u001b]0;owned\u0007 deps', lastGoalId: 'g0', lastOutcome: 'achieved', runs: 1 });
    const source = new MemorySource([record('g1'), finished], [loop]);
    const app = mount(source);
    const text = await app.frame('loaded', (frame) => frame.includes('Goal: goal g1'));
    const rows = text.split('\n');
    const loopRow = rows.findIndex((row) => row.includes('l1'));
    expect(rows[loopRow]).toMatch(/↻ l1 +every 30m +in 20m 00s +last ✔ achieved +\/ws\/loop +nightly /);
    expect(loopRow).toBeGreaterThan(rows.findIndex((row) => row.includes('› ▶ g1')));
    expect(loopRow).toBeLessThan(rows.findIndex((row) => row.includes('✔ g0')));
    await waitUntil('keys read', () => app.stdin.listenerCount('readable') > 0);
    app.stdin.write('j');
    const pane = await app.frame('the loop pane', (frame) => frame.includes('Loop: '));
    expect(pane).toContain('› ↻ l1');
    expect(pane).toContain('Loop: nightly \\u001b]0;owned\\u0007 deps');
    expect(pane).toContain('↻ scheduled · every 30m · runs 1 · skipped 0 · catch-up once');
    expect(pane).toContain('workspace: /ws/loop');
    expect(pane).toContain('next run: 2026-12-02 09:30 UTC (in 20m 00s)');
    expect(pane).toContain('last runs:');
    expect(pane).toContain('✔ g0 achieved · 2026-12-02 09:00 UTC · 2 turns');
    expect(pane).toContain('loop: r run now · s stop loop');
    expect(pane).not.toContain('\u0007');
    app.stdin.write('p');
    await app.frame('the keys of a goal', (frame) => frame.includes('p, P, g and l act on goals'));
    app.stdin.write('r');
    await app.frame('fired', (frame) => frame.includes('loop l1 fired'));
    app.stdin.write('s');
    await app.frame('the stop question', (frame) => frame.includes('stop loop l1? press s again'));
    app.stdin.write('s');
    await waitUntil('stop', () => source.calls.includes('stop loop l1'));
    expect(source.calls).toEqual(['run loop l1', 'stop loop l1']);
    app.unmount();
  });

  it('no goals: the empty state', async () => {
    const app = mount(new MemorySource([]));
    await app.frame('empty state', (frame) => frame.includes('no goals yet'));
    app.unmount();
  });
});
