// A worktree goal's git side (issue 12): the goal runs in its own linked worktree under GOALD_HOME, on its
// own branch `goald/<id>` made from the user's HEAD. The user's checkout, index, stash and branches are
// never touched: every command here runs either in the goal's worktree or on `goald/*` refs.

import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { GoalWorktree } from '../../state/types.js';
import type { TurnRecord } from '../supervisor/types.js';
import { KeyedSerialQueue } from '../daemon/serial-queue.js';
import { GoaldError } from '../errors.js';
import { runGit, type GitResult } from '../workspace/git.js';

/** The prefix of every branch goald makes; nothing else is ever deleted. */
const GOAL_BRANCH_PREFIX = 'goald/';

/** Who the turn commits are by when `worktree.author` is not set. */
export const DEFAULT_WORKTREE_AUTHOR = 'goald <goald@localhost>';


/**
 * git's worktree commands are not safe to run at once on one repository (an add reads every other entry,
 * and fails on one being made: "failed to read .git/worktrees/<x>/commondir"), so this process runs its
 * adds and removals one at a time per repository; the rest of a goal's start overlaps freely, the checkout
 * of the files included (createGoalWorktree).
 */
const worktreeChanges = new KeyedSerialQueue<string>();

/** Where a goal's worktree lives: GOALD_HOME/worktrees/<id>. */
export function worktreeDirFor(home: string, goalId: string): string {
  return path.join(home, 'worktrees', goalId);
}

async function git(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<GitResult> {
  return runGit(args, { cwd, allowFailure: true, ...(env ? { env } : {}) });
}

// Checking a whole tree out (worktree add) or deleting one (worktree remove) takes time in proportion to the
// repository: 93 s for 50 000 files on a 2-core VM at load 9 (bench/worktree.bench.ts), past the git
// runner's 60 s default. Still bounded, so a git that hangs cannot hold a goal's start forever.
const CHECKOUT_TIMEOUT_MS = 15 * 60_000;

async function gitCheckout(args: readonly string[], cwd: string): Promise<GitResult> {
  return runGit(args, { cwd, allowFailure: true, timeoutMs: CHECKOUT_TIMEOUT_MS });
}

async function gitOk(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<string> {
  const result = await git(args, cwd, env);
  if (result.exitCode !== 0) {
    throw new GoaldError('internal', `git ${args[0] ?? ''} failed: ${lastLine(result.stderr) || `exit ${result.exitCode}`}`);
  }
  return result.stdout;
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}

/** The user's HEAD commit; exit 2 with the fix when the repository has no commit yet. */
export async function requireHeadCommit(repo: string): Promise<string> {
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], repo);
  if (head.exitCode !== 0 || head.stdout.trim() === '') {
    throw new GoaldError(
      'usage',
      `--worktree: ${repo} has no commit yet, so there is no HEAD to branch a worktree from`,
      'make a first commit (git add -A && git commit -m init), or start without --worktree',
    );
  }
  return head.stdout.trim();
}

