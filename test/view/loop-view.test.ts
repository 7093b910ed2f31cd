// The loop's view state (src/view/loop-view.ts): tables of loop records and the goals they started in, what
// every view shows of the loop out. Pure, so each row is a whole story.

import { describe, expect, it } from 'vitest';
import { deriveLoopView, type LoopView } from '../../src/view/loop-view.js';
import { terminalView } from '../../src/view/terminal-view.js';
import { createEmptySummary } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { makeGoal, makeLoop } from '../state/fixtures.js';

const NOW = Date.parse('2026-12-02T10:00:00.000Z');

function loop(overrides: Partial<LoopRecord> = {}): LoopRecord {
  return makeLoop('l1', overrides);
}

// A run of loop l1 that achieved in 3 turns, unless overridden.
function goal(id: string, overrides: Partial<GoalRecord> = {}): GoalRecord {
  return makeGoal(id, {
    condition: 'deps are up to date',
    workspace: '/ws',
    status: 'achieved',
    phase: 'achieved',
    createdAt: '2026-12-02T09:00:00.000Z',
    updatedAt: '2026-12-02T09:05:00.000Z',
    startedAt: '2026-12-02T09:00:00.000Z',
    finishedAt: '2026-12-02T09:05:00.000Z',
    loopId: 'l1',
    settings: {},
    summary: { ...createEmptySummary(), turns: 3 },
    owner: { kind: 'daemon', pid: 1 },
    ...overrides,
  });
}

function view(record: LoopRecord, goals: GoalRecord[] = []): LoopView {
  return deriveLoopView({ loop: record, goals, now: NOW });
}

describe('deriveLoopView: status', () => {
  const running = goal('g2', { status: 'active', phase: 'running', createdAt: '2026-12-02T09:30:00.000Z', finishedAt: null });
  const paused = goal('g2', { status: 'paused', phase: 'paused', pauseReason: 'usage-limited', createdAt: '2026-12-02T09:30:00.000Z', finishedAt: null });
  const rows: { name: string; loop: Partial<LoopRecord>; goals?: GoalRecord[]; glyph: string; tone: LoopView['tone']; text: string }[] = [
    { name: 'armed, never run', loop: {}, glyph: '↻', tone: 'waiting', text: 'scheduled' },
    { name: 'armed after an achieved run', loop: { lastGoalId: 'g1', lastOutcome: 'achieved' }, goals: [goal('g1')], glyph: '↻', tone: 'waiting', text: 'scheduled' },
    { name: 'its run is live', loop: { lastGoalId: 'g2', lastOutcome: 'active' }, goals: [goal('g1'), running], glyph: '▶', tone: 'running', text: 'running' },
    { name: 'its run is paused', loop: { lastGoalId: 'g2', lastOutcome: 'active' }, goals: [paused], glyph: '‖', tone: 'paused', text: 'run paused (usage-limited)' },
    { name: 'waiting for its workspace', loop: { waiting: true }, glyph: '…', tone: 'waiting', text: 'waiting (workspace busy)' },
    { name: 'no run armed', loop: { nextRunAt: null }, glyph: '◌', tone: 'waiting', text: 'no run armed' },
    { name: 'a config error wins over a live run', loop: { configError: 'loops[0].every: bad', lastGoalId: 'g2' }, goals: [running], glyph: '!', tone: 'failed', text: 'config error' },
    { name: 'stopped wins over everything', loop: { stopped: true, waiting: true, configError: 'x' }, glyph: '■', tone: 'paused', text: 'stopped' },
  ];
  it.each(rows)('$name', (row) => {
    const derived = view(loop(row.loop), row.goals);
    expect({ glyph: derived.glyph, tone: derived.tone, text: derived.statusText }).toEqual({ glyph: row.glyph, tone: row.tone, text: row.text });
  });
});

