// When the next turn starts at once, state.json says a turn ended with the next agent's spawn record
// instead of a write of its own (TurnWrites.record's withNextSpawn, supervisor/turn-writes.ts): one journaled write a turn.
// The turn's record is still flushed to turns.jsonl before the next agent starts, and a crash in between
// loses nothing of it (goal-recovery.ts catches the summary up from the records).

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnInput, TurnResult } from '../../src/agents/types.js';
import type { Store } from '../../state/types.js';
import { waitUntil } from '../helpers/wait.js';
import { ScriptedAgent, setup, writeAnswer, type Step } from './support.js';

// An agent that reports its spawn as runTurn begins, as the command and CLI agents do (their spawn is in
// runTurn's synchronous part). The pid is this test's own: alive, and nothing here signals it.
class SpawningAgent extends ScriptedAgent {
  override runTurn(input: TurnInput): Promise<TurnResult> {
    input.onSpawn?.(process.pid, 'test-token');
    return super.runTurn(input);
  }
}

interface GoalOnDisk {
  /** The turns turns.jsonl holds. */
  recorded: number[];
  /** The turns the goal's summary in state.json counts, and its tokens. */
  summaryTurns: number;
  summaryTokens: number;
}

// What the disk says of the goal, read synchronously (nothing can land in between).
function onDisk(input: TurnInput): GoalOnDisk {
  const goalDir = path.dirname(input.promptPath);
  const logPath = path.join(goalDir, 'turns.jsonl');
  const log = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
  const recorded = log.split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { turn: number }).turn);
  const state = JSON.parse(readFileSync(path.join(goalDir, '..', '..', 'state.json'), 'utf8')) as { goals: { id: string; summary: { turns: number; tokens: number } }[] };
  const summary = state.goals.find((goal) => goal.id === input.goalId)?.summary;
  return { recorded, summaryTurns: summary?.turns ?? -1, summaryTokens: summary?.tokens ?? -1 };
}

// Counts the writes of one goal's record (every write a running goal makes goes through updateGoal).
function countGoalWrites(store: Store): () => number {
  let writes = 0;
  const updateGoal = store.updateGoal.bind(store);
  store.updateGoal = (...args) => {
    writes += 1;
    return updateGoal(...args);
  };
  return () => writes;
}

// Turn n writes n to answer.txt, until turn `last` writes 42.
const stepsUntil = (last: number, also: (input: TurnInput) => void | Promise<void>): Step[] =>
  Array.from({ length: last }, (_, index) => async (input: TurnInput) => {
    await also(input);
    return writeAnswer(index + 1 === last ? '42' : String(index + 1))(input);
  });