/** The first free branch name: `goald/<id>`, else `goald/<id>-2`, `-3`, …; never an existing one. */
async function freeBranchName(repo: string, goalId: string): Promise<string> {
  const taken = new Set(
    (await gitOk(['for-each-ref', '--format=%(refname:short)', `refs/heads/${GOAL_BRANCH_PREFIX}`], repo)).split('\n').filter(Boolean),
  );
  const base = `${GOAL_BRANCH_PREFIX}${goalId}`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Creates the goal's branch from the user's HEAD and checks it out in a new worktree under GOALD_HOME. */
export async function createGoalWorktree(options: {
  repo: string;
  home: string;
  goalId: string;
  author?: string | null;
  discardOnFail?: boolean;
}): Promise<GoalWorktree> {
  const base = await requireHeadCommit(options.repo);
  const dir = worktreeDirFor(options.home, options.goalId);
  await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  const added = await worktreeChanges.run(path.resolve(options.repo), async () => {
    const branch = await freeBranchName(options.repo, options.goalId);
    // `-b` refuses an existing branch, so a name taken between the lookup and here is never overwritten.
    // Only the worktree's entry is made one at a time; its files are checked out below, beside the other
    // goals' (a race's members start together: 200 files took 250 ms each here, one after another).
    const args = ['worktree', 'add', '--quiet', '--no-checkout', '-b', branch, dir, base];
    let result = await gitCheckout(args, options.repo);
    // Another process adding a worktree to this repository at the same moment: git read its half-made
    // entry and stopped before making anything. Once more.
    if (result.exitCode !== 0 && /failed to read .*worktrees/.test(result.stderr) && !(await branchExists(options.repo, branch))) result = await gitCheckout(args, options.repo);
    return { ...result, branch };
  });
  const { branch } = added;
  if (added.exitCode !== 0) {
    throw new GoaldError('internal', `could not create the goal's worktree: ${lastLine(added.stderr)}`, 'see git worktree list; goald prune removes leftovers');
  }
  // What `git worktree add` itself runs to check the files out (without --no-checkout); hooks never run.
  const checkedOut = await gitCheckout(['reset', '--hard', '--no-recurse-submodules', '--quiet'], dir);
  if (checkedOut.exitCode !== 0) {
    await removeGoalWorktree({ repo: options.repo, dir }, options.home).catch(() => undefined);
    throw new GoaldError('internal', `could not check out the goal's worktree: ${lastLine(checkedOut.stderr)}`, 'see git worktree list; goald prune removes leftovers');
  }
  return { repo: options.repo, dir, branch, base, author: options.author ?? DEFAULT_WORKTREE_AUTHOR, discardOnFail: options.discardOnFail ?? false };
}

/** Parses `Name <email>`; a usage error names `what` when it is not that. */
export function parseAuthor(text: string, what: string): { name: string; email: string } {
  const match = /^\s*([^<>]+?)\s*<([^<>\s]+)>\s*$/.exec(text);
  if (!match?.[1] || !match[2]) {
    throw new GoaldError('usage', `${what}: ${JSON.stringify(text)} is not an author`, 'write it as "Name <email>", e.g. "goald <goald@localhost>"');
  }
  return { name: match[1], email: match[2] };
}

function authorEnv(author: string): Record<string, string> {
  const { name, email } = parseAuthor(author, 'worktree.author');
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

/** What a turn's commit subject says of it: the verdict's reason, else the checks. */
export function turnReason(record: TurnRecord): string {
  if (record.evaluation.kind === 'verdict') return record.evaluation.verdict.reason;
  const failing = record.checks.filter((check) => !check.passed).map((check) => check.name);
  if (failing.length > 0) return `failing: ${failing.join(', ')}`;
  if (record.checks.length > 0) return 'checks pass';
  return record.evaluation.kind === 'skipped' ? record.evaluation.reason : 'changes';
}

/** The subject of a turn's commit: `goald: turn N · <short reason>` (a worktree goal's, a cluster goal's). */
export function turnCommitSubject(turn: number, reason: string): string {
  const short = reason.replace(/\s+/g, ' ').trim().slice(0, 72);
  return `goald: turn ${turn} · ${short === '' ? 'changes' : short}`;
}

/**
 * Commits the worktree's state on the goal's branch when the turn changed it; resolves with the commit,
 * or null when nothing changed. Hooks never run (the git runner empties hooksPath).
 */
export async function commitTurn(worktree: GoalWorktree, turn: number, reason: string): Promise<string | null> {
  if (!existsSync(worktree.dir)) return null;
  // An agent may have switched its worktree to another branch (or detached HEAD): the turn still lands on
  // the goal's branch, on top of its last commit; the work tree is kept as the agent left it.
  const head = await git(['symbolic-ref', '--quiet', 'HEAD'], worktree.dir);
  if (head.stdout.trim() !== `refs/heads/${worktree.branch}`) {
    await gitOk(['symbolic-ref', 'HEAD', `refs/heads/${worktree.branch}`], worktree.dir);
    await gitOk(['reset', '--quiet', '--mixed'], worktree.dir);
  }
  await gitOk(['add', '-A'], worktree.dir);
  const staged = await git(['diff', '--cached', '--quiet'], worktree.dir);
  if (staged.exitCode === 0) return null;
  await gitOk(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', turnCommitSubject(turn, reason)], worktree.dir, authorEnv(worktree.author));
  return (await gitOk(['rev-parse', 'HEAD'], worktree.dir)).trim();
}

/** One `goald: turn N` commit of a goal's branch. */
export interface TurnCommit {
  turn: number;
  commit: string;
  /** The commit's tree (a rollback matches it against the turn's snapshot tree). */
  tree: string;
  subject: string;
}

/** The goal's turn commits, oldest first (read back from the branch's subjects). */
export async function turnCommits(worktree: Pick<GoalWorktree, 'repo' | 'branch' | 'base'>): Promise<TurnCommit[]> {
  return turnCommitsUpTo(worktree, `refs/heads/${worktree.branch}`);
}

/** The turn commits from the goal's base up to `head` (the branch, or a tip a rollback moved it away from). */
export async function turnCommitsUpTo(worktree: Pick<GoalWorktree, 'repo' | 'base'>, head: string): Promise<TurnCommit[]> {
  const log = await git(['log', '--reverse', '--format=%H%x00%T%x00%s', `${worktree.base}..${head}`, '--'], worktree.repo);
  if (log.exitCode !== 0) return [];
  const commits: TurnCommit[] = [];
  for (const line of log.stdout.split('\n')) {
    const [commit, tree, subject] = line.split('\0');
    const turn = /^goald: turn (\d+) /.exec(subject ?? '')?.[1];
    if (commit && tree && subject && turn) commits.push({ turn: Number(turn), commit, tree, subject });
  }
  return commits;
}

/** Whether the goal's branch still exists. */
export async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await git(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], repo)).exitCode === 0;
}

