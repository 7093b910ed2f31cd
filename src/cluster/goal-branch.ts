// A cluster goal's tree travels through git: its branch `goald/<id>` on a remote every worker reaches. A
// worker keeps a bare mirror per repository and, for each turn, adds a fresh worktree at the turn's base
// (the commit the last committed turn recorded). It runs the turn there and commits it. It pushes the
// commit to an attempt ref of its own, and only once the fence has committed the turn (turn-commit.ts)
// moves the branch to it, with `--force-with-lease` on the base: a second fence, so a late worker can
// never move the branch. Redis, not the branch, says which commit a goal is at: a promotion lost to a
// crash is redone by the next turn's worker, which starts from the committed commit anyway.

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { GoaldError } from '../errors.js';
import { runGit } from '../workspace/git.js';

/** The goal's branch on the shared remote. */
export function goalBranchRef(goalId: string): string {
  return `refs/heads/goald/${goalId}`;
}

/** Where one attempt at a turn is pushed (a worker's token may hold characters a ref name may not). */
export function attemptRef(goalId: string, turn: number, token: string): string {
  return `refs/goald/${goalId}/t${turn}-${token.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

async function git(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<string> {
  return (await runGit(args, { cwd, ...(env === undefined ? {} : { env }) })).stdout.trim();
}

/**
 * Makes sure this worker's bare mirror at `mirror` holds `commit` (a turn's base), fetching from `remote`
 * only what it lacks: the goal's branch, else (a promotion lost to a crash) its attempt refs. A worker that
 * ran the goal's last turn has the commit already and fetches nothing; no other goal's refs are fetched.
 */
export async function fetchTurnBase(remote: string, mirror: string, goalId: string, commit: string): Promise<void> {
  if (!existsSync(path.join(mirror, 'HEAD'))) {
    await mkdir(path.dirname(mirror), { recursive: true });
    await git(['init', '--quiet', '--bare', mirror], path.dirname(mirror));
  }
  const refspecs = [`+${goalBranchRef(goalId)}:${goalBranchRef(goalId)}`, `+refs/goald/${goalId}/*:refs/goald/${goalId}/*`];
  for (const refspec of [null, ...refspecs]) {
    if (refspec !== null) await runGit(['fetch', '--quiet', '--no-tags', remote, refspec], { cwd: mirror, allowFailure: true });
    if ((await runGit(['cat-file', '-e', `${commit}^{commit}`], { cwd: mirror, allowFailure: true })).exitCode === 0) return;
  }
  throw new GoaldError('internal', `commit ${commit} of goal ${goalId} is not on ${remote}`, 'check that the workers reach the cluster remote, and that nothing deleted goald/ refs there');
}

/** A fresh worktree of `mirror` at `base` (detached: the branch moves only by promotion). */
export async function checkoutTurn(mirror: string, dir: string, base: string): Promise<void> {
  await git(['worktree', 'add', '--quiet', '--detach', dir, base], mirror);
}

/** Removes a turn's worktree (whatever the turn left in it). */
export async function removeTurnCheckout(mirror: string, dir: string): Promise<void> {
  await git(['worktree', 'remove', '--force', dir], mirror);
}

/**
 * Commits everything the turn left in its worktree on top of the base; resolves with the commit, or with
 * the base itself when the turn changed nothing. Hooks never run (the git runner empties hooksPath).
 */
export async function commitTurnCheckout(dir: string, subject: string, author: { name: string; email: string }): Promise<string> {
  await git(['add', '-A'], dir);
  const staged = await runGit(['diff', '--cached', '--quiet'], { cwd: dir, allowFailure: true });
  if (staged.exitCode !== 0) {
    const env = { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_COMMITTER_NAME: author.name, GIT_COMMITTER_EMAIL: author.email };
    await git(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', subject], dir, env);
  }
  return git(['rev-parse', 'HEAD'], dir);
}

/**
 * Pushes a turn's commit to its attempt ref on the remote. From the mirror, never from the worktree: the
 * turn's agent could have replaced the worktree's `.git` with a repository of its own, whose commit is
 * then not in the mirror and the push fails.
 */
export async function pushAttempt(mirror: string, remote: string, ref: string, commit: string): Promise<void> {
  await git(['push', '--quiet', remote, `${commit}:${ref}`], mirror);
}

/**
 * Moves the goal's branch on the remote from `base` to `commit`; `refused` when the branch is no longer at
 * `base` (another worker promoted first: this one's turn was not the committed one). From the mirror, as
 * pushAttempt.
 */
export async function promoteTurn(mirror: string, remote: string, goalId: string, commit: string, base: string): Promise<'moved' | 'refused'> {
  const branch = goalBranchRef(goalId);
  const pushed = await runGit(['push', '--porcelain', `--force-with-lease=${branch}:${base}`, remote, `${commit}:${branch}`], { cwd: mirror, allowFailure: true });
  if (pushed.exitCode === 0) return 'moved';
  if (/\[rejected\]|stale info|\(fetch first\)|non-fast-forward/.test(`${pushed.stdout}\n${pushed.stderr}`)) return 'refused';
  throw new GoaldError('internal', `git push to ${remote} failed: ${pushed.stderr.trim().split('\n').at(-1) ?? 'no message'}`, 'check that the workers reach the remote and may push to it');
}
