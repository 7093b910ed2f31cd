// End to end: live configuration in a real daemon. The daemon watches each workspace's goal.config.json:
// a valid edit applies from the next turn of a running goal (never restarting the turn in flight) and
// re-reads the loops the file declares; an invalid edit is reported (daemon.log, `status`) and the last
// good configuration stays in force. An edit made while a turn runs is held until the owner applies it
// (`goald edit --apply-config`, test/e2e/contract.test.ts covers the holding itself); edits made between
// turns apply by themselves. Turns are gated by files the test creates, so no timing is guessed.

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '../../state/types.js';
import { expectToHold, gatedAgent, readGoal, readGoals, readTurns, submitGoal, waitForFinished, waitForPidFile } from '../helpers/daemon.js';
import { waitUntil } from '../helpers/wait.js';
import { expectOneLineError, isFinished, listLoops, loopOf, promptOf, repo, waitForRuns } from '../helpers/loops.js';
import { isProcessRunning } from '../helpers/processes.js';
import { goaldSandbox, type GoaldSandbox } from '../helpers/run-goald.js';

const CONFIG = 'goal.config.json';

function daemonLog(sandbox: GoaldSandbox): Promise<string> {
  return readFile(path.join(sandbox.home, 'daemon.log'), 'utf8').catch(() => '');
}

/** Waits for a daemon.log line that matches every pattern; returns the line. */
function waitForLogLine(sandbox: GoaldSandbox, what: string, ...patterns: RegExp[]): Promise<string> {
  return waitUntil(`daemon.log: ${what}`, async () =>
    (await daemonLog(sandbox)).split('\n').find((line) => patterns.every((pattern) => pattern.test(line))),
  );
}

/** How many daemon.log lines match every pattern. */
async function countLogLines(sandbox: GoaldSandbox, ...patterns: RegExp[]): Promise<number> {
  return (await daemonLog(sandbox)).split('\n').filter((line) => patterns.every((pattern) => pattern.test(line))).length;
}

/** The owner applies an edit the daemon held because it was made while a turn ran. */
async function applyHeldEdit(sandbox: GoaldSandbox, id: string): Promise<void> {
  await waitUntil(`goal ${id} to hold the edit`, () => Boolean(readGoal(sandbox, id).heldConfig));
  const applied = await sandbox.run(['edit', id, '--apply-config']);
  expect(applied.code, applied.stderr).toBe(0);
}