/** The commit a ref or commit name stands for, or null when it names none. */
export async function resolveCommit(repo: string, name: string): Promise<string | null> {
  const resolved = await git(['rev-parse', '--verify', '--quiet', `${name}^{commit}`], repo);
  return resolved.exitCode === 0 && resolved.stdout.trim() !== '' ? resolved.stdout.trim() : null;
}

/** The tree of a commit. */
export async function treeOfCommit(repo: string, commit: string): Promise<string> {
  return (await gitOk(['rev-parse', `${commit}^{tree}`], repo)).trim();
}

/** The paths that differ between two commits: those `to` has (written) and those only `from` had (removed). */
export async function changedPaths(repo: string, from: string, to: string): Promise<{ written: string[]; removed: string[] }> {
  const listed = (await gitOk(['diff', '--name-status', '--no-renames', '-z', from, to, '--'], repo)).split('\0');
  const written: string[] = [];
  const removed: string[] = [];
  for (let i = 0; i + 1 < listed.length; i += 2) {
    const status = listed[i] ?? '';
    const file = listed[i + 1] ?? '';
    if (status === '' || file === '') continue;
    (status.startsWith('D') ? removed : written).push(file);
  }
  return { written, removed };
}

/** The working directories (the user's checkout, any worktree) that have `branch` checked out. */
async function checkoutsOf(repo: string, branch: string): Promise<string[]> {
  const listed = await gitOk(['worktree', 'list', '--porcelain', '-z'], repo);
  const dirs: string[] = [];
  let dir: string | null = null;
  for (const line of listed.split('\0')) {
    if (line.startsWith('worktree ')) dir = line.slice('worktree '.length);
    else if (line === `branch refs/heads/${branch}` && dir !== null) dirs.push(dir);
  }
  return dirs;
}

/**
 * Resets a paused goal's worktree, and with it the goal's branch, to `commit` (rollback). Refused, with
 * nothing changed, when the worktree is not on the goal's branch (a reset would move another branch) or
 * holds changes no turn committed (someone edited it since: a reset would lose them).
 */
export async function resetGoalWorktree(worktree: GoalWorktree, commit: string): Promise<void> {
  const head = (await git(['symbolic-ref', '--quiet', 'HEAD'], worktree.dir)).stdout.trim();
  if (head !== `refs/heads/${worktree.branch}`) {
    throw new GoaldError(
      'conflict',
      `the goal's worktree ${worktree.dir} is on ${head === '' ? 'a detached HEAD' : head.replace('refs/heads/', '')}, not on its branch ${worktree.branch}; nothing was changed`,
      `put it back (git -C ${worktree.dir} switch ${worktree.branch}), then roll back again`,
    );
  }
  const status = await gitOk(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], worktree.dir);
  const dirty = status.split('\0').filter(Boolean).map((entry) => entry.slice(3));
  if (dirty.length > 0) {
    const named = dirty.slice(0, 5).join(', ') + (dirty.length > 5 ? ` and ${dirty.length - 5} more` : '');
    throw new GoaldError(
      'conflict',
      `the goal's worktree has changes no turn committed: ${named}; a rollback would lose them, so nothing was changed`,
      `commit them on ${worktree.branch} or undo them (in ${worktree.dir}), then roll back again`,
    );
  }
  await gitOk(['reset', '--quiet', '--hard', commit], worktree.dir);
}

/**
 * Moves a finished goal's branch to `commit` (rollback), only if it is still at `from` (an atomic
 * compare-and-swap); never a branch outside `goald/`, never one checked out anywhere.
 */
export async function moveGoalBranch(worktree: Pick<GoalWorktree, 'repo' | 'branch'>, commit: string, from: string, why: string): Promise<void> {
  if (!worktree.branch.startsWith(GOAL_BRANCH_PREFIX)) throw new GoaldError('internal', `refusing to move ${worktree.branch}: not a goald branch`);
  const checkouts = await checkoutsOf(worktree.repo, worktree.branch);
  if (checkouts.length > 0) {
    throw new GoaldError(
      'conflict',
      `${worktree.branch} is checked out in ${checkouts.join(', ')}; moving it would change the files under that checkout, so nothing was changed`,
      `switch that checkout to another branch (git -C ${checkouts[0] ?? worktree.repo} switch -), or remove a leftover goal worktree with goald prune, then roll back again`,
    );
  }
  const moved = await git(['update-ref', '-m', why, `refs/heads/${worktree.branch}`, commit, from], worktree.repo);
  if (moved.exitCode !== 0) {
    throw new GoaldError('conflict', `${worktree.branch} moved while goald rolled it back: ${lastLine(moved.stderr)}`, 'look at it (git log), then roll back again');
  }
}

