// The regression guard's judgement (`--keep-best`): how well a turn's checks did, which turn is the best so
// far, and whether a turn fell below it. Pure.
//
// A turn's score is its passing checks, then its passing tests (test-counts.ts, counted only where they
// agree with the check's exit status). A turn falls below the best when either is lower. A turn replaces the
// best when it is not lower and either all its checks pass, it passes more checks, or it ties: the test
// counts of a failing check can show a regression but never make a turn the best, since a failing check's
// output is the agent's to shape (a made-up "999 passed" must not become the state goald restores).

import { trustedCounts } from '../breakers/no-progress.js';
import type { CheckResult } from '../workspace/types.js';

/** How well one turn's checks did. */
export interface TestScore {
  passingChecks: number;
  passingTests: number;
  /** Every check passed (and there was at least one). */
  allPassed: boolean;
}

/** The best turn so far: its number, its snapshot tree and its score. */
export interface BestTurn {
  turn: number;
  tree: string;
  score: TestScore;
}

/** The score of a set of check results. */
export function scoreOf(checks: readonly CheckResult[]): TestScore {
  const passingChecks = checks.filter((check) => check.passed).length;
  const passingTests = checks.reduce((total, check) => total + (trustedCounts(check)?.passed ?? 0), 0);
  return { passingChecks, passingTests, allPassed: checks.length > 0 && passingChecks === checks.length };
}

/** Whether `score` is below the best turn's: fewer passing checks, or as many and fewer passing tests. */
export function fellBelow(score: TestScore, best: BestTurn): boolean {
  if (score.passingChecks !== best.score.passingChecks) return score.passingChecks < best.score.passingChecks;
  return score.passingTests < best.score.passingTests;
}

/** The best turn after `candidate` (a turn that did not fall below the best): it, or the best as it was. */
export function nextBest(best: BestTurn | null, candidate: BestTurn): BestTurn {
  if (best === null) return candidate;
  if (fellBelow(candidate.score, best)) return best;
  const { score } = candidate;
  const better = score.allPassed || score.passingChecks > best.score.passingChecks || score.passingTests === best.score.passingTests;
  return better ? candidate : best;
}

/** "3 passing tests (2 of 3 checks)", for messages and the prompt. */
export function describeScore(score: TestScore, checks: number): string {
  return `${score.passingTests} passing test${score.passingTests === 1 ? '' : 's'} (${score.passingChecks} of ${checks} check${checks === 1 ? '' : 's'} passing)`;
}
