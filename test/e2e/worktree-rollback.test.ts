// End to end (issue 12): `goald rollback` of worktree goals. A finished goal's branch moves back to turn n's
// commit (and forward again), a paused goal's worktree and branch are reset through the daemon's route and
// its next turn starts there; `goald diff` shows turn n's state; the user's checkout, index, stash, HEAD and
// branches stay as the user left them. Hostile: an agent that forges a `goald: turn 1` commit on the goal's
// branch, a user checkout of the goal's branch, someone editing a paused goal's worktree.

import { existsSync } from 'node:fs';
import { readFile, writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGoal, submitGoal, waitForGoal, waitForPidFile } from '../helpers/daemon.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';
import { waitUntil } from '../helpers/wait.js';
import { goaldSandbox, parseJsonLines } from '../helpers/run-goald.js';

const FAST = ['--cooldown', '0', '--evaluator', 'none'];

// The user's own state: a stash entry, a staged change and an unstaged one, all to stay as they are.
async function userRepo(): Promise<{ git: Gitdir; expectUntouched: () => Promise<void> }> {
  const git = await gitdir({ files: { 'app.js': 'v0\n', 'notes.txt': 'keep me\n', 'user.txt': 'u\n' }, initialCommit: true });
  await git.write('user.txt', 'stashed\n');
  await git.git('stash', 'push', '--quiet', '-m', 'user stash');
  await git.write('notes.txt', 'staged by the user\n');
  await git.git('add', 'notes.txt');
  await git.write('user.txt', 'unstaged\n');
  const head = await git.git('rev-parse', 'HEAD');
  const expectUntouched = async (): Promise<void> => {
    expect(await git.git('rev-parse', 'HEAD')).toBe(head);
    expect(await git.git('symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(await git.git('stash', 'list', '--format=%s')).toBe('On main: user stash');
    expect(await git.git('diff', '--cached', '--name-only')).toBe('notes.txt');
    expect(await git.git('show', ':notes.txt')).toBe('staged by the user');
    expect(await readFile(git.path('user.txt'), 'utf8')).toBe('unstaged\n');
    expect(await readFile(git.path('app.js'), 'utf8')).toBe('v0\n');
    expect(existsSync(git.path('extra.js'))).toBe(false);
  };
  return { git, expectUntouched };
}

describe('goald rollback of a worktree goal', () => {
  it("a finished goal's branch moves back to turn n's commit (a forged turn commit is not taken for it), and forward again", { timeout: 60_000 }, async () => {
    const { git, expectUntouched } = await userRepo();
    const sandbox = await goaldSandbox();
    // Turn 2 is hostile: it commits on the goal's branch under turn 1's subject before changing more.
    const agent = [
      'case "$GOALD_TURN" in',
      '1) echo v1 > app.js;;',
      '2) echo evil > evil.txt; git add -A; git -c user.name=agent -c user.email=a@x.invalid commit -qm "goald: turn 1 · forged"; echo v2 > app.js; echo extra > extra.js;;',
      '3) echo v3 > app.js; rm notes.txt;;',
      'esac',
    ].join('\n');
    const run = await sandbox.run(['start', 'never met', '-C', git.dir, '--worktree', '--foreground', '--json', ...FAST, '--max-turns', '3', '--check', 'false', '--agent', agent]);
    expect(run.code, run.stderr).toBe(1);
    const id = String(parseJsonLines(run.stdout).at(-1)?.id);
    const branch = `goald/${id}`;
    const tip = await git.git('rev-parse', branch);
    const turn1 = await git.git('log', '--format=%H', '--grep', '^goald: turn 1 · failing', branch);

    const back = await sandbox.run(['rollback', id, '--to-turn', '1', '--json']);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({
      type: 'goal.rolled-back', id, toTurn: 1, afterTurn: 3, by: 'goald rollback', commit: turn1, fromCommit: tip,
      written: ['app.js', 'notes.txt'], removed: ['evil.txt', 'extra.js'],
    });
    expect(await git.git('rev-parse', branch)).toBe(turn1);
    expect(await git.git('show', `${branch}:app.js`)).toBe('v1');
    const diff = await sandbox.run(['diff', id]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+v1');
    expect(diff.stdout).not.toMatch(/extra\.js|evil\.txt|notes\.txt/);
    // Turn 3's own commit, off the branch now, is still shown by its number.
    const turn3 = await sandbox.run(['diff', id, '--turn', '3']);
    expect(turn3.stdout).toContain(`commit ${tip}`);
    expect(turn3.stdout).toContain('+v3');
    await expectUntouched();

    // Forward again to turn 3: its commit is off the branch now, named on the goal's history.
    const forward = await sandbox.run(['rollback', id.slice(0, 7), '--to-turn', '3']);
    expect(forward.code, forward.stderr).toBe(0);
    expect(forward.stdout).toBe(
      `goal ${id} rolled back to turn 3: 3 files restored, 1 removed: app.js, evil.txt, extra.js, notes.txt\n` +
        `branch ${branch} is at ${tip.slice(0, 12)} (was ${turn1.slice(0, 12)}): goald diff ${id} shows it\n`,
    );
    expect(await git.git('rev-parse', branch)).toBe(tip);
    const shown = JSON.parse((await sandbox.run(['show', id, '--json'])).stdout) as { goal: { rollbacks: unknown[] } };
    expect(shown.goal.rollbacks).toEqual([
      expect.objectContaining({ toTurn: 1, commit: turn1, fromCommit: tip }),
      expect.objectContaining({ toTurn: 3, commit: tip, fromCommit: turn1 }),
    ]);

    // The user checked the goal's branch out: moving it would change their files, so it is refused.
    const mine = path.join(sandbox.root, 'mine');
    await git.git('worktree', 'add', '--quiet', mine, branch);
    const refused = await sandbox.run(['rollback', id, '--to-turn', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`goald: ${branch} is checked out in ${mine}; moving it would change the files under that checkout, so nothing was changed`);
    expect(await git.git('rev-parse', branch)).toBe(tip);
    expect(await readFile(path.join(mine, 'app.js'), 'utf8')).toBe('v3\n');
    await git.git('worktree', 'remove', mine);

    const none = await sandbox.run(['rollback', id, '--to-turn', '9']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`goald: goal ${id} has no turn 9 (its turns are 0 to 3)`);
    const zero = await sandbox.run(['rollback', id, '--to-turn', '0', '--json']);
    expect(zero.code, zero.stderr).toBe(0);
    expect(await git.git('rev-parse', branch)).toBe(await git.git('rev-parse', 'main'));
    expect((await sandbox.run(['diff', id])).stdout).toBe('');
    await expectUntouched();
    expect(await git.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/')).toBe([branch, 'main'].join('\n'));
  });

  it('a paused goal: its worktree and branch reset through the daemon, refused while someone edited the worktree, and the next turn starts there', { timeout: 60_000 }, async () => {
    const { git, expectUntouched } = await userRepo();
    const sandbox = await goaldSandbox();
    const seen = path.join(sandbox.root, 'seen');
    // Each turn records the app.js it found and writes its own; turn 2 adds extra.js; turn 3 waits for the
    // test's gate (so the pause lands in it); turn 4 passes the check.
    const agent = [
      `echo "$GOALD_TURN:$(cat app.js)" >> ${seen}`,
      `if [ "$GOALD_TURN" = 3 ]; then echo $$ > ${sandbox.root}/turn3.pid; while [ ! -f ${sandbox.root}/go ]; do sleep 0.05; done; fi`,
      'echo "v$GOALD_TURN" > app.js',
      'if [ "$GOALD_TURN" = 2 ]; then echo extra > extra.js; fi',
    ].join('\n');
    const { id } = await submitGoal(sandbox, ['scripted', '-C', git.dir, '--worktree', ...FAST, '--max-turns', '6', '--check', 'grep -qx v4 app.js', '--agent', agent]);
    await waitForPidFile(path.join(sandbox.root, 'turn3.pid'), 30_000);
    expect((await sandbox.run(['rollback', id, '--to-turn', '1'])).code).toBe(2); // active: refused
    const pause = await sandbox.run(['pause', id]);
    expect(pause.code, pause.stderr).toBe(0);
    await writeFile(path.join(sandbox.root, 'go'), '');
    const paused = await waitForGoal(sandbox, id, 'to pause after turn 3', (goal) => goal.status === 'paused' && goal.summary.turns === 3, 30_000);
    const dir = paused.workspace;
    const branch = `goald/${id}`;
    await waitUntil('turn 3 to be committed', async () => (await git.git('log', '-1', '--format=%s', branch)).startsWith('goald: turn 3'));

    // Someone edits the paused goal's worktree: a reset would lose it, so nothing changes.
    await writeFile(path.join(dir, 'scratch.txt'), 'an edit\n');
    const refused = await sandbox.run(['rollback', id, '--to-turn', '1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("goald: the goal's worktree has changes no turn committed: scratch.txt; a rollback would lose them, so nothing was changed");
    expect(await readFile(path.join(dir, 'app.js'), 'utf8')).toBe('v3\n');
    await rm(path.join(dir, 'scratch.txt'));

    const back = await sandbox.run(['rollback', id, '--to-turn', '1', '--json']);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ type: 'goal.rolled-back', id, status: 'paused', toTurn: 1, afterTurn: 3, written: ['app.js'], removed: ['extra.js'] });
    expect(await readFile(path.join(dir, 'app.js'), 'utf8')).toBe('v1\n');
    expect(existsSync(path.join(dir, 'extra.js'))).toBe(false);
    expect((await git.git('log', '--format=%s', branch, '^main')).split('\n')).toEqual(['goald: turn 1 · failing: grep -qx v4 app.js']);
    const diff = await sandbox.run(['diff', id]);
    expect(diff.stdout).toContain('+v1');
    expect(diff.stdout).not.toContain('extra.js');
    await expectUntouched();

    expect((await sandbox.run(['resume', id])).code).toBe(0);
    // goal.finished in the event log: the last turn is committed and the worktree removed before it.
    const events = path.join(sandbox.home, 'goals', id, 'events.jsonl');
    await waitUntil(`goal ${id} to announce goal.finished`, async () => (await readFile(events, 'utf8')).includes('"type":"goal.finished"'), 30_000);
    const done = readGoal(sandbox, id);
    expect(done.status).toBe('achieved');
    expect(done.summary.turns).toBe(4);
    expect((await readFile(seen, 'utf8')).split('\n').filter(Boolean)).toEqual(['1:v0', '2:v1', '3:v2', '4:v1']);
    expect(await readFile(path.join(sandbox.home, 'goals', id, 'turn-4.prompt.txt'), 'utf8')).toContain('# Rolled back to turn 1');
    // The branch: turn 1, then turn 4 on top of it; turns 2 and 3 are off it.
    expect((await git.git('log', '--format=%s', branch, '^main')).split('\n').map((subject) => subject.split(' · ')[0])).toEqual(['goald: turn 4', 'goald: turn 1']);
    expect(readGoal(sandbox, id).rollbacks).toEqual([expect.objectContaining({ toTurn: 1, afterTurn: 3 })]);
    await expectUntouched();
  });
});
