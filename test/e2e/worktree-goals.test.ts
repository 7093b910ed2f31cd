// End to end (issue 12, worktree goals): real repositories, the real daemon, scripted agents. Two goals in
// one repository at once while the user keeps editing; `isolation: "worktree"` from a config file instead
// of --worktree; each turn committed on `goald/<id>`; `goald diff`; `goald apply` with and without
// conflicts and over uncommitted changes; `--pr` with a fake gh; kill -9 of the daemon mid-goal; prune
// removing exactly what it should; hostile agents that switch branches or make their own `goald/*` branch.

import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '../../state/types.js';
import { gatedAgent, rawRequest, readGoal, submitGoal, waitForGoal, waitForPidFile } from '../helpers/daemon.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';
import { waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { goaldSandbox, parseJsonLines, sandboxDaemonPid, writeUserConfig, type GoaldSandbox } from '../helpers/run-goald.js';

const FAST = ['--cooldown', '0', '--evaluator', 'none'];

function repo(files: Record<string, string> = {}): Promise<Gitdir> {
  return gitdir({ files: { 'README.md': '# demo\n', 'a.txt': 'a\n', ...files }, initialCommit: true });
}

/** Runs a worktree goal in the foreground to its end; returns its id and exit code. */
async function foregroundGoal(sandbox: GoaldSandbox, workspace: string, agent: string, check: string, extra: string[] = []): Promise<{ id: string; code: number | null }> {
  const run = await sandbox.run(['start', 'scripted', '-C', workspace, '--worktree', '--foreground', '--json', ...FAST, '--agent', agent, '--check', check, ...extra]);
  const finished = parseJsonLines(run.stdout).find((event) => event.type === 'goal.finished');
  expect(finished, `${run.stderr}\n${run.stdout}`).toBeDefined();
  return { id: String(finished?.id), code: run.code };
}

async function branches(git: Gitdir): Promise<string[]> {
  return (await git.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/')).split('\n').filter(Boolean).sort();
}

async function worktreeList(git: Gitdir): Promise<string[]> {
  return (await git.git('worktree', 'list', '--porcelain')).split('\n').filter((line) => line.startsWith('worktree ')).map((line) => line.slice(9));
}

describe('worktree goals', () => {
  it('two goals run at once in one repository while the user edits; checkout, index, stash and branches stay as the user left them', { timeout: 60_000 }, async () => {
    const git = await repo({ 'b.txt': 'b\n' });
    // The user's state: a stash entry, a staged change, an unstaged change.
    await git.write('a.txt', 'stashed\n');
    await git.git('stash', 'push', '--quiet', '-m', 'user stash');
    await git.write('b.txt', 'staged\n');
    await git.git('add', 'b.txt');
    await git.write('a.txt', 'unstaged\n');
    const head = await git.git('rev-parse', 'HEAD');
    const sandbox = await goaldSandbox();
    const signals = path.join(sandbox.root, 'signals');
    await mkdir(signals);
    // Each agent says it started, then waits for the other and for the test's go: both run at once.
    const agent = (me: string, other: string): string =>
      `touch ${signals}/${me}; while [ ! -f ${signals}/${other} ] || [ ! -f ${signals}/go ]; do sleep 0.02; done; echo ${me} > ${me}.txt; echo ${me} >> README.md`;
    const x = await submitGoal(sandbox, ['x', '-C', git.dir, '--worktree', ...FAST, '--agent', agent('x', 'y'), '--check', 'test -f x.txt']);
    const y = await submitGoal(sandbox, ['y', '-C', git.dir, '--worktree', ...FAST, '--agent', agent('y', 'x'), '--check', 'test -f y.txt']);
    expect([x.queued, y.queued]).toEqual([false, false]);
    await waitUntilFile(path.join(signals, 'x'));
    await waitUntilFile(path.join(signals, 'y'));
    // The user keeps working while both agents run.
    await git.write('a.txt', 'unstaged, edited during the goals\n');
    await git.write('new-user-file.txt', 'mine\n');
    await writeFile(path.join(signals, 'go'), '');

    const [gx, gy] = [await finished(sandbox, x.id), await finished(sandbox, y.id)];
    expect([gx.status, gy.status]).toEqual(['achieved', 'achieved']);
    for (const goal of [gx, gy]) {
      expect(goal.worktree?.repo).toBe(git.dir);
      expect(goal.workspace).toBe(goal.worktree?.dir);
      expect(goal.workspace.startsWith(path.join(sandbox.home, 'worktrees'))).toBe(true);
      expect(existsSync(goal.workspace)).toBe(false); // removed when the goal ended
    }
    // The user's checkout, index, stash, HEAD and branches: exactly as the user left them.
    expect(await readFile(git.path('a.txt'), 'utf8')).toBe('unstaged, edited during the goals\n');
    expect(await git.git('diff', '--cached', '--name-only')).toBe('b.txt');
    expect(await git.git('show', ':b.txt')).toBe('staged');
    expect(await git.git('stash', 'list', '--format=%s')).toBe('On main: user stash');
    expect(await git.git('rev-parse', 'HEAD')).toBe(head);
    expect(await git.git('symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(existsSync(git.path('x.txt')) || existsSync(git.path('y.txt'))).toBe(false);
    expect(await readFile(git.path('README.md'), 'utf8')).toBe('# demo\n');
    expect(await branches(git)).toEqual(['goald/' + x.id, 'goald/' + y.id, 'main'].sort());
    expect(await worktreeList(git)).toEqual([git.dir]);
    // Each branch is the goal's history: one commit per turn that changed the tree, by goald.
    expect(await git.git('log', '--format=%an <%ae>|%s', `goald/${x.id}`, `^${head}`)).toBe('goald <goald@localhost>|goald: turn 1 · checks pass');
    expect(await git.git('show', `goald/${y.id}:y.txt`)).toBe('y');

    const diff = await sandbox.run(['diff', x.id]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+++ b/x.txt');
    expect(diff.stdout).toContain('+x');
    const turnDiff = await sandbox.run(['diff', y.id, '--turn', '1']);
    expect(turnDiff.stdout).toContain('goald: turn 1 · checks pass');
    expect(turnDiff.stdout).toContain('+++ b/y.txt');
    expect((await sandbox.run(['diff', y.id, '--turn', '5'])).code).toBe(2);

    const shown = await sandbox.run(['show', x.id]);
    expect(shown.stdout).toContain(`branch goald/${x.id}`);
  });

  it('isolation: "worktree" in goal.config.json, or in the user\'s config, makes a plain `goald start` run on goald/<id>; the checkout is untouched', { timeout: 60_000 }, async () => {
    const sandbox = await goaldSandbox();
    const configured = await repo({ 'goal.config.json': JSON.stringify({ isolation: 'worktree' }) });
    const plain = await repo();
    for (const git of [configured, plain]) {
      if (git === plain) {
        // The user's config, written once the first goal has ended: it alone makes this one a worktree goal.
        await writeUserConfig(sandbox, { isolation: 'worktree' });
      }
      await git.write('a.txt', 'the user\'s uncommitted edit\n');
      const head = await git.git('rev-parse', 'HEAD');
      const { id } = await submitGoal(sandbox, ['scripted', '-C', git.dir, ...FAST, '--agent', 'echo goal > g.txt; echo agent >> a.txt', '--check', 'test -f g.txt']);
      const goal = await finished(sandbox, id);
      expect(goal.status).toBe('achieved');
      expect(goal.worktree).toMatchObject({ repo: git.dir, branch: `goald/${id}`, base: head });
      expect(goal.workspace.startsWith(path.join(sandbox.home, 'worktrees'))).toBe(true);
      expect(await git.git('show', `goald/${id}:g.txt`)).toBe('goal');
      expect(await git.git('show', `goald/${id}:a.txt`)).toBe('a\nagent');
      // The user's checkout: same HEAD and branch, their edit alone, nothing of the agent's.
      expect(await git.git('rev-parse', 'HEAD')).toBe(head);
      expect(await git.git('symbolic-ref', 'HEAD')).toBe('refs/heads/main');
      expect(await git.git('status', '--porcelain')).toBe(' M a.txt');
      expect(await readFile(git.path('a.txt'), 'utf8')).toBe('the user\'s uncommitted edit\n');
      expect(await worktreeList(git)).toEqual([git.dir]);
    }
  });

  it('commits each turn that changed the tree, with the configured author, and none for a turn that changed nothing', async () => {
    const git = await repo({ 'goal.config.json': JSON.stringify({ worktree: { author: 'Robo Tester <robo@example.invalid>' } }) });
    const sandbox = await goaldSandbox();
    // Turn 1 writes, turn 2 changes nothing, turn 3 writes again and passes.
    const agent = 'case "$GOALD_TURN" in 1) echo one > one.txt;; 3) echo three > three.txt;; esac';
    const { id, code } = await foregroundGoal(sandbox, git.dir, agent, 'test -f three.txt');
    expect(code).toBe(0);
    const log = await git.git('log', '--reverse', '--format=%an <%ae>|%s', `goald/${id}`, '^main');
    expect(log.split('\n')).toEqual(['Robo Tester <robo@example.invalid>|goald: turn 1 · failing: test -f three.txt', 'Robo Tester <robo@example.invalid>|goald: turn 3 · checks pass']);
    const turn2 = await sandbox.run(['diff', id, '--turn', '2']);
    expect(turn2.code).toBe(0);
    expect(turn2.stdout).toBe('');
    expect(turn2.stderr).toContain('turn 2 changed nothing');
  });

  it('apply: fast-forward, a merge commit, refusals over uncommitted changes and conflicts (exit 2, nothing changed)', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const first = await foregroundGoal(sandbox, git.dir, 'echo goal > f.txt', 'test -f f.txt');
    const second = await foregroundGoal(sandbox, git.dir, 'echo goal > README.md', 'grep -q goal README.md');
    const third = await foregroundGoal(sandbox, git.dir, 'echo goal > h.txt', 'test -f h.txt');
    expect([first.code, second.code, third.code]).toEqual([0, 0, 0]);

    // Untracked h.txt of the user's would be overwritten: refused, naming it.
    await git.write('h.txt', 'the user\'s\n');
    await git.write('a.txt', 'unrelated edit\n');
    const before = await git.git('rev-parse', 'HEAD');
    const refused = await sandbox.run(['apply', third.id, '-C', git.dir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/would touch 1 file\(s\) you changed and have not committed: h\.txt/);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(await readFile(git.path('h.txt'), 'utf8')).toBe('the user\'s\n');
    expect(await git.git('rev-parse', 'HEAD')).toBe(before);

    // Fast-forward: the user's unrelated uncommitted edit survives.
    const ff = await sandbox.run(['apply', first.id], { cwd: git.dir });
    expect(ff.code, ff.stderr).toBe(0);
    expect(ff.stdout).toContain('fast-forward');
    expect(await git.git('rev-parse', 'HEAD')).toBe(await git.git('rev-parse', `goald/${first.id}`));
    expect(await readFile(git.path('a.txt'), 'utf8')).toBe('unrelated edit\n');

    // The user commits a change to README.md meanwhile: the second goal's branch conflicts.
    await git.write('README.md', '# the user\'s title\n');
    await git.git('commit', '--quiet', '-m', 'user edits README', 'README.md');
    const head = await git.git('rev-parse', 'HEAD');
    const conflict = await sandbox.run(['apply', second.id, '-C', git.dir]);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toMatch(/conflicts with main in README\.md; nothing was changed/);
    expect(await git.git('rev-parse', 'HEAD')).toBe(head);
    expect(await git.git('status', '--porcelain')).toBe([' M a.txt', '?? h.txt'].join('\n'));

    // After the user removes their h.txt: a merge commit (main moved since the goal started).
    await git.git('clean', '-fq', 'h.txt');
    const merged = await sandbox.run(['apply', third.id, '-C', git.dir, '--json']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(parseJsonLines(merged.stdout)[0]).toMatchObject({ type: 'goal.applied', id: third.id, how: 'merge', into: 'main' });
    expect((await git.git('log', '-1', '--format=%P')).split(' ')).toHaveLength(2);
    expect(await readFile(git.path('h.txt'), 'utf8')).toBe('goal\n');
    expect(await readFile(git.path('a.txt'), 'utf8')).toBe('unrelated edit\n');
    // Applying again: nothing to do.
    const again = await sandbox.run(['apply', third.id, '-C', git.dir]);
    expect(again.stdout).toContain('nothing to apply');

    // The daemon's route says where a worktree goal's branch is (a cluster's fetches it there first); an
    // in-place goal has none.
    expect((await sandbox.run(['daemon'])).code).toBe(0);
    const branch = await rawRequest(sandbox.socket, 'POST', `/v1/goals/${third.id}/branch`, JSON.stringify({ dir: git.dir }), { 'content-type': 'application/json' });
    expect(branch.status).toBe(200);
    expect(JSON.parse(branch.body)).toMatchObject({ goal: { id: third.id }, branch: { repo: git.dir, branch: `goald/${third.id}`, base: expect.stringMatching(/^[0-9a-f]{40}$/) } });
    const inPlace = await sandbox.run(['start', 'scripted', '-C', git.dir, '--foreground', '--json', ...FAST, '--agent', 'true', '--check', 'true']);
    const inPlaceId = String(parseJsonLines(inPlace.stdout).find((event) => event.type === 'goal.finished')?.id);
    const noBranch = await rawRequest(sandbox.socket, 'POST', `/v1/goals/${inPlaceId}/branch`, JSON.stringify({ dir: git.dir }), { 'content-type': 'application/json' });
    expect(noBranch.status).toBe(400);
    expect(noBranch.body).toContain('worked in place');
    expect((await sandbox.run(['daemon', 'stop'])).code).toBe(0);
  });

  it('apply of a failed, unknown or in-place goal exits 2; a failed goal keeps its branch unless --discard-on-fail', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const kept = await foregroundGoal(sandbox, git.dir, 'echo tried > t.txt', 'false', ['--max-turns', '1']);
    const discarded = await foregroundGoal(sandbox, git.dir, 'echo tried > t.txt', 'false', ['--max-turns', '1', '--discard-on-fail']);
    expect([kept.code, discarded.code]).toEqual([1, 1]);
    expect(await branches(git)).toEqual([`goald/${kept.id}`, 'main']);
    expect(await git.git('show', `goald/${kept.id}:t.txt`)).toBe('tried');
    expect(await worktreeList(git)).toEqual([git.dir]);

    const failed = await sandbox.run(['apply', kept.id, '-C', git.dir]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/failed \(max-turns\): only an achieved goal is applied/);
    const unknown = await sandbox.run(['apply', 'gnosuchgoal', '-C', git.dir]);
    expect(unknown.code).toBe(2);
    const inPlace = await sandbox.run(['start', 'in place', '-C', git.dir, '--foreground', '--json', ...FAST, '--agent', 'true', '--check', 'true']);
    const inPlaceId = String(parseJsonLines(inPlace.stdout).at(-1)?.id);
    const notWorktree = await sandbox.run(['apply', inPlaceId, '-C', git.dir]);
    expect(notWorktree.code).toBe(2);
    expect(notWorktree.stderr).toContain('worked in place');
  });

  it('--worktree outside a git repository or in one without a commit: exit 2 with the fix, nothing created', async () => {
    const sandbox = await goaldSandbox();
    const plain = path.join(sandbox.root, 'plain');
    await mkdir(plain);
    const outside = await sandbox.run(['start', 'x', '-C', plain, '--worktree', '--foreground', ...FAST, '--agent', 'true', '--check', 'true']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/not inside a git work tree.*git init/);
    const empty = await gitdir();
    const noCommit = await sandbox.run(['start', 'x', '-C', empty.dir, '--worktree', ...FAST, '--agent', 'true', '--check', 'true']);
    expect(noCommit.code).toBe(2);
    expect(noCommit.stderr).toMatch(/has no commit yet.*make a first commit/);
    expect(existsSync(path.join(sandbox.home, 'worktrees'))).toBe(false);
    expect(await branches(empty)).toEqual([]);
  });

  it('--pr runs gh pr create (shown) with the branch, the base and the condition', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const { id } = await foregroundGoal(sandbox, git.dir, 'echo goal > f.txt', 'test -f f.txt');
    const bin = path.join(sandbox.root, 'bin');
    await mkdir(bin);
    const argvFile = path.join(sandbox.root, 'gh-argv');
    await writeFile(path.join(bin, 'gh'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done > ${argvFile}\necho https://example.invalid/pull/7\n`);
    await chmod(path.join(bin, 'gh'), 0o755);
    const pr = await sandbox.run(['apply', id, '--pr'], { cwd: git.dir, env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
    expect(pr.code, pr.stderr).toBe(0);
    expect(pr.stdout).toContain(`$ gh pr create --head goald/${id} --base main --title scripted --body `);
    expect(pr.stdout).toContain('https://example.invalid/pull/7');
    const argv = (await readFile(argvFile, 'utf8')).split('\0').slice(0, -1);
    expect(argv.slice(0, 8)).toEqual(['pr', 'create', '--head', `goald/${id}`, '--base', 'main', '--title', 'scripted']);
    expect(argv[8]).toBe('--body');
    expect(argv[9]).toContain('goald: turn 1 · checks pass');
    // Nothing was merged locally.
    expect(existsSync(git.path('f.txt'))).toBe(false);

    const noGh = await sandbox.run(['apply', id, '--pr'], { cwd: git.dir, env: { PATH: path.dirname(process.execPath) } });
    expect(noGh.code).toBe(2);
    expect(noGh.stderr).toContain('gh (the GitHub CLI) is not on PATH');
  });

  it('kill -9 of the daemon mid-goal: the next daemon recovers the worktree goal; after prune no worktree is left', { timeout: 60_000 }, async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['steps', '-C', git.dir, '--worktree', ...FAST, '--check', 'test -f steps.txt', '--agent', agent.command]);
    const leader = await waitForPidFile(agent.agentPidFile(1));
    await waitForGoal(sandbox, id, 'to record its running agent', (goal) => goal.runningAgent?.pid === leader);
    const dir = readGoal(sandbox, id).workspace;
    const daemon = sandboxDaemonPid(sandbox);
    expect(daemon).not.toBeNull();
    process.kill(daemon as number, 'SIGKILL');
    await waitUntilGone(daemon as number);

    expect((await sandbox.run(['daemon'])).code).toBe(0);
    await waitUntilGone(leader, 8_000);
    await waitForPidFile(agent.agentPidFile(2));
    await agent.open(2);
    const goal = await finished(sandbox, id);
    expect(goal.status).toBe('achieved');
    expect(existsSync(dir)).toBe(false);
    expect(await git.git('show', `goald/${id}:steps.txt`)).toBe('2');
    expect(existsSync(git.path('steps.txt'))).toBe(false);

    const pruned = await sandbox.run(['prune', '--older-than', '0s', '--keep', '0', '--json']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(parseJsonLines(pruned.stdout)[0]).toMatchObject({ branches: [`${git.dir}:goald/${id}`] });
    expect(await worktreeList(git)).toEqual([git.dir]);
    expect(await branches(git)).toEqual(['main']);
    expect(await readdir(path.join(sandbox.home, 'worktrees'))).toEqual([]);
  });

  it('prune removes exactly the pruned goals\' worktrees and branches and leftover worktrees, nothing else', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const old = await foregroundGoal(sandbox, git.dir, 'echo 1 > one.txt', 'test -f one.txt');
    const failed = await foregroundGoal(sandbox, git.dir, 'echo 2 > two.txt', 'false', ['--max-turns', '1']);
    const newest = await foregroundGoal(sandbox, git.dir, 'echo 3 > three.txt', 'test -f three.txt');
    // A leftover: a worktree under GOALD_HOME no goal owns (a daemon killed between its end and the removal).
    const leftover = path.join(sandbox.home, 'worktrees', 'gleftover0001');
    await git.git('worktree', 'add', '--quiet', '-b', 'goald/gleftover0001', leftover);
    // Things that are not goald's: a worktree of the user's, a user branch, a goald/* branch nobody recorded.
    const userWorktree = path.join(sandbox.root, 'user-wt');
    await git.git('worktree', 'add', '--quiet', '-b', 'feature', userWorktree);
    await git.git('branch', 'goald/made-by-hand');

    const dry = await sandbox.run(['prune', '--older-than', '0s', '--keep', '1', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would remove worktree ${leftover}`);
    expect(dry.stdout).toContain(`would delete branch ${git.dir}:goald/${old.id}`);
    expect(existsSync(leftover)).toBe(true);
    expect(await branches(git)).toContain(`goald/${old.id}`);

    const run = await sandbox.run(['prune', '--older-than', '0s', '--keep', '1', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = parseJsonLines(run.stdout)[0] as { goals: { id: string }[]; worktrees: string[]; branches: string[] };
    expect(result.goals.map((goal) => goal.id).sort()).toEqual([old.id, failed.id].sort());
    expect(result.worktrees).toEqual([leftover]);
    expect(result.branches.sort()).toEqual([`${git.dir}:goald/${old.id}`, `${git.dir}:goald/${failed.id}`].sort());
    expect(await branches(git)).toEqual(['feature', `goald/${newest.id}`, 'goald/gleftover0001', 'goald/made-by-hand', 'main'].sort());
    expect(await worktreeList(git)).toEqual([git.dir, userWorktree]);
    expect(existsSync(userWorktree)).toBe(true);
    expect(existsSync(leftover)).toBe(false);
  });

  it('hostile agent: it switches its worktree to a branch of its own and makes more goald/* branches; the turns still land on the goal\'s branch', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const agent = [
      'git checkout -q -b goald/agent-branch',
      'git branch goald/another',
      'echo "$GOALD_TURN" >> work.txt',
    ].join('; ');
    const { id, code } = await foregroundGoal(sandbox, git.dir, agent, 'test "$(wc -l < work.txt)" -ge 2');
    expect(code).toBe(0);
    // Both turns are on the goal's branch, in order; the agent's branches hold none of goald's commits.
    const subjects = (await git.git('log', '--reverse', '--format=%s', `goald/${id}`, '^main')).split('\n');
    expect(subjects).toHaveLength(2);
    expect(subjects[0]).toMatch(/^goald: turn 1 · failing: /);
    expect(subjects[1]).toBe('goald: turn 2 · checks pass');
    expect(await git.git('show', `goald/${id}:work.txt`)).toBe('1\n2');
    expect(await git.git('rev-parse', 'goald/agent-branch')).toBe(await git.git('rev-parse', 'main'));
    // Prune deletes the goal's branch only, never the agent's goald/* branches.
    const pruned = await sandbox.run(['prune', '--older-than', '0s', '--keep', '0', '--json']);
    expect(parseJsonLines(pruned.stdout)[0]).toMatchObject({ branches: [`${git.dir}:goald/${id}`] });
    expect(await branches(git)).toEqual(['goald/agent-branch', 'goald/another', 'main']);
  });
});

/**
 * The goal's record once `goal.finished` is in its event log: the worktree is removed just before that,
 * after the record already says achieved (the last turn's record), so the record alone is not the signal.
 */
async function finished(sandbox: GoaldSandbox, id: string): Promise<GoalRecord> {
  const events = path.join(sandbox.home, 'goals', id, 'events.jsonl');
  await waitUntil(`goal ${id} to announce goal.finished`, async () => (await readFile(events, 'utf8')).includes('"type":"goal.finished"'), 30_000);
  return readGoal(sandbox, id);
}

function waitUntilFile(file: string): Promise<boolean> {
  return waitUntil(`${file} to appear`, () => existsSync(file));
}
