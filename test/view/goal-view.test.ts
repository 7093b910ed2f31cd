// The view state (src/view/goal-view.ts): tables of event sequences and goal records in, what every view
// shows out. Pure, so each row is a whole story.

import { describe, expect, it } from 'vitest';
import { deriveGoalView, type GoalView } from '../../src/view/goal-view.js';
import { terminalView } from '../../src/view/terminal-view.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';
import { createEmptySummary } from '../../state/state-schema.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';

const NOW = Date.parse('2026-12-02T10:00:00.000Z');
const LIMITS = {
  maxTurns: 10,
  tokenBudget: 100_000,
  costBudgetUsd: 5,
  stagnation: 5,
  repeatedDiff: { count: 3, window: 6 },
  oscillation: 3,
  agentFailures: 3,
  evaluatorFailures: 3,
  permissionDenials: 2,
  tamper: 2,
};

function goal(overrides: Partial<GoalRecord> = {}): GoalRecord {
  return {
    id: 'g1',
    condition: 'all tests pass',
    workspace: '/ws',
    status: 'active',
    phase: 'running',
    createdAt: '2026-12-02T09:50:00.000Z',
    updatedAt: '2026-12-02T09:59:00.000Z',
    startedAt: '2026-12-02T09:50:00.000Z',
    finishedAt: null,
    reason: null,
    reasonMessage: null,
    pauseReason: null,
    loopId: null,
    settings: { limits: LIMITS },
    machine: null,
    summary: createEmptySummary(),
    owner: { kind: 'daemon', pid: 1 },
    runningAgent: null,
    ...overrides,
  };
}

type Finished = Extract<ProgressEvent, { type: 'turn.finished' }>;

function turn(n: number, overrides: Partial<Finished> = {}): Finished {
  return {
    type: 'turn.finished',
    id: 'g1',
    turn: n,
    maxTurns: 10,
    outcome: 'completed',
    durationMs: 1000,
    tokens: 1000 * n,
    tokensEstimated: false,
    filesChanged: 1,
    checks: [{ name: 'test', passed: false }],
    verdict: { achieved: false, reason: `reason ${n}` },
    evaluatorError: null,
    agentError: null,
    tamper: [],
    view: { costUsd: 0.1, remaining: ['a', 'b'], files: ['src/a.ts'], breakers: { stagnation: 0 } },
    ...overrides,
  };
}

const started = (n: number): ProgressEvent => ({ type: 'turn.started', id: 'g1', turn: n, maxTurns: 10 });

function view(record: GoalRecord, events: ProgressEvent[], loop: LoopRecord | null = null): GoalView {
  return deriveGoalView({ goal: record, events, loop, now: NOW });
}

describe('deriveGoalView: status', () => {
  const rows: { name: string; record: Partial<GoalRecord>; glyph: string; tone: GoalView['tone']; text: string }[] = [
    { name: 'running', record: { phase: 'running' }, glyph: '▶', tone: 'running', text: 'running' },
    { name: 'checking', record: { phase: 'checking' }, glyph: '▶', tone: 'running', text: 'checking' },
    { name: 'with a pause pending', record: { phase: 'checking', machine: { context: { turn: 2, pausePending: true } } }, glyph: '▶', tone: 'running', text: 'checking · pausing after this turn' },
    { name: 'cooling down', record: { phase: 'coolingDown' }, glyph: '◌', tone: 'waiting', text: 'cooling down' },
    { name: 'queued', record: { phase: 'queued' }, glyph: '…', tone: 'waiting', text: 'queued' },
    { name: 'paused for drift', record: { status: 'paused', phase: 'paused', pauseReason: 'drift' }, glyph: '‖', tone: 'paused', text: 'paused (drift)' },
    { name: 'achieved', record: { status: 'achieved', phase: 'achieved' }, glyph: '✔', tone: 'achieved', text: 'achieved' },
    { name: 'failed', record: { status: 'failed', phase: 'failed', reason: 'stagnation' }, glyph: '✖', tone: 'failed', text: 'failed (stagnation)' },
    { name: 'not recovered while running', record: { phase: 'running', notRecovered: 'x' }, glyph: '!', tone: 'failed', text: 'not running: could not be recovered' },
    { name: 'not recovered while paused', record: { status: 'paused', phase: 'paused', notRecovered: 'x' }, glyph: '!', tone: 'failed', text: 'not running: could not be recovered' },
    { name: 'stopped after it was not recovered', record: { status: 'failed', phase: 'failed', reason: 'stopped', notRecovered: 'x' }, glyph: '✖', tone: 'failed', text: 'failed (stopped)' },
  ];
  it.each(rows)('$name', ({ record, glyph, tone, text }) => {
    const shown = view(goal(record), []);
    expect(shown).toMatchObject({ glyph, tone, statusText: text });
  });
});

