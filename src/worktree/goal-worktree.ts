// A worktree goal's git side (issue 12): the goal runs in its own linked worktree under GOALD_HOME, on its
// own branch `goald/<id>` made from the user's HEAD. The user's checkout, index, stash and branches are
// never touched: every command here runs either in the goal's worktree or on `goald/*` refs.

import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { GoalWorktree } from '../../state/types.js';
import { GoaldError } from '../errors.js';
import { runGit, type GitResult } from '../workspace/git.js';

/** The prefix of every branch goald makes; nothing else is ever deleted. */
const GOAL_BRANCH_PREFIX = 'goald/';

/** Who the turn commits are by when `worktree.author` is not set. */
export const DEFAULT_WORKTREE_AUTHOR = 'goald <goald@localhost>';


/** Where a goal's worktree lives: GOALD_HOME/worktrees/<id>. */
export function worktreeDirFor(home: string, goalId: string): string {
  return path.join(home, 'worktrees', goalId);
}

async function git(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<GitResult> {
  return runGit(args, { cwd, allowFailure: true, ...(env ? { env } : {}) });
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
  const branch = await freeBranchName(options.repo, options.goalId);
  // `-b` refuses an existing branch, so a name taken between the lookup and here is never overwritten.
  const added = await git(['worktree', 'add', '--quiet', '-b', branch, dir, base], options.repo);
  if (added.exitCode !== 0) {
    throw new GoaldError('internal', `could not create the goal's worktree: ${lastLine(added.stderr)}`, 'see git worktree list; goald prune removes leftovers');
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

/** The subject of a turn's commit: `goald: turn N · <short reason>`. */
function turnCommitSubject(turn: number, reason: string): string {
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

/** The goal's turn commits, oldest first (read back from the branch's subjects). */
export async function turnCommits(worktree: Pick<GoalWorktree, 'repo' | 'branch' | 'base'>): Promise<{ turn: number; commit: string; subject: string }[]> {
  const log = await git(['log', '--reverse', '--format=%H%x00%s', `${worktree.base}..refs/heads/${worktree.branch}`], worktree.repo);
  if (log.exitCode !== 0) return [];
  const commits: { turn: number; commit: string; subject: string }[] = [];
  for (const line of log.stdout.split('\n')) {
    const [commit, subject] = line.split('\0');
    const turn = /^goald: turn (\d+) /.exec(subject ?? '')?.[1];
    if (commit && subject && turn) commits.push({ turn: Number(turn), commit, subject });
  }
  return commits;
}

/** Whether the goal's branch still exists. */
export async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await git(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], repo)).exitCode === 0;
}

/**
 * For rollback (issue 12 part B): resets the goal's worktree and branch to the commit of turn `turn` (0:
 * the base). Only the goal's own worktree is reset; the user's checkout is not involved. Resolves with the
 * commit it reset to (a turn that changed nothing has the tree of the last turn before it that did).
 */
export async function resetWorktreeToTurn(worktree: GoalWorktree, turn: number): Promise<string> {
  // A turn that changed nothing made no commit: its tree is the last commit of a turn before it.
  const commits = turn > 0 ? await turnCommits(worktree) : [];
  const target = commits.filter((entry) => entry.turn <= turn).at(-1)?.commit ?? worktree.base;
  await gitOk(['reset', '--quiet', '--hard', target], worktree.dir);
  await gitOk(['clean', '-fdq'], worktree.dir);
  return target;
}

/** Removes the goal's worktree directory (the branch stays); safe when it is already gone. */
export async function removeGoalWorktree(worktree: Pick<GoalWorktree, 'repo' | 'dir'>, home: string): Promise<boolean> {
  assertUnder(home, worktree.dir);
  const existed = existsSync(worktree.dir);
  if (existed) {
    const removed = existsSync(worktree.repo) ? await git(['worktree', 'remove', '--force', '--force', worktree.dir], worktree.repo) : null;
    if (removed === null || removed.exitCode !== 0) await rm(worktree.dir, { recursive: true, force: true });
  }
  // Drops git's record of a worktree whose directory is gone (ours, or any other that vanished).
  if (existsSync(worktree.repo)) await git(['worktree', 'prune'], worktree.repo);
  return existed;
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
