import { describe, expect, it } from 'vitest';

import { renderGoalBox, renderGoalLine, renderTurnRow } from '../../src/cli/render-status.js';
import { makeGoal, makeTurn } from '../state/fixtures.js';

// A goal of at most 20 turns whose machine was stored at turn `turn` (as the supervisor stores it when the
// agent of that turn starts), with `done` turns finished.
function goalAt(turn: number, done: number, overrides: Parameters<typeof makeGoal>[1] = {}): ReturnType<typeof makeGoal> {
  return makeGoal('gturns', {
    settings: { limits: { maxTurns: 20 } },
    machine: { status: 'active', value: { active: 'running' }, context: { turn } },
    summary: { ...makeGoal('x').summary, turns: done },
    ...overrides,
  });
}

describe('the turn goald status shows', () => {
  it('is the turn in flight while one runs, as goald watch shows it', () => {
    for (const phase of ['running', 'checking', 'evaluating']) {
      const goal = goalAt(1, 0, { phase });
      expect(renderGoalBox(goal)).toContain('turn 1/20 · 0 tokens');
      expect(renderGoalLine(goal)).toMatch(/ turn 1\/20 /);
    }
  });

  it('is the last turn finished between turns, once paused, and once over', () => {
    expect(renderGoalBox(goalAt(3, 3, { phase: 'coolingDown' }))).toContain('turn 3/20 ·');
    expect(renderGoalBox(goalAt(0, 0, { phase: 'preparing', machine: null }))).toContain('turn 0/20 ·');
    expect(renderGoalBox(goalAt(4, 3, { status: 'paused', phase: 'paused' }))).toContain('turn 3/20 ·');
    expect(renderGoalLine(goalAt(5, 5, { status: 'achieved', phase: 'achieved' }))).toMatch(/ turn 5\/20 /);
  });

  it('says when a pause asked for is pending', () => {
    const pending = goalAt(2, 1, { phase: 'evaluating', machine: { status: 'active', value: { active: 'evaluating' }, context: { turn: 2, pausePending: true } } });
    expect(renderGoalBox(pending)).toContain('active · evaluating · pausing after this turn');
    expect(renderGoalBox(goalAt(2, 1, { phase: 'evaluating' }))).toMatch(/active · evaluating +│/);
  });
});

describe('a live goal the daemon could not recover', () => {
  it('says it does not run, why, and how to end it; a goal stopped since is shown as failed', () => {
    const notRecovered = goalAt(1, 0, { phase: 'running', notRecovered: "goal gturns's stored state machine is unreadable (machine.value: …)" });
    const box = renderGoalBox(notRecovered);
    expect(box).toContain('id gturns · active · not running: could not be recovered');
    expect(box).toContain("not recovered: goal gturns's stored state machine is unreadable (machine.value: …)");
    expect(box).toContain('goald stop gturns records it as failed; its turns and transcripts are kept');
    expect(renderGoalLine(notRecovered)).toContain('active · not running: could not be recovered');
    const stopped = renderGoalBox({ ...notRecovered, status: 'failed', phase: 'failed', reason: 'stopped' });
    expect(stopped).toContain('id gturns · failed (stopped)');
    expect(stopped).not.toContain('not recovered');
  });
});

describe('goald show\'s turn rows', () => {
  it('count the files a turn changed in words that agree with the count', () => {
    const file = (path: string) => ({ path, status: 'A' as const, added: 1, deleted: 0 });
    expect(renderTurnRow(makeTurn({ files: [] }))).toContain(' 0 files ');
    expect(renderTurnRow(makeTurn({ files: [file('a')] }))).toContain(' 1 file ');
    expect(renderTurnRow(makeTurn({ files: [file('a'), file('b')] }))).toContain(' 2 files ');
  });

  it("name the guard's notes, what the judge was told it could not see; nothing when there are none", () => {
    const notes = [
      { path: 'node_modules/', kind: 'hidden-change' as const, detail: '1 file git ignores changed during the agent\'s turns' },
      { path: 'crate/', kind: 'nested-repo' as const, detail: 'a git repository of its own' },
    ];
    expect(renderTurnRow(makeTurn({ files: [], guardNotes: notes }))).toMatch(/ {2}notes: hidden-change node_modules\/; nested-repo crate\/$/);
    expect(renderTurnRow(makeTurn({ files: [], guardNotes: [] }))).not.toContain('notes:');
    expect(renderTurnRow(makeTurn({ files: [] }))).not.toContain('notes:');
  });
});