describe("a turn's end stored with the next agent's spawn record", () => {
  it('flushes turn N to turns.jsonl before turn N+1 starts, and says it in state.json with N+1\'s one write', async () => {
    const seen: (GoalOnDisk & { turn: number; writes: number })[] = [];
    let writes = (): number => 0;
    const agent = new SpawningAgent(stepsUntil(3, (input) => void seen.push({ turn: input.turn, writes: writes(), ...onDisk(input) })));
    const { supervisor, store, goal, turns } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    writes = countGoalWrites(store);
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 3 });
    // At each agent's first moment: the turn before is in turns.jsonl, and state.json's summary does not
    // count it yet (the spawn record that says it is being written).
    expect(seen.map(({ turn, recorded, summaryTurns }) => ({ turn, recorded, summaryTurns }))).toEqual([
      { turn: 1, recorded: [], summaryTurns: 0 }, // the pre-check's record is stored behind turn 1's start
      { turn: 2, recorded: [0, 1], summaryTurns: 0 },
      { turn: 3, recorded: [0, 1, 2], summaryTurns: 1 },
    ]);
    // From turn 2's spawn to turn 3's: turn 3's spawn record only, no write for turn 2's end.
    expect((seen[2]?.writes ?? 0) - (seen[1]?.writes ?? 0)).toBe(1);
    expect((await turns()).map((record) => record.turn)).toEqual([0, 1, 2, 3]);
    const stored = (await store.read()).goals.find((candidate) => candidate.id === goal.id);
    expect(stored).toMatchObject({ status: 'achieved', runningAgent: null, summary: { turns: 3, tokens: 45 } });
  });

  it('stores the turn before while the next runs when its agent reports no spawn as runTurn begins', async () => {
    const later: GoalOnDisk[] = [];
    const agent = new ScriptedAgent(
      stepsUntil(2, async (input) => {
        if (input.turn !== 2) return;
        // Bounded: a write that never comes fails the assertion below with what was seen.
        later.push(await waitUntil('turn 1 counted in state.json', () => onDisk(input).summaryTurns === 1 && onDisk(input), 10_000).catch(() => onDisk(input)));
      }),
    );
    const { supervisor } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    expect(later).toEqual([{ recorded: [0, 1], summaryTurns: 1, summaryTokens: 15 }]);
  });

  it('announces no turn whose record could not be written, and starts none after it', async () => {
    const agent = new SpawningAgent(
      stepsUntil(3, (input) => {
        if (input.turn !== 2) return;
        // Turn 2's record cannot be written: the turn log is a directory from now on.
        const log = path.join(path.dirname(input.promptPath), 'turns.jsonl');
        renameSync(log, `${log}.before`);
        mkdirSync(log);
      }),
    );
    const { supervisor, events } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', failure: { reason: 'storage' } });
    expect(agent.inputs.map((input) => input.turn)).toEqual([1, 2]);
    const finished = events.flatMap((event) => (event.type === 'turn.finished' ? [event.turn] : []));
    expect(finished).toEqual([1]);
  });

  it('stores a turn with a write of its own before a cool-down', async () => {
    const seen: GoalOnDisk[] = [];
    const agent = new SpawningAgent(stepsUntil(2, (input) => void seen.push(onDisk(input))));
    const { supervisor } = await setup({ checks: ['grep -q 42 answer.txt'], agent, limits: { cooldownMs: 20 } });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    expect(seen[1]).toEqual({ recorded: [0, 1], summaryTurns: 1, summaryTokens: 15 });
  });

  it('a daemon that died between turn N\'s record and turn N+1\'s write resumes with turn N counted, and runs N+1', async () => {
    // What a crash at turn 2's first moment leaves: state.json and turns.jsonl as they are then.
    let image: { state: string; log: string; statePath: string; logPath: string } | null = null;
    let supervisor: { detach(): void } | null = null;
    const agent = new SpawningAgent(
      stepsUntil(3, (input) => {
        if (input.turn !== 2) return;
        const goalDir = path.dirname(input.promptPath);
        const statePath = path.join(goalDir, '..', '..', 'state.json');
        const logPath = path.join(goalDir, 'turns.jsonl');
        image = { state: readFileSync(statePath, 'utf8'), log: readFileSync(logPath, 'utf8'), statePath, logPath };
        supervisor?.detach();
      }),
    );
    const goal = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    supervisor = goal.supervisor;
    expect(await goal.supervisor.run()).toBeNull();
    if (image === null) throw new Error('turn 2 never started');
    const { state, log, statePath, logPath } = image;
    // The crash image, its goal a daemon's (a foreground goal whose process died is failed instead).
    const crashed = JSON.parse(state) as { goals: { id: string; owner: unknown; summary: { turns: number } }[] };
    for (const stored of crashed.goals) stored.owner = { kind: 'daemon', pid: process.pid };
    expect(crashed.goals[0]?.summary.turns).toBe(0);
    writeFileSync(statePath, JSON.stringify(crashed));
    writeFileSync(logPath, log);

    const next = new SpawningAgent([writeAnswer('42')]);
    expect(await goal.recover(next)).toMatchObject({ status: 'achieved', turns: 2, tokens: 30 });
    expect(next.inputs.map((input) => input.turn)).toEqual([2]); // turn 1 not run again
    const records = await goal.turns();
    expect(records.map((record) => [record.turn, record.agent?.outcome ?? null])).toEqual([[0, null], [1, 'completed'], [2, 'completed']]);
    expect(records.at(-1)?.breakers).toMatchObject({ turns: 2, tokens: 30 });
  });
});