async function statusGoal(sandbox: GoaldSandbox, id: string): Promise<GoalRecord> {
  const run = await sandbox.run(['status', id, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const [goal] = (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals;
  return goal as GoalRecord;
}

describe('live configuration of a running goal', () => {
  it('a limits edit applies from the next turn; an invalid edit is reported and the last good config stays in force', async () => {
    const workspace = await repo({ [CONFIG]: JSON.stringify({ limits: { maxTurns: 50 } }) });
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['steady progress', '-C', workspace.dir, '--check', 'exit 1', '--cooldown', '0', '--agent', gate.command]);
    const agent = await waitForPidFile(gate.agentPidFile(1));
    const updated = new RegExp(`goal ${id}: configuration updated; applies from the next turn`);

    // Mid-turn edit: turn 1 keeps running (same agent process); the new limit waits for turn 2.
    await writeFile(workspace.path(CONFIG), JSON.stringify({ limits: { maxTurns: 3 } }));
    await applyHeldEdit(sandbox, id);
    await waitForLogLine(sandbox, 'the edit applied', updated);
    expect(isProcessRunning(agent)).toBe(true);
    expect(await readFile(gate.agentPidFile(1), 'utf8')).toBe(`${agent}\n`);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'active', phase: 'running', runningAgent: { pid: agent, turn: 1 } });

    // An invalid edit: named in the log (file and dot path) and on the goal; nothing else changes.
    await writeFile(workspace.path(CONFIG), JSON.stringify({ limits: { maxTurns: 'x' } }));
    const line = await waitForLogLine(sandbox, 'the invalid edit', /invalid edit ignored, the last good configuration stays in force/);
    expect(line).toContain(workspace.path(CONFIG));
    expect(line).toContain('limits.maxTurns');
    const reported = await waitUntil('status to show the config error', async () => {
      const goal = await statusGoal(sandbox, id);
      return goal.configError ? goal : undefined;
    });
    expect(reported.configError).toMatch(/goal\.config\.json.*limits\.maxTurns/);
    const human = await sandbox.run(['status', id]);
    expect(human.stdout).toContain('config error (last good config in force)');
    expect(isProcessRunning(agent)).toBe(true);

    // Turn 2 runs under the last good config (3 turns), not the default 20 nor the original 50.
    await gate.open(1);
    await waitForPidFile(gate.agentPidFile(2));
    expect(await promptOf(sandbox, id, 1)).toContain('=== GOAL RECITATION (turn 1 of 50) ===');
    expect(await promptOf(sandbox, id, 2)).toContain('=== GOAL RECITATION (turn 2 of 3) ===');
    expect(await countLogLines(sandbox, updated)).toBe(1);

    // Repairing the file clears the error.
    await writeFile(workspace.path(CONFIG), JSON.stringify({ limits: { maxTurns: 3 } }));
    await waitUntil('the error to clear', () => readGoal(sandbox, id).configError === null);
    expect((await statusGoal(sandbox, id)).configError).toBeNull();

    await gate.open(2);
    await waitForPidFile(gate.agentPidFile(3));
    await gate.open(3);
    const finished = await waitForFinished(sandbox, id);
    expect(finished).toMatchObject({ status: 'failed', reason: 'max-turns' });
    expect(finished.summary.turns).toBe(3);
    const turns = await readTurns(sandbox, id);
    expect(turns.map((turn) => turn.turn)).toEqual([0, 1, 2, 3]);
    // No turn was restarted or cut short by an edit.
    expect(turns.slice(1).map((turn) => turn.agent?.outcome)).toEqual(['completed', 'completed', 'completed']);
    expect(await readFile(workspace.path('steps.txt'), 'utf8')).toBe('1\n2\n3\n');
  });

  it('a checks edit applies to the next turn, not to the turn that was running', async () => {
    const workspace = await repo({ [CONFIG]: JSON.stringify({ checks: [{ name: 'never', run: 'exit 1' }] }) });
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['steps are recorded', '-C', workspace.dir, '--cooldown', '0', '--agent', gate.command]);
    await waitForPidFile(gate.agentPidFile(1));

    await writeFile(workspace.path(CONFIG), JSON.stringify({ checks: [{ name: 'steps', run: 'test -s steps.txt' }] }));
    await applyHeldEdit(sandbox, id);
    await waitForLogLine(sandbox, 'the edit applied', new RegExp(`goal ${id}: configuration updated`));
    await gate.open(1);
    await waitForPidFile(gate.agentPidFile(2));
    await gate.open(2);
    const finished = await waitForFinished(sandbox, id);
    expect(finished).toMatchObject({ status: 'achieved' });
    const turns = await readTurns(sandbox, id);
    // Turn 1 was checked with the checks it started with (steps.txt already existed then).
    expect(turns.map((turn) => [turn.turn, turn.checks.map((check) => [check.name, check.passed])])).toEqual([
      [0, [['never', false]]],
      [1, [['never', false]]],
      [2, [['steps', true]]],
    ]);
  });
});