describe('deriveGoalView: event sequences', () => {
  const rows: { name: string; events: ProgressEvent[]; record?: Partial<GoalRecord>; expected: Partial<GoalView> }[] = [
    {
      name: 'no events yet: turn 0 of 10, empty series, nothing near a breaker',
      events: [],
      expected: { turn: 0, turnText: '0/10', series: [], breakers: [], lastTurnFiles: null, providerErrors: [] },
    },
    {
      name: 'a turn in flight counts as the current turn',
      events: [started(1)],
      expected: { turn: 1, turnText: '1/10' },
    },
    {
      name: 'two turns: cumulative tokens, checks passing, remaining per turn',
      events: [
        started(1),
        turn(1),
        started(2),
        turn(2, { checks: [{ name: 'test', passed: true }, { name: 'lint', passed: false }], view: { costUsd: 0.2, remaining: ['b'], files: ['a', 'b'], breakers: { stagnation: 2 } } }),
      ],
      expected: {
        turn: 2,
        series: [
          { turn: 1, tokens: 1000, cumulativeTokens: 1000, costUsd: 0.1, filesChanged: 1, checksPassing: 0, checksTotal: 1, remaining: 2, outcome: 'completed', achieved: false, tampered: false },
          { turn: 2, tokens: 2000, cumulativeTokens: 3000, costUsd: 0.2, filesChanged: 1, checksPassing: 1, checksTotal: 2, remaining: 1, outcome: 'completed', achieved: false, tampered: false },
        ],
        evaluator: { reason: 'reason 2', remaining: ['b'] },
        lastTurnFiles: { turn: 2, count: 1, paths: ['a', 'b'] },
      },
    },
    {
      name: 'breaker proximity: nearest first, worded "stagnation 2 of 5"',
      events: [turn(1, { view: { costUsd: null, remaining: [], files: [], breakers: { stagnation: 2, 'repeated-diff': 2, oscillation: 0, 'agent-failures': 1 } } })],
      expected: {
        breakers: [
          { name: 'repeated-diff', value: 2, limit: 3, text: 'repeated diff 2 of 3' },
          { name: 'stagnation', value: 2, limit: 5, text: 'stagnation 2 of 5' },
          { name: 'agent-failures', value: 1, limit: 3, text: 'agent failures 1 of 3' },
          { name: 'oscillation', value: 0, limit: 3, text: 'oscillation 0 of 3' },
        ],
      },
    },
    {
      name: 'a turn without a verdict keeps the last reason; errors from agent and evaluator are listed',
      events: [
        turn(1),
        turn(2, { verdict: null, evaluatorError: '429 rate limited', agentError: 'exit 1', view: { costUsd: null, remaining: [], files: [], breakers: {} } }),
      ],
      expected: {
        evaluator: { reason: 'reason 1', remaining: ['a', 'b'] },
        providerErrors: [
          { turn: 2, source: 'agent', message: 'exit 1' },
          { turn: 2, source: 'evaluator', message: '429 rate limited' },
        ],
      },
    },
    {
      name: 'events from before views (no `view` field): series without cost, evaluator from the summary',
      events: [turn(1, { view: undefined, verdict: null })],
      record: { summary: { ...createEmptySummary(), lastVerdictReason: 'stored reason', remaining: ['x'] } },
      expected: {
        series: [{ turn: 1, tokens: 1000, cumulativeTokens: 1000, costUsd: null, filesChanged: 1, checksPassing: 0, checksTotal: 1, remaining: null, outcome: 'completed', achieved: null, tampered: false }],
        breakers: [],
        evaluator: { reason: 'stored reason', remaining: ['x'] },
        lastTurnFiles: { turn: 1, count: 1, paths: [] },
      },
    },
    {
      name: 'only the last 5 provider errors',
      events: [1, 2, 3, 4, 5, 6].map((n) => turn(n, { agentError: `e${n}` })),
      expected: { providerErrors: [2, 3, 4, 5, 6].map((n) => ({ turn: n, source: 'agent' as const, message: `e${n}` })) },
    },
    {
      name: 'a tampering turn is marked in the series',
      events: [turn(1, { tamper: [{ path: 't.test.ts', kind: 'deleted-test', detail: 'deleted' }] })],
      expected: { series: [expect.objectContaining({ tampered: true })] },
    },
  ];
  it.each(rows)('$name', ({ events, record, expected }) => {
    expect(view(goal(record), events)).toMatchObject(expected);
  });
});

