// End to end (issue 12): a loop with `--worktree` makes each run a worktree goal on its own goald/<id>
// branch. Its runs do not wait for the user's in-place goal in the same workspace, and the user's checkout
// is untouched; runs of one loop never overlap: a run waits while the loop's previous goal is live (a
// hostile agent that never ends on its own) and starts once that goal ends.

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectToHold, readGoal, readGoals, submitGoal, waitForPidFile } from '../helpers/daemon.js';
import { ONE_TURN, createLoop, isFinished, repo, waitForRuns, waitForStoredLoop } from '../helpers/loops.js';
import { goaldSandbox } from '../helpers/run-goald.js';

describe('goald loop --worktree', () => {
  it('each run is a worktree goal beside a live in-place goal; runs of the loop never overlap', { timeout: 60_000 }, async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const signals = path.join(sandbox.root, 'signals');
    await mkdir(signals);
    // The user's own goal, in place, live for the whole test.
    const inPlace = await submitGoal(sandbox, ['in place', '-C', workspace.dir, '--check', 'false', '--cooldown', '0', '--agent', `echo $$ > ${signals}/in-place.pid; while [ ! -f ${signals}/never ]; do sleep 0.05; done`]);
    await waitForPidFile(path.join(signals, 'in-place.pid'));
    // Run 1 never ends by itself (it waits for a gate); later runs finish at once.
    const agent = `echo "$GOALD_GOAL_ID" >> ${signals}/runs; if [ ! -f ${signals}/first ]; then touch ${signals}/first; while [ ! -f ${signals}/go ]; do sleep 0.05; done; fi; echo tick > tick.txt`;
    const loop = await createLoop(sandbox, ['1s', 'a tick', '-C', workspace.dir, '--worktree', ...ONE_TURN, '--agent', agent]);

    const [first] = await waitForRuns(sandbox, loop.id, 'a first run', (goals) => goals.length >= 1, 20_000);
    const run1 = readGoal(sandbox, String(first?.id));
    expect(run1.worktree?.branch).toBe(`goald/${run1.id}`);
    expect(run1.workspace).toBe(run1.worktree?.dir);
    // While run 1 is live, slots fall due and are skipped: no second run starts.
    await waitForStoredLoop(sandbox, loop.id, 'to wait for its previous run', (stored) => stored.waiting === true || stored.skipped >= 1, 20_000);
    await expectToHold('no second run starts while the first is live', 1_500, () => readGoals(sandbox).filter((goal) => goal.loopId === loop.id).length === 1);

    await writeFile(path.join(signals, 'go'), '');
    const runs = await waitForRuns(sandbox, loop.id, 'two finished runs', (goals) => goals.filter(isFinished).length >= 2, 30_000);
    const [a, b] = runs;
    expect(a?.id).toBe(run1.id);
    expect(Date.parse(String(b?.createdAt))).toBeGreaterThanOrEqual(Date.parse(String(readGoal(sandbox, run1.id).finishedAt)));
    for (const goal of [a, b]) {
      expect(goal).toMatchObject({ loopId: loop.id, status: 'failed', reason: 'max-turns' });
      expect(await workspace.git('show', `goald/${String(goal?.id)}:tick.txt`)).toBe('tick');
    }
    // The user's goal is still running in place, and the user's checkout has none of the runs' files.
    expect(readGoal(sandbox, inPlace.id).status).toBe('active');
    expect(existsSync(workspace.path('tick.txt'))).toBe(false);
    expect(await workspace.git('status', '--porcelain')).toBe('');
    await sandbox.run(['loop', 'stop', loop.id]);
    await sandbox.run(['stop', inPlace.id]);
  });
});
