// The supervisor in-process with real collaborators (store, git snapshots, checks) and a scripted agent:
// an AgentAdapter written for the test (the contract, not a module mock), so structured-agent outcomes —
// usage limits, permission denials, tool calls — can be driven exactly.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/agents/types.js';
import { DEFAULT_SANDBOX } from '../../src/config/defaults.js';
import { createNoneEvaluator } from '../../src/evaluator/none-evaluator.js';
import { readRunningChecks } from '../../state/running-checks.js';
import { createCheckRunner } from '../../src/workspace/checks.js';
import type { GoalSupervisor } from '../../src/supervisor/supervisor.js';
import { expectToHold } from '../helpers/daemon.js';
import { deferred } from '../helpers/deferred.js';
import { waitingLeadersIn, waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { ScriptedAgent, setup, waitForEvent as waitFor, writeAnswer, type Step } from './support.js';

describe('supervisor', () => {
  it('pauses a usage-limited turn until the reset, then resumes by itself without counting a failure', async () => {
    const agent = new ScriptedAgent([
      () => ({ outcome: 'usage-limited', exitCode: 1, usageLimit: { resetAt: Date.now() + 300, message: 'usage limit; resets soon' } }),
      writeAnswer('42'),
    ]);
    const { supervisor, events, turns } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    const outcome = await supervisor.run();
    expect(outcome?.status).toBe('achieved');
    expect(events.find((event) => event.type === 'goal.paused')).toMatchObject({ reason: 'usage-limited' });
    expect(events.some((event) => event.type === 'goal.resumed')).toBe(true);
    const records = await turns();
    expect(records.map((turn) => turn.agent?.outcome ?? 'pre-check')).toEqual(['pre-check', 'usage-limited', 'completed']);
    expect(records[1]?.breakers.consecutiveAgentFailures).toBe(0);
    expect(records[2]?.breakers.consecutiveAgentFailures).toBe(0);
  });

  it("runs the checks beside the snapshot's write-tree and diffs, yet what a check writes is never in its own turn's tree", async () => {
    // Each check run appends a line: a turn's delta holds the line of the run before it (the pre-check's for
    // turn 1, so the file is new there), never the line its own check added while the snapshot was written.
    const agent = new ScriptedAgent([writeAnswer('1'), writeAnswer('42')]);
    const { supervisor, turns } = await setup({ checks: ['echo run >> check.log; grep -q 42 answer.txt'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    const records = await turns();
    const checkLog = (turn: number): unknown => records[turn]?.files.find((file) => file.path === 'check.log');
    expect(checkLog(1)).toMatchObject({ status: 'A', added: 1, deleted: 0 });
    expect(checkLog(2)).toMatchObject({ status: 'M', added: 1, deleted: 0 });
    expect(records.map((record) => record.checks[0]?.passed)).toEqual([false, false, true]);
  });

  it('fails with permission-denied after two turns whose tool calls were denied', async () => {
    const agent = new ScriptedAgent([() => ({ outcome: 'failed', exitCode: 0, permissionDenials: 3, error: 'tool calls denied' })]);
    const { supervisor } = await setup({ checks: ['false'], agent });
    const outcome = await supervisor.run();
    expect(outcome).toMatchObject({ status: 'failed', breaker: 'permission-denied', turns: 2 });
  });

  it("gives a turn state directory only to an agent that keeps turn state, and reads the hook's drift pause there", async () => {
    const plain = new ScriptedAgent([() => ({})]);
    const first = await setup({ checks: ['false'], agent: plain, limits: { maxTurns: 1 } });
    expect(await first.supervisor.run()).toMatchObject({ status: 'failed', breaker: 'max-turns' });
    expect(plain.inputs[0]?.stateDir).toBeUndefined();
    expect(existsSync(path.join(first.store.goalDir(first.goal.id), 'turn-1.state'))).toBe(false);

    // Claude Code's hook, or the builtin agent, asking for a pause from inside the turn.
    const hooked = Object.assign(
      new ScriptedAgent([
        async (input) => {
          if (input.stateDir === undefined || !existsSync(input.stateDir)) throw new Error('no state directory made for the turn');
          await writeFile(path.join(input.stateDir, 'drift-pause'), '{}\n');
          return {};
        },
      ]),
      { keepsTurnState: true },
    );
    const second = await setup({ checks: ['false'], agent: hooked });
    const run = second.supervisor.run();
    expect(await waitFor(second.events, (event) => event.type === 'goal.paused')).toMatchObject({ reason: 'drift' });
    expect((await second.turns()).at(-1)?.drift).toMatchObject({ pause: true });
    second.supervisor.stop();
    expect(await run).toMatchObject({ status: 'failed', failure: { reason: 'stopped' } });
  });

  it('warns about drift in the next prompt and pauses on persistent drift', async () => {
    const repeated: ToolCall[] = [1, 2, 3, 4].map(() => ({ name: 'Write', filePath: 'zzz/unrelated.log' }));
    const agent = new ScriptedAgent([() => ({ toolCalls: repeated })]);
    const { supervisor, events, turns, store, goal } = await setup({ checks: ['false'], agent, limits: { stagnation: 0 } });
    const run = supervisor.run();
    const paused = await waitFor(events, (event) => event.type === 'goal.paused');
    expect(paused).toMatchObject({ reason: 'drift' });
    const records = await turns();
    expect(records.at(-1)?.drift).toMatchObject({ circular: 1, pause: true });
    const secondPrompt = await readFile(path.join(store.goalDir(goal.id), 'turn-2.prompt.txt'), 'utf8');
    expect(secondPrompt.slice(secondPrompt.lastIndexOf('=== GOAL RECITATION'))).toMatch(/zzz\/unrelated\.log/);
    expect(agent.inputs).toHaveLength(3);
    supervisor.stop();
    expect(await run).toMatchObject({ status: 'failed', failure: { reason: 'stopped' } });
  });

  it('applies new settings from the next turn on', async () => {
    // Applied while turn 1 runs, from inside it (a test waiting for an event would race the next turn).
    let applyDuringTurn = (): void => undefined;
    const firstTurn: Step = async (input) => {
      await writeAnswer('1')(input);
      applyDuringTurn();
      return {};
    };
    const agent = new ScriptedAgent([firstTurn, writeAnswer('2'), writeAnswer('3'), writeAnswer('4')]);
    const { supervisor, settings, workspace } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    applyDuringTurn = () =>
      supervisor.applySettings(
        { ...settings, limits: { ...settings.limits, maxTurns: 2 } },
        { checks: createCheckRunner({ workspace: workspace.root, checks: settings.checks }), evaluator: createNoneEvaluator() },
      );
    expect(await supervisor.run()).toMatchObject({ status: 'failed', breaker: 'max-turns', turns: 2 });
  });

  it('suspends the agent on pause --now and continues it on resume', async () => {
    const { promise: gate, resolve: release } = deferred();
    const agent = new ScriptedAgent([
      async (input) => {
        await gate;
        return writeAnswer('42')(input);
      },
    ]);
    const { supervisor, events } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    const run = supervisor.run();
    await waitFor(events, (event) => event.type === 'turn.started');
    await supervisor.pause(true);
    expect(supervisor.status).toBe('paused');
    expect(agent.suspended).toBe(1);
    await supervisor.resume();
    expect(agent.resumed).toBe(1);
    expect(supervisor.phase).toBe('running');
    release();
    expect(await run).toMatchObject({ status: 'achieved', turns: 1 });
  });

  it('pauses at the turn boundary by default and starts no turn while paused', async () => {
    // Turn 1 is held until the pause is stored, so the pause is seen waiting for the turn's end (an agent
    // that returned at once could end the turn first: the goal would already be paused).
    const { promise: gate, resolve: release } = deferred();
    const agent = new ScriptedAgent([
      async (input) => {
        await gate;
        return writeAnswer('1')(input);
      },
      writeAnswer('42'),
    ]);
    const { supervisor, events } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    const run = supervisor.run();
    await waitFor(events, (event) => event.type === 'turn.started');
    await supervisor.pause(false);
    expect(supervisor.status).toBe('active');
    release();
    await waitFor(events, (event) => event.type === 'goal.paused');
    expect(agent.inputs).toHaveLength(1);
    await supervisor.resume();
    expect(await run).toMatchObject({ status: 'achieved', turns: 2 });
  });
});

// A foreground start begins its pre-check before its goal is registered (start-foreground.ts): the first
// check's process starts at once and runs nothing until registration admits the goal.
describe('supervisor: a pre-check begun before admission', () => {
  /** Registration's verdict, given by the test. */
  function verdict(): { admitted: Promise<void>; admit: () => void; refuse: (error: Error) => void } {
    const { promise, resolve, reject } = deferred();
    return { admitted: promise, admit: () => resolve(), refuse: reject };
  }

  /** abandonPrecheck(), which must settle once the check is ended, not when it would have ended by itself. */
  async function abandoned(supervisor: GoalSupervisor): Promise<void> {
    let settled = false;
    void supervisor.abandonPrecheck().then(() => (settled = true));
    await waitUntil('abandonPrecheck() to settle', () => settled, 5_000);
  }

  it('runs its check only once admitted, and run() records that check as the pre-check', async () => {
    const { supervisor, repo, goal, store, turns } = await setup({ checks: ['touch check-ran; grep -q 42 answer.txt'], agent: new ScriptedAgent([writeAnswer('42')]) });
    const { admitted, admit } = verdict();
    supervisor.beginPrecheck(admitted);
    await expect.poll(async () => (await readRunningChecks(store.goalDir(goal.id))).length).toBe(1);
    // Long past the snapshot's indexing (tens of ms): only the verdict holds the check now.
    await expectToHold('the held check to run nothing', 500, () => !existsSync(path.join(repo.dir, 'check-ran')));
    admit();
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 1 });
    const records = await turns();
    expect(records.map((turn) => turn.checks.map((check) => check.passed))).toEqual([[false], [true]]);
  });

  it('refused: abandonPrecheck ends the held check, none of which ran, and waits until it is gone', async () => {
    const { supervisor, repo, goal, store } = await setup({ checks: ['touch check-ran'], agent: new ScriptedAgent([]) });
    const { admitted, refuse } = verdict();
    supervisor.beginPrecheck(admitted);
    await expect.poll(async () => (await readRunningChecks(store.goalDir(goal.id))).length).toBe(1);
    const [held] = await readRunningChecks(store.goalDir(goal.id));
    refuse(new Error('goal x is already active here'));
    await abandoned(supervisor);
    await waitUntilGone(held?.pid ?? 0);
    expect(existsSync(path.join(repo.dir, 'check-ran'))).toBe(false);
  });

  it('admitted, then not registered after all (its write failed): abandonPrecheck ends the running check', async () => {
    const { supervisor, repo, goal, store } = await setup({ checks: ['touch check-started; exec sleep 600'], agent: new ScriptedAgent([]) });
    const { admitted, admit } = verdict();
    supervisor.beginPrecheck(admitted);
    admit();
    await expect.poll(() => existsSync(path.join(repo.dir, 'check-started'))).toBe(true);
    const [running] = await readRunningChecks(store.goalDir(goal.id));
    await abandoned(supervisor);
    await waitUntilGone(running?.pid ?? 0);
  });
});

describe("supervisor: the pre-check's record stored behind turn 1's start", () => {
  const recordedTurns = (file: string): number[] =>
    existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { turn: number }).turn) : [];

  it('starts turn 1 before the record of its pre-check is written, then keeps both in turn order', async () => {
    const seen: { turns: number[]; phase: unknown }[] = [];
    const agent = new ScriptedAgent([
      async (input) => {
        // The agent's first moment, read synchronously: nothing of the pre-check is on disk yet.
        const goalDir = path.dirname(input.promptPath);
        const state = JSON.parse(readFileSync(path.join(goalDir, '..', '..', 'state.json'), 'utf8')) as { goals: { id: string; phase: string }[] };
        seen.push({ turns: recordedTurns(path.join(goalDir, 'turns.jsonl')), phase: state.goals.find((goal) => goal.id === input.goalId)?.phase });
        await writeFile(path.join(input.workspace, 'answer.txt'), '42\n');
        return {};
      },
    ]);
    const { supervisor, turns, events } = await setup({ checks: ['grep -q 42 answer.txt'], agent });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 1 });
    expect(seen).toEqual([{ turns: [], phase: 'preparing' }]);
    expect((await turns()).map((record) => record.turn)).toEqual([0, 1]);
    const order = events.map((event) => event.type).filter((type) => type === 'precheck.finished' || type === 'turn.started');
    expect(order).toEqual(['precheck.finished', 'turn.started']);
  });

  it('stores it before returning from a run of one turn (a cluster worker\'s), which starts no agent', async () => {
    const agent = new ScriptedAgent([]);
    const { supervisor, turns } = await setup({ checks: ['false'], agent, limits: { maxTurns: 2 } });
    expect(await supervisor.run({ oneTurn: true })).toBeNull(); // let go after the pre-check's record
    expect((await turns()).map((record) => record.turn)).toEqual([0]);
    expect(agent.inputs).toHaveLength(0);
  });

  it("a pre-check record that cannot be written ends the goal failed / storage after the turn it let start", async () => {
    const agent = new ScriptedAgent([
      (input) => {
        // Before the record's append (a setImmediate away): the turn log becomes a directory, so it fails.
        mkdirSync(path.join(path.dirname(input.promptPath), 'turns.jsonl'));
        return {};
      },
    ]);
    const { supervisor, store, goal } = await setup({ checks: ['false'], agent, limits: { maxTurns: 3 } });
    expect(await supervisor.run()).toMatchObject({ status: 'failed', failure: { reason: 'storage' }, turns: 0 });
    expect(agent.inputs).toHaveLength(1); // no turn after it
    const stored = (await store.read()).goals.find((candidate) => candidate.id === goal.id);
    expect(stored).toMatchObject({ status: 'failed', reason: 'storage', reasonMessage: expect.stringContaining('turns.jsonl') });
  });
});

