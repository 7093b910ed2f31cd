// What a finished turn reports: the facts the breakers fold in, and the `turn.finished` progress event.

import type { TurnResult } from '../agents/types.js';
import { distanceOf } from '../breakers/index.js';
import type { BreakerName, TurnFacts } from '../breakers/types.js';
import type { EvaluationResult } from '../evaluator/types.js';
import type { TamperFinding } from '../guard/types.js';
import { checksSignature } from '../workspace/checks.js';
import type { CheckResult, TurnDelta } from '../workspace/types.js';
import type { CheckBrief, ProgressEvent } from './types.js';

/** One evaluated turn, as the breakers and the progress events see it. */
export interface FinishedTurn {
  goalId: string;
  turn: number;
  maxTurns: number;
  result: TurnResult;
  tree: string;
  delta: TurnDelta;
  checks: CheckResult[];
  evaluation: EvaluationResult;
  /** Agent + evaluator tokens. */
  tokens: number;
  /** Active time the turn took (paused time excluded). */
  activeMs: number;
  /** The tamper guard's findings ([] when clean or off). */
  tamper: TamperFinding[];
}

/** Names and pass/fail of each check, as progress events carry them. */
export function briefChecks(checks: CheckResult[]): CheckBrief[] {
  return checks.map((check) => ({ name: check.name, passed: check.passed }));
}

/** What one evaluated turn contributes to the breakers. */
export function turnFacts(turn: FinishedTurn): TurnFacts {
  const { result, delta, evaluation } = turn;
  return {
    distance: distanceOf(evaluation.kind === 'verdict' ? evaluation.verdict : null, turn.checks),
    turn: turn.turn,
    tokens: turn.tokens,
    costUsd: result.usage.costUsd ?? 0,
    tree: turn.tree,
    patchId: delta.patchId,
    changedPaths: delta.files.map((file) => file.path),
    checksSignature: checksSignature(turn.checks),
    agentFailed: result.outcome !== 'completed',
    evaluatorFailed: evaluation.kind === 'error',
    evaluatorSkipped: evaluation.kind === 'skipped',
    turnTokenLimitHit: result.outcome === 'token-limit',
    permissionDenied: (result.permissionDenials ?? 0) > 0,
    activeMs: turn.activeMs,
    tampered: turn.tamper.length > 0,
  };
}

// The files a turn.finished event names (the count is always whole).
const VIEW_FILES = 20;

/** The `turn.finished` event of one evaluated turn; `counters` are the breakers' after it (views show them). */
export function turnFinishedEvent(
  turn: FinishedTurn,
  counters: Partial<Record<BreakerName, number>> = {},
): Extract<ProgressEvent, { type: 'turn.finished' }> {
  const { result, evaluation } = turn;
  return {
    type: 'turn.finished',
    id: turn.goalId,
    turn: turn.turn,
    maxTurns: turn.maxTurns,
    outcome: result.outcome,
    durationMs: result.durationMs,
    tokens: turn.tokens,
    tokensEstimated: result.usage.estimated,
    filesChanged: turn.delta.files.length,
    checks: briefChecks(turn.checks),
    verdict: evaluation.kind === 'verdict' ? { achieved: evaluation.verdict.achieved, reason: evaluation.verdict.reason } : null,
    evaluatorError: evaluation.kind === 'error' ? evaluation.message : null,
    agentError: result.error ?? null,
    tamper: turn.tamper.map(({ path, kind, detail }) => ({ path, kind, detail })),
    view: {
      costUsd: result.usage.costUsd,
      remaining: evaluation.kind === 'verdict' ? evaluation.verdict.remaining : [],
      files: turn.delta.files.slice(0, VIEW_FILES).map((file) => file.path),
      breakers: counters,
    },
    distance: distanceOf(evaluation.kind === 'verdict' ? evaluation.verdict : null, turn.checks),
  };
}
