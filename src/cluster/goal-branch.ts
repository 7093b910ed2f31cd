// A cluster goal's tree travels through git: its branch `goald/<id>` on a remote every worker reaches. A
// worker keeps a bare mirror per repository and, for each turn, makes a fresh checkout at the turn's base
// (the commit the last committed turn recorded). It runs the turn there and commits goald's snapshot of it. It pushes the
// commit to an attempt ref of its own, and only once the fence has committed the turn (turn-commit.ts)
// moves the branch to it, with `--force-with-lease` on the base: a second fence, so a late worker can
// never move the branch. Redis, not the branch, says which commit a goal is at: a promotion lost to a
// crash is redone by the next turn's worker, which starts from the committed commit anyway.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { GoaldError } from '../errors.js';
import { runGit } from '../workspace/git.js';
import { hideUrlCredentials } from './cluster-goals.js';

// Who the turns' commits are by.
export const WORKER_EMAIL = 'goald@localhost';
const COMMITTER = { GIT_AUTHOR_NAME: 'goald', GIT_AUTHOR_EMAIL: WORKER_EMAIL, GIT_COMMITTER_NAME: 'goald', GIT_COMMITTER_EMAIL: WORKER_EMAIL };

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
  throw new GoaldError('internal', `commit ${commit} of goal ${goalId} is not on ${hideUrlCredentials(remote)}`, 'check that the workers reach the cluster remote, and that nothing deleted goald/ refs there');
}

/** The control plane's own bare mirror of `remote` under `mirrorsDir` (made when missing): for git work on the remote with no workspace at hand. */
export async function controlPlaneMirror(mirrorsDir: string, remote: string): Promise<string> {
  const mirror = path.join(mirrorsDir, `${createHash('sha256').update(remote).digest('hex').slice(0, 16)}.git`);
  if (!existsSync(path.join(mirror, 'HEAD'))) {
    await mkdir(mirrorsDir, { recursive: true });
    await git(['init', '--quiet', '--bare', mirror], mirrorsDir);
  }
  return mirror;
}

/**
 * A fresh checkout of `base` at `dir` for one turn: a repository of its own whose `.git` is inside `dir`,
 * reading the mirror's objects through `objects/info/alternates`. Not a worktree of the mirror: a
 * worktree's git directory lives in the mirror, which the sandbox would then have to let the agent write,
 * and git reads the mirror's config when the worker pushes (a planted `core.sshCommand` or `url.*.insteadOf`
 * would run as the worker, outside the sandbox). Whatever the agent writes in `dir/.git` stays there.
 */
export async function checkoutTurn(mirror: string, dir: string, base: string): Promise<void> {
  await mkdir(path.dirname(dir), { recursive: true });
  await git(['init', '--quiet', dir], path.dirname(dir));
  await writeFile(path.join(dir, '.git', 'objects', 'info', 'alternates'), `${path.join(path.resolve(mirror), 'objects')}\n`);
  await git(['checkout', '--quiet', '--detach', base], dir);
}

/** Removes a turn's checkout (whatever the turn left in it). */
export async function removeTurnCheckout(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * The commit of a turn's `tree` on `base`, made in the mirror (never by git in the turn's checkout, which
 * the agent writes), with the turn's new objects, found in `objectsDir` (goald's snapshot objects), packed
 * into the mirror so it holds every commit it made whole. `base` itself when the tree is the base's.
 */
export async function commitTurnTree(mirror: string, base: string, tree: string, subject: string, objectsDir: string): Promise<string> {
  const baseTree = await git(['rev-parse', `${base}^{tree}`], mirror);
  if (tree === '' || tree === baseTree) return base;
  const env = { GIT_ALTERNATE_OBJECT_DIRECTORIES: objectsDir, ...COMMITTER };
  const commit = await git(['commit-tree', tree, '-p', base, '-m', subject], mirror, env);
  await runGit(['pack-objects', '--revs', '--quiet', path.join(mirror, 'objects', 'pack', 'pack')], { cwd: mirror, env, input: `${commit}\n^${base}\n` });
  return commit;
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
 * Deletes a finished goal's attempt refs, on the remote (one push) and in the mirror: each turn left one
 * or more, and only the branch is of use once the goal has ended. Resolves with how many were deleted.
 */
export async function deleteAttemptRefs(mirror: string, remote: string, goalId: string): Promise<number> {
  const prefix = `refs/goald/${goalId}/`;
  const listed = await git(['ls-remote', remote, `${prefix}*`], mirror);
  const refs = listed.split('\n').flatMap((line) => {
    const ref = line.split('\t')[1];
    return ref?.startsWith(prefix) ? [ref] : [];
  });
  if (refs.length > 0) await git(['push', '--quiet', remote, ...refs.map((ref) => `:${ref}`)], mirror);
  const local = await git(['for-each-ref', '--format=delete %(refname)', prefix], mirror);
  if (local !== '') await runGit(['update-ref', '--stdin'], { cwd: mirror, input: `${local}\n` });
  return refs.length;
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
  throw new GoaldError('internal', `git push to ${hideUrlCredentials(remote)} failed: ${hideUrlCredentials(pushed.stderr.trim().split('\n').at(-1) ?? 'no message')}`, 'check that the workers reach the remote and may push to it');
}
