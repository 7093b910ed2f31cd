// `goald apply` and `goald diff` for worktree goals (issue 12): an achieved goal's branch merged into the
// user's current branch (fast-forward, else a merge commit), never over uncommitted changes it would touch
// and never into a conflict; or offered as a pull request through `gh pr create`. `diff` shows the branch.

import path from 'node:path';
import type { GoalRecord, GoalWorktree } from '../../state/types.js';
import { GoaldError } from '../errors.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { runGit, type GitResult } from '../workspace/git.js';
import { CONFIG_FILE_NAME } from '../config/load-config.js';
import { branchExists, DEFAULT_WORKTREE_AUTHOR, parseAuthor, turnCommits, turnCommitsUpTo } from './goal-worktree.js';

/** The worktree of a goal that has one; exit 2 (with what to do instead) for an in-place goal. */
export function worktreeOf(goal: GoalRecord, command: string): GoalWorktree {
  if (goal.worktree === undefined) {
    throw new GoaldError(
      'usage',
      `goal ${goal.id} worked in place in ${goal.workspace}, not in a worktree: its changes are already there`,
      `use git diff in ${goal.workspace}; ${command} is for goals started with --worktree`,
    );
  }
  return goal.worktree;
}

async function git(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<GitResult> {
  return runGit(args, { cwd, allowFailure: true, ...(env ? { env } : {}) });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.trim() ?? '';
}

/** The goal's changes as a patch: the whole branch since its base, or one turn's commit. */
export async function goalDiff(goal: GoalRecord, turn?: number): Promise<string> {
  const worktree = worktreeOf(goal, 'goald diff');
  await requireBranch(goal, worktree);
  if (turn === undefined) {
    return (await git(['diff', '--no-color', '--no-ext-diff', worktree.base, `refs/heads/${worktree.branch}`], worktree.repo)).stdout;
  }
  const turns = goal.summary.turns;
  if (turn < 1 || turn > turns) {
    throw new GoaldError('usage', `--turn ${turn}: goal ${goal.id} has turns 1 to ${turns}`, `pick one of them, or leave --turn out for the whole branch`);
  }
  // A turn a rollback took off the branch is still on the tip the branch was moved away from.
  const tips = [`refs/heads/${worktree.branch}`, ...(goal.rollbacks ?? []).flatMap((rollback) => (rollback.fromCommit ? [rollback.fromCommit] : [])).reverse()];
  for (const tip of tips) {
    const commit = (await turnCommitsUpTo(worktree, tip)).find((entry) => entry.turn === turn);
    if (commit) return (await git(['show', '--no-color', '--no-ext-diff', '--format=commit %H%n%s%n', commit.commit], worktree.repo)).stdout;
  }
  return '';
}

async function requireBranch(goal: GoalRecord, worktree: GoalWorktree): Promise<void> {
  if (!(await branchExists(worktree.repo, worktree.branch))) {
    throw new GoaldError('usage', `goal ${goal.id}'s branch ${worktree.branch} no longer exists in ${worktree.repo}`, 'it was deleted (--discard-on-fail, goald prune, or by hand)');
  }
}

/** The goal's worktree, for an achieved goal; exit 2 for one that failed or has not ended. */
function applicable(goal: GoalRecord): GoalWorktree {
  const worktree = worktreeOf(goal, 'goald apply');
  if (goal.status === 'failed') {
    throw new GoaldError('usage', `goal ${goal.id} failed (${goal.reason ?? 'unknown'}): only an achieved goal is applied`, `inspect its branch: goald diff ${goal.id}, or git merge ${worktree.branch} yourself`);
  }
  if (goal.status !== 'achieved') {
    throw new GoaldError('usage', `goal ${goal.id} is ${goal.status}: only an achieved goal is applied`, `wait for it: goald logs -f ${goal.id}`);
  }
  return worktree;
}

/** What `apply` did. */
export interface ApplyOutcome {
  branch: string;
  /** The user's branch it went into (null: a detached HEAD). */
  into: string | null;
  how: 'fast-forward' | 'merge' | 'up-to-date';
  commit: string;
  /** The merge changed the workspace's goal.config.json: the goal's agent wrote the next goals' contract. */
  configChanged: boolean;
}

/** Merges an achieved goal's branch into the current branch of the checkout at `dir` (the goal's repository). */
export async function applyGoal(goal: GoalRecord, dir: string): Promise<ApplyOutcome> {
  const worktree = applicable(goal);
  await requireBranch(goal, worktree);
  const target = await resolveWorkspace(dir);
  const source = await resolveWorkspace(worktree.repo).catch(() => null);
  if (source === null || path.resolve(source.commonDir) !== path.resolve(target.commonDir)) {
    throw new GoaldError('usage', `${target.root} is not a checkout of ${worktree.repo}, where goal ${goal.id}'s branch is`, `run it there: goald apply ${goal.id} -C ${worktree.repo}`);
  }
  const ref = `refs/heads/${worktree.branch}`;
  const into = (await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], target.root)).stdout.trim() || null;
  const head = (await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], target.root)).stdout.trim();
  const tip = (await git(['rev-parse', ref], target.root)).stdout.trim();
  if ((await git(['merge-base', '--is-ancestor', tip, head], target.root)).exitCode === 0) {
    return { branch: worktree.branch, into, how: 'up-to-date', commit: head, configChanged: false };
  }
  await refuseTouchingUncommitted(goal, target.root, head, ref);
  await refuseConflicts(goal, target.root, head, ref, into);
  const fastForward = (await git(['merge-base', '--is-ancestor', head, tip], target.root)).exitCode === 0;
  const message = `goald: apply goal ${goal.id} (${worktree.branch})`;
  const merged = await git(['merge', '--no-edit', '--no-verify', '--no-gpg-sign', '-m', message, ref], target.root, await identityEnv(target.root, worktree));
  if (merged.exitCode !== 0) {
    await git(['merge', '--abort'], target.root);
    throw new GoaldError('conflict', `git merge of ${worktree.branch} failed: ${firstLine(merged.stderr) || firstLine(merged.stdout)}`, `merge it yourself: git merge ${worktree.branch}`);
  }
  const commit = (await git(['rev-parse', 'HEAD'], target.root)).stdout.trim();
  const configChanged = (await git(['diff', '--quiet', head, commit, '--', CONFIG_FILE_NAME], target.root)).exitCode === 1;
  return { branch: worktree.branch, into, how: fastForward ? 'fast-forward' : 'merge', commit, configChanged };
}

