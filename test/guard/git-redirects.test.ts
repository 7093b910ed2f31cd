import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitRedirectWatch } from '../../src/guard/git-redirects.js';
import { gitdir } from '../helpers/gitdir.js';

describe('GitRedirectWatch', () => {
  it('removes a commondir made since the start, says what it pointed at, and your git reads its own config again', async () => {
    const repo = await gitdir({ initialCommit: true });
    const watch = new GitRedirectWatch(repo.dir);
    expect(watch.sweep()).toEqual([]);
    // What an agent would do: a git directory of its own with a config, and a commondir naming it.
    const elsewhere = repo.path('elsewhere');
    await repo.git('init', '-q', '--bare', elsewhere);
    await repo.git('config', '--file', path.join(elsewhere, 'config'), 'core.fsmonitor', 'touch pwned');
    await writeFile(repo.path('.git/commondir'), `${elsewhere}\n`);
    expect(await repo.git('config', 'core.fsmonitor')).toBe('touch pwned');

    const findings = watch.sweep();
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ path: '.git/commondir', kind: 'git-control' });
    expect(findings[0]?.detail).toContain(JSON.stringify(elsewhere));
    expect(findings[0]?.detail).toContain('goald removed it');
    expect(existsSync(repo.path('.git/commondir'))).toBe(false);
    await expect(repo.git('config', 'core.fsmonitor')).rejects.toThrow();
    expect(watch.sweep()).toEqual([]);
  });

  it('leaves alone what was there at the start, and takes config.worktree made since', async () => {
    const repo = await gitdir({ initialCommit: true });
    await writeFile(repo.path('.git/config.worktree'), '[user]\n\tname = mine\n');
    const watch = new GitRedirectWatch(repo.dir);
    await writeFile(repo.path('.git/config.worktree'), '[core]\n\tfsmonitor = x\n');
    expect(watch.sweep()).toEqual([]);
    expect(await readFile(repo.path('.git/config.worktree'), 'utf8')).toContain('fsmonitor');

    const other = await gitdir({ initialCommit: true });
    const watchOther = new GitRedirectWatch(other.dir);
    await writeFile(other.path('.git/config.worktree'), '[core]\n\tfsmonitor = x\n');
    expect(watchOther.sweep().map((finding) => finding.path)).toEqual(['.git/config.worktree']);
    expect(existsSync(other.path('.git/config.worktree'))).toBe(false);
  });

  it('never waits on a FIFO and quotes no more than a line', async () => {
    const repo = await gitdir({ initialCommit: true });
    const watch = new GitRedirectWatch(repo.dir);
    execFileSync('mkfifo', [repo.path('.git/commondir')]);
    const [fifo] = watch.sweep();
    expect(fifo?.detail).toContain('not a plain file');
    expect(existsSync(repo.path('.git/commondir'))).toBe(false);

    await writeFile(repo.path('.git/commondir'), `${'x'.repeat(5_000)}\nsecond line\n`);
    const [long] = watch.sweep();
    expect(long?.detail.length).toBeLessThan(400);
    expect(long?.detail).not.toContain('second line');
  });

  it('reports a .git replaced as a whole, and watches nothing where .git is a file', async () => {
    const repo = await gitdir({ initialCommit: true });
    const watch = new GitRedirectWatch(repo.dir);
    await rename(repo.path('.git'), repo.path('.git-aside'));
    await repo.git('init', '-q');
    expect(watch.sweep()).toMatchObject([{ path: '.git', kind: 'git-control' }]);

    const main = await gitdir({ initialCommit: true });
    const linked = main.path('../linked-redirects');
    await main.git('worktree', 'add', '-q', linked);
    const linkedWatch = new GitRedirectWatch(linked);
    await writeFile(main.path('.git/worktrees/linked-redirects/config.worktree'), '[core]\n');
    expect(linkedWatch.sweep()).toEqual([]);
    await main.git('worktree', 'remove', '--force', linked);
  });
});
