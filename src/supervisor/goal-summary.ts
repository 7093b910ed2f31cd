// The goal's running totals (status, history, the final box, the recitation's progress line).

import type { GoalSummary } from '../../state/types.js';
import type { Verdict } from '../evaluator/types.js';
import type { CheckResult } from '../workspace/types.js';

/** What one turn (or the pre-check, or a turn cut short) adds to the summary. */
export interface SummaryUpdate {
  turn: number;
  tokens: number;
  costUsd: number;
  /** The checks as they stand now (the last run's when this turn ran none). */
  checks: CheckResult[];
  /** The evaluator's latest verdict, if any turn got one. */
  lastVerdict: Verdict | null;
  activeMs: number;
  /** Files changed since the goal started, when this turn recomputed them. */
  files?: GoalSummary['files'];
}

/** The summary after one more turn. */
export function summarizeTurn(summary: GoalSummary, update: SummaryUpdate): GoalSummary {
  const passing = update.checks.filter((check) => check.passed).length;
  return {
    ...summary,
    turns: Math.max(summary.turns, update.turn),
    tokens: summary.tokens + update.tokens,
    costUsd: summary.costUsd + update.costUsd,
    files: update.files ?? summary.files,
    lastVerdictReason: update.lastVerdict?.reason ?? summary.lastVerdictReason,
    remaining: update.lastVerdict?.remaining ?? summary.remaining,
    checksPassing: passing,
    checksFailing: update.checks.length - passing,
    activeMs: update.activeMs,
  };
}
