// End to end (issue 12): `goald edit --resume` of a worktree goal that failed on a budget breaker. Its
// worktree directory was removed when it failed; the resume checks its branch out there again and the goal
// continues from its last turn's commit. Hostile: the agent switched its worktree to a branch of its own.
// With --discard-on-fail the branch is gone: a clear exit 2 and nothing is created.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '../../state/types.js';
import { readGoal, submitGoal } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { waitUntil } from '../helpers/wait.js';
import { goaldSandbox, type GoaldSandbox } from '../helpers/run-goald.js';

const FAST = ['--cooldown', '0', '--evaluator', 'none'];

// goal.finished of the goal's latest run is the last line of its event log (the worktree is gone by then).
async function finishedRun(sandbox: GoaldSandbox, id: string, runs: number): Promise<GoalRecord> {
  const events = path.join(sandbox.home, 'goals', id, 'events.jsonl');
  await waitUntil(`goal ${id} to finish ${runs} time(s)`, async () => (await readFile(events, 'utf8')).split('"type":"goal.finished"').length - 1 >= runs, 30_000);
  return readGoal(sandbox, id);
}

describe('goald edit --resume of a failed worktree goal', () => {
  it('checks its branch out again in its worktree and continues from its last turn', { timeout: 60_000 }, async () => {
    const git = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    // Hostile: each turn first moves the worktree to a branch of the agent's own.
    const agent = 'git checkout -q -B agent-side; echo "$GOALD_TURN" >> work.txt';
    const { id } = await submitGoal(sandbox, ['two lines', '-C', git.dir, '--worktree', ...FAST, '--max-turns', '1', '--check', 'test "$(wc -l < work.txt)" -ge 2', '--agent', agent]);
    const failed = await finishedRun(sandbox, id, 1);
    expect(failed).toMatchObject({ status: 'failed', reason: 'max-turns' });
    const dir = failed.workspace;
    expect(existsSync(dir)).toBe(false);

    const resumed = await sandbox.run(['edit', id, '--max-turns', '3', '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = await finishedRun(sandbox, id, 2);
    expect(done).toMatchObject({ status: 'achieved', workspace: dir });
    expect(done.summary.turns).toBe(2);
    expect(await git.git('show', `goald/${id}:work.txt`)).toBe('1\n2');
    expect((await git.git('log', '--format=%s', `goald/${id}`, '^main')).split('\n').map((subject) => subject.split(' · ')[0])).toEqual(['goald: turn 2', 'goald: turn 1']);
    expect(existsSync(dir)).toBe(false);
    expect(await git.git('worktree', 'list', '--porcelain')).not.toContain(dir);
    // The user's checkout is as it was; turn 2 (resumed from turn 1's commit, then moved to the agent's own
    // branch) still landed on the goal's branch, and the agent's branch got none of it.
    expect(existsSync(git.path('work.txt'))).toBe(false);
    expect(await git.git('rev-parse', 'agent-side')).toBe(await git.git('rev-parse', `goald/${id}~1`));
  });

  it('exits 2 saying so when the failed goal discarded its branch (--discard-on-fail); nothing is created', { timeout: 60_000 }, async () => {
    const git = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    const { id } = await submitGoal(sandbox, ['never', '-C', git.dir, '--worktree', '--discard-on-fail', ...FAST, '--max-turns', '1', '--check', 'false', '--agent', 'echo x > x.txt']);
    const failed = await finishedRun(sandbox, id, 1);
    expect(failed.status).toBe('failed');
    const run = await sandbox.run(['edit', id, '--max-turns', '3', '--resume']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `goald: goal ${id}'s branch goald/${id} no longer exists in ${git.dir}: it was deleted when the goal failed (--discard-on-fail), so its work cannot be resumed — start a new goal with goald start --worktree\n`,
    );
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'failed', reason: 'max-turns' });
    expect(existsSync(failed.workspace)).toBe(false);
    expect(await git.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/')).toBe('main');
  });
});