describe('loops declared in goal.config.json', () => {
  const declaring = (every: string) =>
    JSON.stringify({
      agent: { command: 'true' },
      checks: [{ name: 'never', run: 'exit 1' }],
      limits: { maxTurns: 1, cooldown: '0' },
      loops: [{ name: 'heartbeat', every, goal: 'the declared goal holds' }],
    });

  it('are picked up for a workspace the daemon knows, listed apart, and stop when removed from the file', async () => {
    const workspace = await repo({ [CONFIG]: declaring('2s') });
    const sandbox = await goaldSandbox();
    // The daemon learns the workspace from a goal run there (already met: no agent turn).
    const quick = await sandbox.run(['start', 'the config exists', '-C', workspace.dir, '--check', 'test -f goal.config.json', '--wait']);
    expect(quick.code, quick.stderr).toBe(0);

    const declared = await waitUntil('the declared loop', async () =>
      (await listLoops(sandbox, { all: false })).loops.find((loop) => loop.source === 'config' && loop.workspace === workspace.dir),
    );
    expect(declared).toMatchObject({ every: '2s', condition: 'the declared goal holds', name: 'heartbeat', catchUp: 'once' });
    const [run] = await waitForRuns(sandbox, declared.id, 'a run', (goals) => goals.length >= 1);
    expect(run?.condition).toBe('the declared goal holds');
    await waitUntil('the run to finish', () => readGoals(sandbox).find((goal) => goal.id === run?.id && isFinished(goal)));
    expect(await promptOf(sandbox, run?.id ?? '')).toContain(`- Loop: loop ${declared.id} "heartbeat" (every 2s), run 1`);

    const human = await sandbox.run(['loop', 'list']);
    const section = human.stdout.slice(human.stdout.indexOf('declared in goal.config.json:'));
    expect(human.stdout).toContain('declared in goal.config.json:');
    expect(section).toContain(declared.id);
    expect(human.stdout).not.toContain('created with goald loop:');
    expectOneLineError(await sandbox.run(['loop', 'stop', declared.id]), /declared in .*goal\.config\.json.*remove it from that file/);

    // Removing it from the file stops it; its history stays. An edit that lands while one of its runs is
    // in a turn is held (test/e2e/contract.test.ts): the owner applies it.
    await writeFile(workspace.path(CONFIG), JSON.stringify({ agent: { command: 'true' }, checks: [{ run: 'exit 1' }] }));
    await waitUntil('the loop to stop', async () => {
      const holding = readGoals(sandbox).find((goal) => goal.workspace === workspace.dir && goal.heldConfig);
      if (holding) expect((await sandbox.run(['edit', holding.id, '--apply-config'])).code).toBe(0);
      return !(await listLoops(sandbox, { all: false })).loops.some((loop) => loop.id === declared.id);
    });
    await waitUntil('its last run to finish', () => readGoals(sandbox).filter((goal) => goal.loopId === declared.id).every(isFinished));
    const count = readGoals(sandbox).filter((goal) => goal.loopId === declared.id).length;
    await expectToHold('no run after the loop was removed', 2_500, () => readGoals(sandbox).filter((goal) => goal.loopId === declared.id).length === count);
    expect(await loopOf(sandbox, declared.id)).toMatchObject({ stopped: true, source: 'config' });
  });

  it("a run keeps its loop's own settings when the file is edited mid-run", async () => {
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    const config = {
      agent: { command: gate.command },
      checks: [{ name: 'never', run: 'exit 1' }],
      limits: { maxTurns: 50, cooldown: '0' },
      loops: [{ every: '1h', goal: 'the loop layer holds', limits: { maxTurns: 2 } }],
    };
    const workspace = await repo({ [CONFIG]: JSON.stringify(config) });
    const synced = await sandbox.run(['loop', 'sync', '-C', workspace.dir, '--json']);
    expect(synced.code, synced.stderr).toBe(0);
    const [loop] = (JSON.parse(synced.stdout) as { loops: { id: string }[] }).loops;
    const fired = await sandbox.run(['loop', 'run', loop?.id ?? '']);
    expect(fired.code, fired.stderr).toBe(0);
    const goalId = /goal (\S+) started/.exec(fired.stdout)?.[1] ?? '';
    await waitForPidFile(gate.agentPidFile(1));

    await writeFile(workspace.path(CONFIG), JSON.stringify({ ...config, mission: 'keep the loop layer' }));
    await applyHeldEdit(sandbox, goalId);
    await waitForLogLine(sandbox, 'the edit applied', new RegExp(`goal ${goalId}: configuration updated`));
    await gate.open(1);
    await waitForPidFile(gate.agentPidFile(2));
    expect(await promptOf(sandbox, goalId, 2)).toContain('=== GOAL RECITATION (turn 2 of 2) ===');
    await gate.open(2);
    const finished = await waitForFinished(sandbox, goalId);
    expect(finished).toMatchObject({ status: 'failed', reason: 'max-turns', loopId: loop?.id });
    expect(finished.summary.turns).toBe(2);
  });

  it('`goald loop sync` reads them for a workspace with no goal yet, and refuses an invalid file', async () => {
    const workspace = await repo({ [CONFIG]: declaring('1d') });
    const sandbox = await goaldSandbox();
    const synced = await sandbox.run(['loop', 'sync', '-C', workspace.dir]);
    expect(synced.stderr).toBe('');
    expect(synced.code).toBe(0);
    const id = /^loop (c\S+) every 1d in (.+); next run \S+$/.exec(synced.stdout.trim());
    expect(id?.[2]).toBe(workspace.dir);
    const again = await sandbox.run(['loop', 'sync', '-C', workspace.dir, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ workspace: workspace.dir, loops: [{ id: id?.[1], source: 'config', runs: 0 }] });

    // From now on the file is watched: a new declaration is picked up without another sync.
    await writeFile(workspace.path(CONFIG), declaring('12h'));
    const replaced = await waitUntil('the edited declaration', async () => {
      const loops = (await listLoops(sandbox, { all: false })).loops;
      return loops.length === 1 && loops[0]?.every === '12h' ? loops[0] : undefined;
    });
    expect(replaced.id).not.toBe(id?.[1]);

    await writeFile(workspace.path(CONFIG), JSON.stringify({ limits: { maxTurns: 'x' } }));
    expectOneLineError(await sandbox.run(['loop', 'sync', '-C', workspace.dir]), /goal\.config\.json.*limits\.maxTurns/);
    expect((await listLoops(sandbox, { all: false })).loops.map((loop) => loop.id)).toEqual([replaced.id]);
  });
});

