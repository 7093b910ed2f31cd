// What the dashboard's JSON endpoints send: goal and loop views made by the view functions `goald watch`
// uses too (deriveGoalView, deriveLoopView), and the turn timeline and one turn's detail read from the
// goal's turn log. Everything here is data; the page shows every string as text.

import { open } from 'node:fs/promises';
import path from 'node:path';

import { readTurnRecords, type TurnRecord } from '../../state/index.js';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import type { GoalHost } from '../daemon/types.js';
import { isLiveGoal } from '../daemon/resolve-goal.js';
import { GoaldError } from '../errors.js';
import type { ProgressEvent } from '../supervisor/types.js';
import { deriveGoalView, type GoalView } from '../view/goal-view.js';
import { deriveLoopView, type LoopView } from '../view/loop-view.js';
import type { TurnDetail, TurnRow } from './dashboard-types.js';

// A turn's prompt is shown up to this many bytes (prompts are bounded, but a page need not carry more).
const MAX_PROMPT_BYTES = 64 * 1024;

/** A goal's view from its record and stored events (the same function every view uses). */
export function viewOf(goal: GoalRecord, events: readonly ProgressEvent[], loops: readonly LoopRecord[], now = Date.now()): GoalView {
  const loop = goal.loopId === null ? null : (loops.find((candidate) => candidate.id === goal.loopId) ?? null);
  return deriveGoalView({ goal, events, loop, now });
}

/** The list page: every goal's view (live goals with their events) and every loop. */
export async function listDashboard(host: GoalHost, now = Date.now()): Promise<{ goals: GoalView[]; loops: LoopView[] }> {
  const [goals, loops] = await Promise.all([host.listGoals(), host.listLoops()]);
  const views = await Promise.all(
    goals.map(async (goal) => {
      // A finished goal's record already holds its totals; only live goals need their events read.
      const events = isLiveGoal(goal) ? (await host.subscribe(goal.id)).past : [];
      return viewOf(goal, events, loops, now);
    }),
  );
  return { goals: views, loops: loops.map((loop) => deriveLoopView({ loop, goals, now })) };
}

function goalDirOf(host: GoalHost, goal: GoalRecord): string {
  return path.join(host.info().home, 'goals', goal.id);
}

function turnRow(record: TurnRecord): TurnRow {
  const verdict = record.evaluation.kind === 'verdict' ? record.evaluation.verdict : null;
  return {
    turn: record.turn,
    finishedAt: record.finishedAt,
    outcome: record.agent?.outcome ?? 'pre-check',
    filesChanged: record.files.length,
    checksPassing: record.checks.filter((check) => check.passed).length,
    checksTotal: record.checks.length,
    achieved: verdict === null ? null : verdict.achieved,
    tokens: record.tokens,
    tamper: record.tamper?.length ?? 0,
  };
}

/** The goal page: the goal's view and its turn timeline. */
export async function goalDashboard(host: GoalHost, ref: string): Promise<{ view: GoalView; turns: TurnRow[] }> {
  const goal = await host.getGoal(ref);
  const [subscription, loops, records] = await Promise.all([
    host.subscribe(goal.id),
    goal.loopId === null ? Promise.resolve([]) : host.listLoops(),
    readTurnRecords(goalDirOf(host, goal)),
  ]);
  return { view: viewOf(goal, subscription.past, loops), turns: records.map(turnRow) };
}

/** Reads at most `limit` bytes of a file; null when it is not there. */
async function readHead(file: string, limit: number): Promise<string | null> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(limit);
    const { bytesRead } = await handle.read(buffer, 0, limit, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** One turn of a goal in full (404 when the goal has no such turn). */
export async function turnDashboard(host: GoalHost, ref: string, turn: number): Promise<TurnDetail> {
  const goal = await host.getGoal(ref);
  const dir = goalDirOf(host, goal);
  const record = (await readTurnRecords(dir)).findLast((candidate) => candidate.turn === turn);
  if (record === undefined) throw new GoaldError('not-found', `goal ${goal.id} has no turn ${turn}`, 'pick a turn from the timeline');
  const evaluation = record.evaluation;
  const verdict = evaluation.kind === 'verdict' ? evaluation.verdict : null;
  // The prompt file is named by our own record; a name with a directory in it is not followed.
  const promptFile = record.promptFile !== null && path.basename(record.promptFile) === record.promptFile ? record.promptFile : null;
  return {
    turn: record.turn,
    outcome: record.agent?.outcome ?? 'pre-check',
    agentError: record.agent?.error ?? null,
    files: record.files.map((file) => ({ path: file.path, status: file.status, added: file.added, deleted: file.deleted })),
    checks: record.checks.map((check) => ({
      name: check.name,
      command: check.command,
      passed: check.passed,
      exitCode: check.exitCode,
      timedOut: check.timedOut,
      outputTail: check.outputTail,
    })),
    evaluation: {
      kind: evaluation.kind,
      achieved: verdict === null ? null : verdict.achieved,
      reason: verdict !== null ? verdict.reason : evaluation.kind === 'error' ? evaluation.message : evaluation.kind === 'skipped' ? evaluation.reason : null,
      remaining: verdict?.remaining ?? [],
    },
    tamper: (record.tamper ?? []).map((finding) => ({ path: finding.path, kind: finding.kind, detail: finding.detail })),
    guidance: record.guidance ?? [],
    prompt: promptFile === null ? null : await readHead(path.join(dir, promptFile), MAX_PROMPT_BYTES),
  };
}
