// `goald diff <goal> [--turn n]` and `goald apply <goal> [-C dir] [--pr]`: a worktree goal's branch shown,
// merged into the user's current branch, or offered as a pull request (src/worktree/apply-goal.ts).

import { execFile } from 'node:child_process';
import path from 'node:path';
import { z } from '../../zod.js';
import { openStore, resolveGoaldHome } from '../../../state/index.js';
import type { GoalRecord } from '../../../state/types.js';
import { findTool } from '../../process/goald-tools.js';
import { quoteShellWord } from '../../agents/shell-quote.js';
import { parsePositiveInt } from '../../config/duration.js';
import { EXIT, GoaldError } from '../../errors.js';
import { findRace, readRaces } from '../../race/race-record.js';
import { applyGoal, goalDiff, pullRequestArgs } from '../../worktree/apply-goal.js';
import { WORKER_EMAIL } from '../../cluster/goal-branch.js';
import { CONFIG_FILE_NAME } from '../../config/load-config.js';
import { clusterDaemon } from '../cluster-daemon.js';
import { lookupGoal } from '../goal-lookup.js';
import type { CliIO } from '../io.js';

// Who a cluster goal's turn commits are by (the workers commit as goald).
const CLUSTER_AUTHOR = `goald <${WORKER_EMAIL}>`;

/**
 * The goal `ref` names, with its branch: a worktree goal's from this home; a cluster goal's through the
 * control plane, which fetches `goald/<id>` from the cluster's remote into the repository at `dir` (default:
 * the workspace the goal was started from) first.
 */
async function findGoal(ref: string, io: CliIO, dir?: string): Promise<GoalRecord> {
  const home = resolveGoaldHome(io.env);
  // A race (`goald race`) stands for its winner.
  const race = ref.startsWith('r') ? findRace(await readRaces(home), ref) : null;
  if (race !== null && (race.status !== 'picked' || race.winner === null)) {
    throw new GoaldError('usage', `race ${race.id} ${race.status === 'running' ? 'is still running' : 'has no winner: no member achieved the goal'}`, `see goald show ${race.id}`);
  }
  const goalRef = race?.winner ?? ref;
  const cluster = await clusterDaemon(io.env);
  if (cluster !== null) {
    const found = await lookupGoal(cluster.goals, goalRef, io.cwd);
    const { goal, branch } = await cluster.client.goalBranch(found.id, dir ?? found.workspace);
    return { ...goal, worktree: { ...branch, dir: branch.repo, author: CLUSTER_AUTHOR, discardOnFail: false } };
  }
  return lookupGoal((await (await openStore(home)).read()).goals, goalRef, io.cwd);
}

const diffOptionsSchema = z.object({ turn: z.string().optional() });

/** `goald diff <goal> [--turn n]`: the goal's branch since its base, or one turn's commit. */
export async function runDiff(ref: string, rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const options = diffOptionsSchema.parse(rawOptions);
  const turn = options.turn === undefined ? undefined : parsePositiveInt(options.turn, '--turn');
  const patch = await goalDiff(await findGoal(ref, io), turn);
  if (patch !== '') io.out(patch.replace(/\n$/, ''));
  else if (turn !== undefined) io.err(`goald: turn ${turn} changed nothing`);
  return EXIT.ok;
}

const applyOptionsSchema = z.object({ dir: z.string().optional(), pr: z.boolean().default(false), json: z.boolean().default(false) });

/** `goald apply <goal> [-C dir] [--pr] [--json]`. */
export async function runApply(ref: string, rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const options = applyOptionsSchema.parse(rawOptions);
  const dir = path.resolve(io.cwd, options.dir ?? '.');
  const goal = await findGoal(ref, io, dir);
  if (options.pr) return openPullRequest(goal, dir, options.json, io);
  const outcome = await applyGoal(goal, dir);
  if (options.json) io.out(JSON.stringify({ type: 'goal.applied', id: goal.id, ...outcome }));
  else if (outcome.how === 'up-to-date') io.out(`${outcome.into ?? 'HEAD'} already has ${outcome.branch}: nothing to apply`);
  else io.out(`applied goal ${goal.id}: ${outcome.branch} → ${outcome.into ?? 'HEAD'} (${outcome.how}, ${outcome.commit.slice(0, 12)})`);
  // The agent's branch carried a new contract (checks, evaluator, limits, loops) for whatever runs here next.
  if (outcome.configChanged) io.err(`goald: warning: this merge changed ${CONFIG_FILE_NAME}, which goal ${goal.id}'s agent wrote: review it (git log -p -- ${CONFIG_FILE_NAME}); new goals and loops here use it`);
  return EXIT.ok;
}

// `gh pr create`, shown before it runs; gh itself asks for nothing (its output is passed on).
async function openPullRequest(goal: GoalRecord, dir: string, json: boolean, io: CliIO): Promise<number> {
  const args = await pullRequestArgs(goal, dir);
  const gh = findTool('gh', { cwd: dir, env: io.env });
  if (gh === null) {
    throw new GoaldError('usage', '--pr: gh (the GitHub CLI) is not on PATH', `install it (https://cli.github.com), or merge locally: goald apply ${goal.id}`);
  }
  const shown = ['gh', ...args].map(quoteShellWord).join(' ');
  if (!json) io.out(`$ ${shown}`);
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(gh, args, { cwd: dir, env: io.env, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
  if (json) io.out(JSON.stringify({ type: 'goal.pr', id: goal.id, command: ['gh', ...args], exitCode: result.code, output: result.stdout.trim() }));
  else if (result.stdout.trim() !== '') io.out(result.stdout.trim());
  if (result.stderr.trim() !== '') io.err(result.stderr.trim());
  return result.code === 0 ? EXIT.ok : EXIT.goalFailed;
}
