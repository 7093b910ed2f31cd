// End to end: `goald pause --now` suspends the agent's whole process group (SIGSTOP) and `resume`
// continues it (SIGCONT); time spent paused does not count toward the turn timeout.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectToHold, processState, readGoal, readTurns, submitGoal, waitForFinished, waitForPidFile } from '../helpers/daemon.js';
import { waitUntil } from '../helpers/wait.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox } from '../helpers/run-goald.js';

// Long enough that a turn timeout counting paused time would certainly fire (5 s timeout < 2 s of work +
// this pause), short enough to keep the test quick.
const PAUSE_WINDOW_MS = 3_500;

describe('goald pause --now', () => {
  it('stops the agent and its child (state T), starts nothing while paused, and resume runs the turn to completion within its timeout', async () => {
    const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    const leaderFile = path.join(sandbox.root, 'leader.pid');
    const childFile = path.join(sandbox.root, 'child.pid');
    // About 2 s of work in ten steps (long enough for `goald pause --now` to land mid-turn on a loaded
    // machine); each step is a `sleep 0.2`, so time spent stopped is not work done.
    const agent =
      `echo $$ > ${leaderFile}; ` +
      `sh -c 'echo $$ > ${childFile}; i=0; while [ $i -lt 10 ]; do sleep 0.2; i=$((i+1)); done'; ` +
      'echo done >> out.txt';
    const { id } = await submitGoal(sandbox, [
      'out.txt exists', '-C', workspace.dir, '--cooldown', '0', '--turn-timeout', '5s', '--max-turns', '1',
      '--check', 'test -f out.txt', '--agent', agent,
    ]);
    const leader = await waitForPidFile(leaderFile);
    const child = await waitForPidFile(childFile);

    const pause = await sandbox.run(['pause', id, '--now']);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout.trim()).toBe(`goal ${id} paused (agent suspended)`);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'paused', pauseReason: 'requested' });
    await waitUntil('both processes stopped', () => processState(leader) === 'T' && processState(child) === 'T', 5_000);

    // While paused: the group stays stopped, the turn does not end, no check or new turn starts.
    const pausedAt = Date.now();
    await expectToHold('the agent stays stopped and the goal paused', PAUSE_WINDOW_MS, () =>
      processState(leader) === 'T' &&
      processState(child) === 'T' &&
      !existsSync(path.join(workspace.dir, 'out.txt')) &&
      readGoal(sandbox, id).status === 'paused',
    );
    expect(await readTurns(sandbox, id)).toHaveLength(1); // only the pre-check

    const resume = await sandbox.run(['resume', id]);
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout.trim()).toBe(`goal ${id} resumed`);
    const pausedMs = Date.now() - pausedAt;

    const finished = await waitForFinished(sandbox, id);
    expect(finished.status).toBe('achieved');
    const turn = (await readTurns(sandbox, id)).find((record) => record.turn === 1);
    expect(turn?.agent?.outcome).toBe('completed');
    // The turn's recorded duration excludes the time it spent stopped.
    const wallMs = Date.parse(turn?.finishedAt ?? '') - Date.parse(turn?.startedAt ?? '');
    expect(turn?.agent?.durationMs).toBeLessThan(wallMs - PAUSE_WINDOW_MS + 500);
    expect(pausedMs).toBeGreaterThan(PAUSE_WINDOW_MS);
    expect(existsSync(path.join(workspace.dir, 'out.txt'))).toBe(true);
  });
});
