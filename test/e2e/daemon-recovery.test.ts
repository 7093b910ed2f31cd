// End to end: the daemon dies (kill -9) or is told to stop (SIGTERM) mid-turn, and the next daemon
// picks its goals up: leftover agent groups killed, the interrupted turn recorded, the goal continued;
// paused goals stay paused.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatedAgent, readGoal, readTurns, stepsCheck, submitGoal, waitForFinished, waitForGoal, waitForPidFile } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { isProcessRunning, waitUntilGone } from '../helpers/processes.js';
import { goaldSandbox, sandboxDaemonPid, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

function repo() {
  return gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
}

function daemonPid(sandbox: GoaldSandbox): number {
  const pid = sandboxDaemonPid(sandbox);
  expect(pid).not.toBeNull();
  return pid as number;
}

async function killDaemonHard(sandbox: GoaldSandbox): Promise<void> {
  const pid = daemonPid(sandbox);
  process.kill(pid, 'SIGKILL');
  await waitUntilGone(pid);
}

/** state.json parses as JSON and holds the goal. */
function expectValidState(sandbox: GoaldSandbox, id: string): void {
  const state = JSON.parse(readFileSync(`${sandbox.home}/state.json`, 'utf8')) as { goals: { id: string }[] };
  expect(state.goals.map((goal) => goal.id)).toContain(id);
}

describe('crash recovery', () => {
  it('after kill -9 mid-turn, the next daemon kills the leftover agent group, records the turn as interrupted, and achieves the goal', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['one step', '-C', workspace.dir, '--cooldown', '0', '--check', stepsCheck(1), '--agent', agent.command]);
    const leader = await waitForPidFile(agent.agentPidFile(1));
    const grandchild = await waitForPidFile(agent.childPidFile(1));
    await waitForGoal(sandbox, id, 'to record its running agent', (goal) => goal.runningAgent?.pid === leader);

    await killDaemonHard(sandbox);
    // The agent runs in its own process group: it outlives the daemon until someone cleans up.
    expect(isProcessRunning(leader)).toBe(true);
    expect(isProcessRunning(grandchild)).toBe(true);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'active', phase: 'running' });
    expectValidState(sandbox, id);

    // A stale socket and pid file are left behind; a new daemon starts anyway.
    const restarted = await sandbox.run(['daemon']);
    expect(restarted.code, restarted.stderr).toBe(0);
    await waitUntilGone(leader, 8_000);
    await waitUntilGone(grandchild, 8_000);

    // Turn 2 (a fresh turn after the interrupted one) passes its gate only when opened.
    await waitForPidFile(agent.agentPidFile(2));
    await agent.open(2);
    expect((await waitForFinished(sandbox, id)).status).toBe('achieved');

    const shown = await sandbox.run(['show', id, '--json']);
    expect(shown.code).toBe(0);
    const { turns } = JSON.parse(shown.stdout) as { turns: { turn: number; agent: { outcome: string } | null }[] };
    expect(turns.map((turn) => [turn.turn, turn.agent?.outcome ?? null])).toEqual([
      [0, null],
      [1, 'interrupted'],
      [2, 'completed'],
    ]);
    expectValidState(sandbox, id);
    expect(readGoal(sandbox, id).runningAgent).toBeNull();
  });

  it('keeps a paused goal paused across kill -9 and a restart; resume then runs it to the end', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['one step', '-C', workspace.dir, '--cooldown', '0', '--check', stepsCheck(1), '--agent', agent.command]);
    const leader = await waitForPidFile(agent.agentPidFile(1));
    const pause = await sandbox.run(['pause', id, '--now']);
    expect(pause.code, pause.stderr).toBe(0);

    await killDaemonHard(sandbox);
    await sandbox.run(['daemon']);
    await waitUntilGone(leader, 8_000); // a stopped group is continued, then killed
    const status = await sandbox.run(['status', id, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ daemon: true, goals: [{ id, status: 'paused' }] });
    expect(existsSync(agent.agentPidFile(2))).toBe(false);

    const resume = await sandbox.run(['resume', id]);
    expect(resume.code, resume.stderr).toBe(0);
    await waitForPidFile(agent.agentPidFile(2));
    await agent.open(2);
    expect((await waitForFinished(sandbox, id)).status).toBe('achieved');
    const outcomes = (await readTurns(sandbox, id)).map((turn) => turn.agent?.outcome ?? null);
    expect(outcomes).toEqual([null, 'interrupted', 'completed']);
  });

  it('shuts down cleanly on SIGTERM (agents stopped, socket removed, goal still active) and resumes on the next start', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['one step', '-C', workspace.dir, '--cooldown', '0', '--check', stepsCheck(1), '--agent', agent.command]);
    const leader = await waitForPidFile(agent.agentPidFile(1));
    const grandchild = await waitForPidFile(agent.childPidFile(1));

    const pid = daemonPid(sandbox);
    process.kill(pid, 'SIGTERM');
    await waitUntilGone(pid, 8_000);
    await waitUntilGone(leader);
    await waitUntilGone(grandchild);
    expect(existsSync(sandbox.socket)).toBe(false);
    expect(existsSync(`${sandbox.home}/daemon.pid`)).toBe(false);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'active', runningAgent: null });
    expect(readFileSync(`${sandbox.home}/daemon.log`, 'utf8')).toMatch(/received SIGTERM[\s\S]*stopped/);

    await sandbox.run(['daemon']);
    await waitForPidFile(agent.agentPidFile(2));
    await agent.open(2);
    expect((await waitForFinished(sandbox, id)).status).toBe('achieved');
    const outcomes = (await readTurns(sandbox, id)).map((turn) => turn.agent?.outcome ?? null);
    expect(outcomes).toEqual([null, 'interrupted', 'completed']);
    expectValidState(sandbox, id);
  });

  it('leaves a goal whose stored machine is unreadable as it was stored (with why), keeps the daemon and its other goals running, and lets stop end it', async () => {
    const sandbox = await goaldSandbox();
    const gated = (name: string) => {
      mkdirSync(path.join(sandbox.root, name));
      return gatedAgent(path.join(sandbox.root, name));
    };
    const [brokenAgent, healthyAgent] = [gated('broken'), gated('healthy')];
    const goal = (workspace: string, agent: string) => ['one step', '-C', workspace, '--cooldown', '0', '--check', stepsCheck(1), '--agent', agent];
    const broken = await submitGoal(sandbox, goal((await repo()).dir, brokenAgent.command));
    const healthy = await submitGoal(sandbox, goal((await repo()).dir, healthyAgent.command));
    const brokenLeader = await waitForPidFile(brokenAgent.agentPidFile(1));
    await waitForPidFile(healthyAgent.agentPidFile(1));
    await waitForGoal(sandbox, broken.id, 'to record its running agent', (record) => record.runningAgent?.pid === brokenLeader);
    await waitForGoal(sandbox, healthy.id, 'to record its running agent', (record) => record.runningAgent !== null);
    await killDaemonHard(sandbox);

    // A state the machine does not have: XState alone threw it from a timer, which ended the daemon.
    const stateFile = `${sandbox.home}/state.json`;
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { goals: { id: string; machine: { value: unknown } }[] };
    const stored = state.goals.find((record) => record.id === broken.id);
    if (stored === undefined) throw new Error('the broken goal is not in state.json');
    stored.machine.value = { active: 'sleeping' };
    writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
    const asStored = readGoal(sandbox, broken.id);

    const restarted = await sandbox.run(['daemon']);
    expect(restarted.code, restarted.stderr).toBe(0);
    const pid = daemonPid(sandbox);
    const noted = (): string | undefined => readGoal(sandbox, broken.id).notRecovered;
    await waitUntil('the daemon to give up on the broken goal, or to die', () => noted() !== undefined || !isProcessRunning(pid));
    expect(isProcessRunning(pid)).toBe(true);
    const why = `goal ${broken.id}'s stored state machine is unreadable (machine.value:`;
    expect(readFileSync(`${sandbox.home}/daemon.log`, 'utf8')).toContain(`goal ${broken.id}: could not be recovered: ${why}`);
    expect(noted()).toContain(why);
    await waitUntilGone(brokenLeader, 8_000); // its leftover agent group is killed all the same
    expect(readGoal(sandbox, broken.id)).toEqual({ ...asStored, notRecovered: noted() });
    const status = await sandbox.run(['status', broken.id]);
    expect(status.stdout).toContain(`id ${broken.id} · active · not running: could not be recovered`);
    expect(status.stdout).toContain(`goald stop ${broken.id} records it as failed`);

    // The other goal recovers and finishes.
    await waitForPidFile(healthyAgent.agentPidFile(2));
    await healthyAgent.open(2);
    expect((await waitForFinished(sandbox, healthy.id)).status).toBe('achieved');

    // Controls say why the broken goal does not run; stop records it as failed and keeps its turns.
    const pause = await sandbox.run(['pause', broken.id]);
    expect(pause.code).toBe(2);
    expect(pause.stderr).toContain(`goal ${broken.id} could not be recovered when the daemon started: goal ${broken.id}'s stored state machine is unreadable`);
    expect(pause.stderr).toContain(`goald stop ${broken.id} records it as failed; its turns and transcripts are kept`);
    const stop = await sandbox.run(['stop', broken.id]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(readGoal(sandbox, broken.id)).toMatchObject({ status: 'failed', reason: 'stopped' });
    expect(readGoal(sandbox, broken.id).reasonMessage).toMatch(/^stopped by the user after the daemon could not recover it \(goal \w+'s stored state machine is unreadable/);
    expect((await readTurns(sandbox, broken.id)).map((turn) => turn.turn)).toEqual([0]);
    expect(isProcessRunning(pid)).toBe(true);
  });
});
