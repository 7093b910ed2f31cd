// End to end: `goald status` answered from the daemon's status snapshot (src/daemon/status-snapshot.ts)
// by the built CLI against a real daemon. The snapshot is proved to be what answered by moving the socket
// aside (a status that needed it would say the daemon is not running), and proved never to outlive the
// truth: a change through the daemon shows at once, another process's write of state.json, a killed
// daemon and a stopped one each send status back to the socket (or the store).

import { copyFileSync, existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatedAgent, rawRequest, stepsCheck, submitGoal, waitForPidFile } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { stopDaemon } from '../helpers/loops.js';
import { waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { goaldSandbox, sandboxDaemonPid, type GoaldSandbox } from '../helpers/run-goald.js';

const FAST = ['--cooldown', '0'];

interface StatusJson {
  daemon: boolean;
  goals: { id: string; status: string }[];
}

async function statusJson(sandbox: GoaldSandbox): Promise<StatusJson & { stderr: string }> {
  const run = await sandbox.run(['status', '--json']);
  expect(run.code, run.stderr).toBe(0);
  return { ...(JSON.parse(run.stdout) as StatusJson), stderr: run.stderr };
}

// What the daemon answers over the socket for a plain `goald status`.
async function socketGoals(sandbox: GoaldSandbox): Promise<unknown> {
  const reply = await rawRequest(sandbox.socket, 'GET', '/v1/goals?status=active%2Cpaused');
  expect(reply.status).toBe(200);
  return (reply.json as { goals: unknown }).goals;
}

// Runs `body` with the daemon's socket moved aside: a `goald status` that answers meanwhile did not use it.
async function withoutSocket<T>(sandbox: GoaldSandbox, body: () => Promise<T>): Promise<T> {
  const aside = `${sandbox.socket}.aside`;
  renameSync(sandbox.socket, aside);
  try {
    return await body();
  } finally {
    renameSync(aside, sandbox.socket);
  }
}

// A daemon running one goal whose first turn is held at its gate (the test opens the gates).
async function goalInItsFirstTurn(): Promise<{ sandbox: GoaldSandbox; agent: ReturnType<typeof gatedAgent>; id: string }> {
  const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  const sandbox = await goaldSandbox();
  const agent = gatedAgent(sandbox.root);
  const { id } = await submitGoal(sandbox, ['two steps', '-C', workspace.dir, ...FAST, '--check', stepsCheck(2), '--agent', agent.command]);
  await waitForPidFile(agent.agentPidFile(1));
  return { sandbox, agent, id };
}

// `goald status --json` once it answers from the snapshot (the socket aside), after the daemon's writes settle.
function statusFromSnapshot(sandbox: GoaldSandbox, what: string): Promise<StatusJson & { stderr: string }> {
  return waitUntil(what, async () => {
    const fromFile = await withoutSocket(sandbox, () => statusJson(sandbox));
    return fromFile.daemon ? fromFile : false;
  });
}

describe('goald status from the daemon status snapshot', () => {
  it('answers without the socket exactly as the socket would, and follows each change', async () => {
    const { sandbox, agent, id } = await goalInItsFirstTurn();

    // Once the daemon has written the turn's start, the file answers, and says what the socket says.
    const settled = await waitUntil('status answers from the snapshot as the socket does', async () => {
      const fromFile = await withoutSocket(sandbox, () => statusJson(sandbox));
      const expected = await socketGoals(sandbox);
      return fromFile.daemon && JSON.stringify(fromFile.goals) === JSON.stringify(expected) ? fromFile : false;
    });
    expect(settled).toMatchObject({ daemon: true, goals: [{ id, status: 'active' }], stderr: '' });
    const box = await withoutSocket(sandbox, () => sandbox.run(['status']));
    expect(box.stdout).toContain(`id ${id} · active · running`);

    // A change made through the daemon shows at once (the snapshot is written before the daemon answers,
    // or status finds it stale and asks the socket).
    expect((await sandbox.run(['pause', id, '--now'])).code).toBe(0);
    expect((await statusJson(sandbox)).goals).toMatchObject([{ id, status: 'paused' }]);
    const paused = await statusFromSnapshot(sandbox, 'the paused goal in the snapshot');
    expect(paused.goals).toMatchObject([{ id, status: 'paused' }]);

    // Another process writes state.json (the same bytes, a new file): the snapshot names the version before,
    // so it no longer counts (test/daemon/status-snapshot.test.ts); through the socket the daemon reads the new
    // version and publishes it, and the file answers again.
    const state = path.join(sandbox.home, 'state.json');
    copyFileSync(state, `${state}.copy`);
    renameSync(`${state}.copy`, state);
    expect(await statusJson(sandbox)).toMatchObject({ daemon: true, goals: [{ id, status: 'paused' }] });
    expect(await withoutSocket(sandbox, () => statusJson(sandbox))).toMatchObject({ daemon: true, goals: [{ id, status: 'paused' }] });

    expect((await sandbox.run(['resume', id])).code).toBe(0);
    expect((await statusJson(sandbox)).goals).toMatchObject([{ id, status: 'active' }]);
    await agent.open(1);
    await agent.open(2);
  });

  it('a killed daemon leaves its snapshot behind, which status does not believe; a stopped one removes it', async () => {
    const { sandbox, agent, id } = await goalInItsFirstTurn();
    const snapshot = path.join(sandbox.home, 'status.json');
    expect(existsSync(snapshot)).toBe(true);

    const pid = sandboxDaemonPid(sandbox) as number;
    process.kill(pid, 'SIGKILL');
    await waitUntilGone(pid);
    await agent.open(1); // the orphaned agent ends; the next daemon records its turn as interrupted
    expect(existsSync(snapshot)).toBe(true);
    const orphaned = await statusJson(sandbox);
    expect(orphaned).toMatchObject({ daemon: false, goals: [{ id, status: 'active' }] });
    expect((await sandbox.run(['status'])).stderr).toContain('the daemon is not running; showing stored state');

    // The next daemon recovers the goal and publishes its own; `daemon stop` takes the file away.
    expect((await sandbox.run(['daemon'])).code).toBe(0);
    const recovered = await statusFromSnapshot(sandbox, "the new daemon's snapshot");
    expect(recovered.goals).toMatchObject([{ id, status: 'active' }]);
    await agent.open(2);
    // `daemon stop` returns once the daemon has taken the request; it exits after its shutdown, which ends
    // the goal's agent (SIGKILL after 5 s): stopDaemon waits up to 10 s for the process to be gone.
    await stopDaemon(sandbox);
    expect(existsSync(snapshot)).toBe(false);
    expect(sandboxDaemonPid(sandbox)).toBeNull();
  });
});