describe('deriveLoopView: schedule and next run', () => {
  const rows: { name: string; loop: Partial<LoopRecord>; schedule: string; nextRunAt: string | null; inMs: number | null }[] = [
    { name: 'a duration', loop: {}, schedule: 'every 30m', nextRunAt: '2026-12-02T10:30:00.000Z', inMs: 30 * 60_000 },
    { name: 'a cron expression', loop: { every: '0 9 * * 1-5', nextRunAt: '2026-12-03T09:00:00.000Z' }, schedule: 'cron 0 9 * * 1-5', nextRunAt: '2026-12-03T09:00:00.000Z', inMs: 23 * 3_600_000 },
    { name: 'an overdue run is due now', loop: { nextRunAt: '2026-12-02T09:59:00.000Z' }, schedule: 'every 30m', nextRunAt: '2026-12-02T09:59:00.000Z', inMs: 0 },
    { name: 'none armed', loop: { nextRunAt: null }, schedule: 'every 30m', nextRunAt: null, inMs: null },
    { name: 'a stopped loop has no next run', loop: { stopped: true }, schedule: 'every 30m', nextRunAt: null, inMs: null },
  ];
  it.each(rows)('$name', (row) => {
    const derived = view(loop(row.loop));
    expect({ schedule: derived.scheduleText, nextRunAt: derived.nextRunAt, inMs: derived.nextRunInMs }).toEqual({ schedule: row.schedule, nextRunAt: row.nextRunAt, inMs: row.inMs });
  });
});

describe('deriveLoopView: runs', () => {
  const failed = goal('g1', { status: 'failed', phase: 'failed', reason: 'stagnation', createdAt: '2026-12-02T08:30:00.000Z' });
  const achieved = goal('g2', { createdAt: '2026-12-02T09:00:00.000Z', summary: { ...createEmptySummary(), turns: 1 } });
  const rows: { name: string; loop: Partial<LoopRecord>; goals: GoalRecord[]; last: string | null; recent: string[] }[] = [
    { name: 'never run', loop: {}, goals: [], last: null, recent: [] },
    {
      name: "runs newest first, the last from its goal's record",
      loop: { lastGoalId: 'g2', lastOutcome: 'active', runs: 2 },
      goals: [failed, achieved, goal('g9', { loopId: 'l2' }), goal('g8', { loopId: null })],
      last: 'g2 ✔ achieved 2026-12-02T09:00:00.000Z 1',
      recent: ['g2 ✔ achieved', 'g1 ✖ failed (stagnation)'],
    },
    {
      name: "a pruned last run: the loop's record says what it knows",
      loop: { lastGoalId: 'g3', lastOutcome: 'failed', runs: 3 },
      goals: [failed, achieved],
      last: 'g3 ✖ failed null null',
      recent: ['g2 ✔ achieved', 'g1 ✖ failed (stagnation)'],
    },
    {
      name: 'at most five runs',
      loop: { lastGoalId: 'g6', lastOutcome: 'achieved' },
      goals: [1, 2, 3, 4, 5, 6].map((n) => goal(`g${n}`, { createdAt: `2026-12-02T0${n}:00:00.000Z` })),
      last: 'g6 ✔ achieved 2026-12-02T06:00:00.000Z 3',
      recent: ['g6 ✔ achieved', 'g5 ✔ achieved', 'g4 ✔ achieved', 'g3 ✔ achieved', 'g2 ✔ achieved'],
    },
  ];
  it.each(rows)('$name', (row) => {
    const derived = view(loop(row.loop), row.goals);
    const last = derived.lastRun;
    expect(last === null ? null : `${last.goalId} ${last.glyph} ${last.statusText} ${last.startedAt} ${last.turns}`).toBe(row.last);
    expect(derived.recentRuns.map((run) => `${run.goalId} ${run.glyph} ${run.statusText}`)).toEqual(row.recent);
  });
});

describe('deriveLoopView: text', () => {
  it('a loop without a condition runs the goal goal.config.json declares', () => {
    const derived = view(loop({ condition: null, source: 'config', name: 'nightly' }));
    expect([derived.condition, derived.source, derived.name]).toEqual(['(goal from goal.config.json)', 'config', 'nightly']);
  });

  it("the terminal's view escapes the condition, the workspace, the name and the config error; the record's text stays data", () => {
    const record = loop({ condition: 'a \u001b]0;owned\u0007 b', workspace: '/ws/\u001b[2J', name: 'n\u0007', configError: 'bad \u009b31m' });
    const raw = view(record);
    expect(raw.condition).toBe('a \u001b]0;owned\u0007 b');
    const shown = terminalView(raw);
    expect([shown.condition, shown.workspace, shown.name, shown.configError]).toEqual(['a \\u001b]0;owned\\u0007 b', '/ws/\\u001b[2J', 'n\\u0007', 'bad \\u009b31m']);
    expect(shown.nextRunInMs).toBe(raw.nextRunInMs);
  });
});