// A sandboxed goal's next agent process is started ahead (supervisor/next-turn-leader.ts).
describe('supervisor: the next turn started ahead in the sandbox', () => {
  it('hands each turn a process started ahead, and leaves none (nor its files) once the goal ends', async () => {
    const readied: boolean[] = [];
    const record = (step: Step): Step => (input) => {
      readied.push(input.ready !== undefined);
      return step(input);
    };
    const { supervisor, repo, goal, store, turns } = await setup({ checks: ['grep -q 42 answer.txt'], agent: new ScriptedAgent([record(writeAnswer('1')), record(writeAnswer('42'))]) });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    // Unsandboxed where bwrap does not work here: then no process is started ahead.
    const sandboxed = (await turns()).every((turn) => turn.sandbox === 'bwrap');
    expect(readied).toEqual(sandboxed ? [true, true] : [false, false]);
    await expect.poll(() => waitingLeadersIn(repo.dir)).toEqual([]);
    // Turn 3's process was readied while turn 2 was checked, then ended with the goal, and the files made
    // for its sandbox removed.
    expect(existsSync(path.join(store.goalDir(goal.id), 'turn-3.prompt.txt'))).toBe(false);
    expect(existsSync(path.join(store.goalDir(goal.id), 'turn-3.state'))).toBe(false);
  });

  it('unsandboxed, makes each turn\'s prompt and transcript files ahead, and removes the unused ones once the goal ends', async () => {
    const seen: { prompt: boolean; transcript: boolean }[] = [];
    const made: boolean[] = [];
    const agent = new ScriptedAgent([writeAnswer('1'), writeAnswer('42')].map((step): Step => (input) => {
      // Not yet while turn n's agent runs: they are made once its snapshot and checks have started.
      const next = path.join(path.dirname(input.promptPath), `turn-${input.turn + 1}`);
      seen.push({ prompt: existsSync(`${next}.prompt.txt`), transcript: existsSync(`${next}.log`) });
      return step(input);
    }));
    const { supervisor, goal, store, events } = await setup({
      checks: ['grep -q 42 answer.txt'],
      agent,
      sandbox: { ...DEFAULT_SANDBOX, mode: 'off' },
      onEvent: (event) => {
        // Made while the turn before was checked: there when the check's verdict is known.
        if (event.type !== 'turn.finished') return;
        const dir = store.goalDir(goal.id);
        made.push(existsSync(path.join(dir, `turn-${event.turn + 1}.prompt.txt`)) && existsSync(path.join(dir, `turn-${event.turn + 1}.log`)));
      },
    });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 2 });
    expect(events.filter((event) => event.type === 'turn.finished')).toHaveLength(2);
    expect(made).toEqual([true, true]);
    expect(seen).toEqual([{ prompt: false, transcript: false }, { prompt: false, transcript: false }]);
    // Turn 3's, made while turn 2 was checked, are gone with the goal; turn 2's hold what the turn wrote.
    const dir = store.goalDir(goal.id);
    expect([existsSync(path.join(dir, 'turn-3.prompt.txt')), existsSync(path.join(dir, 'turn-3.log'))]).toEqual([false, false]);
    expect(readFileSync(path.join(dir, 'turn-2.prompt.txt'), 'utf8')).toContain('answer.txt says 42');
  });
});