// The paths the merge changes (the branch's side since the merge base) against every uncommitted change
// (staged, unstaged, untracked): any overlap refuses, naming the files.
async function refuseTouchingUncommitted(goal: GoalRecord, root: string, head: string, ref: string): Promise<void> {
  const changed = (await git(['diff', '--name-only', '--no-renames', '-z', `${head}...${ref}`], root)).stdout.split('\0').filter(Boolean);
  const status = (await git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], root)).stdout;
  const dirty = new Set(status.split('\0').filter(Boolean).map((entry) => entry.slice(3)));
  const touched = changed.filter((file) => dirty.has(file));
  if (touched.length > 0) {
    const named = touched.slice(0, 5).join(', ') + (touched.length > 5 ? ` and ${touched.length - 5} more` : '');
    throw new GoaldError(
      'conflict',
      `goald apply ${goal.id} would touch ${touched.length} file(s) you changed and have not committed: ${named}; nothing was changed`,
      'commit or stash them first (git stash), then apply again',
    );
  }
}

// A merge that would conflict is refused before anything is written (git merge-tree works on objects only).
async function refuseConflicts(goal: GoalRecord, root: string, head: string, ref: string, into: string | null): Promise<void> {
  const trial = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', head, ref], root);
  if (trial.exitCode === 0) return;
  if (trial.exitCode !== 1) throw new GoaldError('internal', `git merge-tree failed: ${firstLine(trial.stderr)}`);
  const files = trial.stdout.split('\n').slice(1).filter(Boolean);
  const named = files.slice(0, 5).join(', ') + (files.length > 5 ? ` and ${files.length - 5} more` : '');
  throw new GoaldError(
    'conflict',
    `goal ${goal.id}'s branch conflicts with ${into ?? 'HEAD'} in ${named || 'some files'}; nothing was changed`,
    `merge it yourself and resolve the conflicts: git merge ${ref.replace('refs/heads/', '')}`,
  );
}

// The user's own identity makes the merge commit; without one configured, the goal's author does.
async function identityEnv(root: string, worktree: GoalWorktree): Promise<Record<string, string> | undefined> {
  if ((await git(['var', 'GIT_COMMITTER_IDENT'], root)).exitCode === 0) return undefined;
  const { name, email } = parseAuthor(worktree.author || DEFAULT_WORKTREE_AUTHOR, 'worktree.author');
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

/** The `gh pr create` arguments for an achieved goal's branch (the base: the checkout's current branch). */
export async function pullRequestArgs(goal: GoalRecord, dir: string): Promise<string[]> {
  const worktree = applicable(goal);
  await requireBranch(goal, worktree);
  const base = (await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], dir)).stdout.trim();
  const commits = await turnCommits(worktree);
  const body = [
    `goald goal ${goal.id}: ${goal.condition}`,
    '',
    `${goal.summary.turns} turn(s); ${goal.summary.lastVerdictReason ?? 'checks pass'}`,
    '',
    ...commits.map((entry) => `- ${entry.subject}`),
  ].join('\n');
  return ['pr', 'create', '--head', worktree.branch, ...(base === '' ? [] : ['--base', base]), '--title', goal.condition.slice(0, 120), '--body', body];
}