/**
 * Checks the goal's branch out again in its worktree directory (a failed goal reopened by `goald edit
 * --resume`; the directory was removed when it ended). Exit 2 when the branch was deleted or is checked out
 * elsewhere. Resolves with whether it made the directory (false: it was there, on the branch, already).
 */
export async function reopenGoalWorktree(worktree: GoalWorktree, goalId: string): Promise<boolean> {
  if (!(await branchExists(worktree.repo, worktree.branch))) {
    const why = worktree.discardOnFail ? 'it was deleted when the goal failed (--discard-on-fail)' : 'it was deleted (goald prune, or by hand)';
    throw new GoaldError('usage', `goal ${goalId}'s branch ${worktree.branch} no longer exists in ${worktree.repo}: ${why}, so its work cannot be resumed`, 'start a new goal with goald start --worktree');
  }
  const checkouts = await checkoutsOf(worktree.repo, worktree.branch);
  if (checkouts.some((dir) => path.resolve(dir) === path.resolve(worktree.dir)) && existsSync(worktree.dir)) return false;
  if (checkouts.length > 0) {
    throw new GoaldError(
      'conflict',
      `goal ${goalId}'s branch ${worktree.branch} is checked out in ${checkouts.join(', ')}; the goal needs it in its own worktree`,
      `switch that checkout to another branch (git -C ${checkouts[0] ?? worktree.repo} switch -), then resume again`,
    );
  }
  if (existsSync(worktree.dir)) {
    throw new GoaldError('conflict', `${worktree.dir} exists but is not goal ${goalId}'s worktree`, 'goald prune removes leftover worktrees; then resume again');
  }
  await mkdir(path.dirname(worktree.dir), { recursive: true, mode: 0o700 });
  const added = await worktreeChanges.run(path.resolve(worktree.repo), async () => {
    await git(['worktree', 'prune'], worktree.repo);
    return gitCheckout(['worktree', 'add', '--quiet', worktree.dir, worktree.branch], worktree.repo);
  });
  if (added.exitCode !== 0) {
    throw new GoaldError('internal', `could not check ${worktree.branch} out again in ${worktree.dir}: ${lastLine(added.stderr)}`, 'see git worktree list; goald prune removes leftovers');
  }
  return true;
}

/** Removes the goal's worktree directory (the branch stays); safe when it is already gone. */
export async function removeGoalWorktree(worktree: Pick<GoalWorktree, 'repo' | 'dir'>, home: string): Promise<boolean> {
  assertUnder(home, worktree.dir);
  return worktreeChanges.run(path.resolve(worktree.repo), async () => {
    const existed = existsSync(worktree.dir);
    if (existed) {
      const removed = existsSync(worktree.repo) ? await gitCheckout(['worktree', 'remove', '--force', '--force', worktree.dir], worktree.repo) : null;
      if (removed === null || removed.exitCode !== 0) await rm(worktree.dir, { recursive: true, force: true });
    }
    // Drops git's record of a worktree whose directory is gone (ours, or any other that vanished).
    if (existsSync(worktree.repo)) await git(['worktree', 'prune'], worktree.repo);
    return existed;
  });
}

/** Deletes a goal branch; never one outside `goald/`. Resolves with whether it existed. */
export async function deleteGoalBranch(repo: string, branch: string): Promise<boolean> {
  if (!branch.startsWith(GOAL_BRANCH_PREFIX)) throw new GoaldError('internal', `refusing to delete ${branch}: not a goald branch`);
  if (!existsSync(repo) || !(await branchExists(repo, branch))) return false;
  await gitOk(['branch', '-D', '--quiet', branch], repo);
  return true;
}

/** Ends a goal's worktree: the directory goes; the branch goes too for a failed goal with discardOnFail. */
export async function closeGoalWorktree(worktree: GoalWorktree, status: 'achieved' | 'failed', home: string): Promise<void> {
  await removeGoalWorktree(worktree, home);
  if (status === 'failed' && worktree.discardOnFail) await deleteGoalBranch(worktree.repo, worktree.branch);
}

// goald deletes only inside GOALD_HOME.
function assertUnder(home: string, dir: string): void {
  const relative = path.relative(path.resolve(home), path.resolve(dir));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new GoaldError('internal', `refusing to remove ${dir}: it is not inside GOALD_HOME`);
  }
}
