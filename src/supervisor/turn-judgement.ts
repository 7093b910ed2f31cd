// Judging a turn: the evaluator's verdict when it can still change the outcome, and the rule that
// decides whether the goal is met (no model overrules a failing check or a tamper finding).

import type { TurnResult } from '../agents/types.js';
import type { GoalSettings } from '../config/types.js';
import type { EvaluationInput, EvaluationResult, Evaluator, Verdict } from '../evaluator/types.js';
import type { GuardReport, TamperFinding } from '../guard/types.js';
import type { CheckResult, Snapshotter, TurnDelta } from '../workspace/types.js';

const PATCH_FOR_EVALUATOR_MAX_CHARS = 12_000; // half the default evaluator budget; the evaluator cuts further

/** What the judge needs from the goal besides the turn itself. */
export interface Judge {
  evaluator: Evaluator;
  snapshotter: Pick<Snapshotter, 'patch'>;
  settings: Pick<GoalSettings, 'condition' | 'limits' | 'evaluator'>;
  previousVerdict: Verdict | null;
  signal: AbortSignal;
}

/** A turn's evidence: its checks and delta, between which trees. */
export interface TurnEvidence {
  previousTree: string;
  tree: string;
  delta: TurnDelta;
  checks: CheckResult[];
  /** The tamper guard's report on the turn (none for the pre-check). */
  guard?: GuardReport;
}

// No model can overrule a failing check or a turn that weakened its own grading (tamper); with no
// evaluator (`none`), passing checks alone decide.
export function isGoalMet(
  checks: CheckResult[],
  evaluation: EvaluationResult,
  provider: Evaluator['provider'],
  tamper: readonly TamperFinding[] = [],
): boolean {
  if (tamper.length > 0) return false;
  if (!checks.every((check) => check.passed)) return false;
  if (provider === 'none') return checks.length > 0;
  return evaluation.kind === 'verdict' && evaluation.verdict.achieved;
}

/** The evaluator's tokens of one call (none when it was skipped). */
export function evaluationTokens(result: EvaluationResult): number {
  return result.kind === 'skipped' ? 0 : result.usage.inputTokens + result.usage.outputTokens;
}

/** The verdict on one turn, unless the evaluator is `none` or a failed check already decided it. */
export async function judgeTurn(judge: Judge, turn: number, result: TurnResult, evidence: TurnEvidence): Promise<EvaluationResult> {
  const { checks, delta, previousTree, tree } = evidence;
  const tamper = evidence.guard?.tamper ?? [];
  if (judge.evaluator.provider === 'none') return { kind: 'skipped', reason: 'checks decide' };
  if (!checks.every((check) => check.passed) && judge.settings.evaluator.skipWhenChecksFail) {
    return { kind: 'skipped', reason: 'a check failed, so no verdict could change the outcome' };
  }
  if (tamper.length > 0 && judge.settings.evaluator.skipWhenChecksFail) {
    return { kind: 'skipped', reason: 'the turn tampered with its own grading, so no verdict could change the outcome' };
  }
  const patch = delta.empty ? '' : await judge.snapshotter.patch(previousTree, tree, PATCH_FOR_EVALUATOR_MAX_CHARS);
  return askEvaluator(judge, turn, checks, {
    files: delta.files,
    patch,
    agentFinalMessage: result.finalMessage,
    agentOutputTail: result.outputTail,
    ...(evidence.guard ? { tamper: evidence.guard.tamper, guardNotes: evidence.guard.notes } : {}),
  });
}

/** One evaluator call; a call abandoned because the goal stopped comes back as skipped. */
export async function askEvaluator(
  judge: Judge,
  turn: number,
  checks: CheckResult[],
  evidence: Pick<EvaluationInput, 'files' | 'patch' | 'agentFinalMessage' | 'agentOutputTail' | 'tamper' | 'guardNotes'>,
): Promise<EvaluationResult> {
  const { condition, limits } = judge.settings;
  const input: EvaluationInput = { condition, turn, maxTurns: limits.maxTurns, checks, ...evidence, previousVerdict: judge.previousVerdict };
  try {
    return await judge.evaluator.evaluate(input, judge.signal);
  } catch (error) {
    if (judge.signal.aborted) return { kind: 'skipped', reason: 'goal stopped' };
    throw error;
  }
}