describe('deriveGoalView: budgets, time, loops, endings', () => {
  it('tokens and cost against their budgets, active time from the start while running', () => {
    const shown = view(goal({ summary: { ...createEmptySummary(), tokens: 42_000, costUsd: 1.25, activeMs: 1000 } }), []);
    expect(shown.tokens).toEqual({ used: 42_000, budget: 100_000 });
    expect(shown.cost).toEqual({ usd: 1.25, budget: 5 });
    expect(shown.activeMs).toBe(10 * 60_000);
  });

  it('a paused goal shows its stored active time (paused time excluded) and why it is paused', () => {
    const shown = view(goal({ status: 'paused', phase: 'paused', pauseReason: 'usage-limited', summary: { ...createEmptySummary(), activeMs: 65_000 } }), []);
    expect(shown).toMatchObject({ activeMs: 65_000, pauseReason: 'usage-limited', stop: null });
  });

  it('no limits in the settings: no turn limit, no budgets, no gauges', () => {
    const shown = view(goal({ settings: {} }), [turn(1)]);
    expect(shown).toMatchObject({ maxTurns: null, turnText: '1', tokens: { budget: null }, cost: { budget: null }, breakers: [] });
  });

  it("the next run of the goal's loop; none when the loop was stopped", () => {
    const loop: LoopRecord = {
      id: 'l1', workspace: '/ws', every: '30m', condition: null, options: {}, source: 'cli', createdAt: '', nextRunAt: '2026-12-02T10:30:00.000Z',
      lastRunAt: null, lastGoalId: 'g1', lastOutcome: null, runs: 1, skipped: 0, waiting: false, catchUp: 'once', stopped: false,
    };
    expect(view(goal({ loopId: 'l1' }), [], loop).nextLoopRun).toBe('2026-12-02T10:30:00.000Z');
    expect(view(goal({ loopId: 'l1' }), [], { ...loop, stopped: true }).nextLoopRun).toBeNull();
  });

  const endings: { record: Partial<GoalRecord>; reason: string; action: RegExp }[] = [
    { record: { status: 'achieved' }, reason: 'achieved', action: /^review the changes in \/ws/ },
    { record: { status: 'failed', reason: 'max-turns', reasonMessage: '10 turns used (limit 10)' }, reason: 'max-turns', action: /^goald edit g1 --max-turns 20 --resume$/ },
    { record: { status: 'failed', reason: 'token-budget' }, reason: 'token-budget', action: /--token-budget .* --resume/ },
    { record: { status: 'failed', reason: 'stagnation' }, reason: 'stagnation', action: /goald show g1/ },
    { record: { status: 'failed', reason: 'stopped' }, reason: 'stopped', action: /goald start "all tests pass"/ },
    { record: { status: 'failed', reason: 'tamper' }, reason: 'tamper', action: /revert/ },
  ];
  it.each(endings)('a goal that ended on $reason says what to do next', ({ record, reason, action }) => {
    const shown = view(goal({ ...record, phase: record.status ?? 'failed' }), []);
    expect(shown.stop?.reason).toBe(reason);
    expect(shown.stop?.nextAction).toMatch(action);
    expect(shown.stop?.message).toBe(record.reasonMessage ?? null);
  });

  it('a live goal the daemon could not recover says why and that stop ends it; once stopped, it ended on stopped', () => {
    const why = "goal g1's stored state machine is unreadable (machine.value: …)";
    expect(view(goal({ phase: 'running', notRecovered: why }), []).stop).toEqual({ reason: 'not recovered', message: why, nextAction: 'goald stop g1' });
    expect(view(goal({ status: 'paused', phase: 'paused', notRecovered: why }), []).stop?.reason).toBe('not recovered');
    expect(view(goal({ status: 'failed', phase: 'failed', reason: 'stopped', notRecovered: why }), []).stop?.reason).toBe('stopped');
    expect(view(goal({ phase: 'running' }), []).stop).toBeNull();
  });
});

describe('agent text is data', () => {
  // A hostile agent's verdict reason, file name and error: OSC retitle, CSI cursor moves, a bare CR, C1.
  const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\rfake\u009b';
  const hostileEvents = [turn(1, { verdict: { achieved: false, reason: HOSTILE }, agentError: HOSTILE, view: { costUsd: 0, remaining: [HOSTILE], files: [HOSTILE], breakers: {} } })];

  it('the view keeps it as it came', () => {
    const shown = view(goal({ condition: HOSTILE }), hostileEvents);
    expect(shown.evaluator.reason).toBe(HOSTILE);
    expect(shown.lastTurnFiles?.paths).toEqual([HOSTILE]);
  });

  it('terminalView escapes every string: no control character reaches the terminal', () => {
    const shown = terminalView(view(goal({ condition: HOSTILE }), hostileEvents));
    const text = JSON.stringify(shown, (_key, value: unknown) => value);
    // eslint-disable-next-line no-control-regex -- the assertion is about control characters
    const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
    for (const value of [shown.condition, shown.evaluator.reason ?? '', ...shown.evaluator.remaining, ...(shown.lastTurnFiles?.paths ?? []), ...shown.providerErrors.map((e) => e.message)]) {
      expect(value).not.toMatch(controls);
      expect(value).toContain('\\u001b]0;pwned\\u0007');
    }
    expect(text).toContain('series');
    expect(shown.series).toEqual(view(goal(), hostileEvents).series); // numbers untouched
  });
});
