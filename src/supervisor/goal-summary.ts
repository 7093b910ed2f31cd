// The goal's running totals (status, history, the final box, the recitation's progress line).

import type { TurnRecord } from '../../state/turn-record.js';
import type { GoalSummary } from '../../state/types.js';
import type { Verdict } from '../evaluator/types.js';
import type { TamperFinding } from '../guard/types.js';
import type { CheckResult } from '../workspace/types.js';

// state.json is read and rewritten whole on every goal write: a turn that touches 50 000 files must not
// make it megabytes. The first files in path order are listed; the rest are counted (`filesOmitted`).
const SUMMARY_FILES_MAX = 200;

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
  /** The tamper guard's findings on this turn, when it was inspected. */
  tamper?: TamperFinding[];
}

/** The summary after one more turn. */
export function summarizeTurn(summary: GoalSummary, update: SummaryUpdate): GoalSummary {
  const passing = update.checks.filter((check) => check.passed).length;
  const { filesOmitted: _previous, ...rest } = summary;
  return {
    ...rest,
    turns: Math.max(summary.turns, update.turn),
    tokens: summary.tokens + update.tokens,
    costUsd: summary.costUsd + update.costUsd,
    ...cappedFiles(update.files, summary),
    lastVerdictReason: update.lastVerdict?.reason ?? summary.lastVerdictReason,
    remaining: update.lastVerdict?.remaining ?? summary.remaining,
    checksPassing: passing,
    checksFailing: update.checks.length - passing,
    activeMs: update.activeMs,
    ...tamperSummary(summary, update.tamper),
  };
}

/**
 * The summary with the turns turns.jsonl holds beyond the last one it counts. A turn's record is flushed
 * to turns.jsonl before state.json says the turn ended (with the next agent's spawn record, when the next
 * turn starts at once: TurnWrites.record), so a process that died in between left the stored
 * summary a turn behind the records. Their files are not listed (the next turn recomputes them).
 */
export function withRecordedTurns(summary: GoalSummary, records: readonly TurnRecord[]): GoalSummary {
  let caughtUp = summary;
  for (const [index, record] of records.entries()) {
    if (record.turn <= caughtUp.turns) continue;
    const costBefore = records[index - 1]?.breakers.costUsd ?? 0;
    caughtUp = summarizeTurn(caughtUp, {
      turn: record.turn,
      tokens: record.tokens,
      costUsd: Math.max(0, record.breakers.costUsd - costBefore),
      checks: record.checks,
      lastVerdict: record.evaluation.kind === 'verdict' ? record.evaluation.verdict : null,
      activeMs: caughtUp.activeMs,
      ...(record.tamper === undefined ? {} : { tamper: record.tamper }),
    });
  }
  return caughtUp;
}

// The files to list (at most SUMMARY_FILES_MAX) and how many more changed (the key only when some did);
// the summary's own when this turn did not recompute them.
function cappedFiles(files: GoalSummary['files'] | undefined, summary: GoalSummary): Pick<GoalSummary, 'files' | 'filesOmitted'> {
  if (files === undefined) return summary.filesOmitted === undefined ? { files: summary.files } : { files: summary.files, filesOmitted: summary.filesOmitted };
  const omitted = files.length - SUMMARY_FILES_MAX;
  return omitted > 0 ? { files: files.slice(0, SUMMARY_FILES_MAX), filesOmitted: omitted } : { files };
}

// Counted only for turns that tampered; a clean turn keeps what was there.
function tamperSummary(summary: GoalSummary, tamper: TamperFinding[] | undefined): Pick<GoalSummary, 'tamper'> {
  if (tamper === undefined || tamper.length === 0) return summary.tamper === undefined ? {} : { tamper: summary.tamper };
  return { tamper: { turns: (summary.tamper?.turns ?? 0) + 1, last: tamper } };
}
