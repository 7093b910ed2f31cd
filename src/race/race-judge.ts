// Picking the best of a race's achieved candidates (`--pick best`): one extra evaluator call that sees every
// candidate's diff (bounded: each gets an equal share), through the goal's own evaluator, so the same
// fencing of untrusted text, retries and redaction apply. The model names the best candidate's number in
// `next_step`; several numbers (equally good) or none usable fall back to the smaller diff.

import type { Evaluator } from '../evaluator/types.js';

/** An achieved member: its goal, its branch's patch and its size. */
export interface Candidate {
  goalId: string;
  patch: string;
  /** Lines added + deleted. */
  diffLines: number;
}

/** Characters of all candidates' patches together (the evidence builder bounds the message again). */
const PATCHES_BUDGET_CHARS = 48_000;

/** The winner and why. */
export interface Pick {
  goalId: string;
  reason: string;
}

function smallest(candidates: readonly Candidate[]): Candidate {
  return [...candidates].sort((a, b) => a.diffLines - b.diffLines)[0] as Candidate;
}

/** Picks one of at least one candidate; never rejects for model errors (the smaller diff wins then). */
export async function pickBest(candidates: readonly Candidate[], condition: string, evaluator: Evaluator, signal?: AbortSignal): Promise<Pick> {
  const fallback = smallest(candidates);
  if (candidates.length === 1) return { goalId: fallback.goalId, reason: 'the only member that achieved the goal' };
  if (evaluator.provider === 'none') {
    return { goalId: fallback.goalId, reason: `no evaluator to compare them: the smallest diff (${fallback.diffLines} lines)` };
  }
  const share = Math.floor(PATCHES_BUDGET_CHARS / candidates.length);
  const patch = candidates
    .map((candidate, i) => {
      const cut = candidate.patch.length > share ? `${candidate.patch.slice(0, share)}\n[… ${candidate.patch.length - share} more characters cut]` : candidate.patch;
      return `### candidate ${i + 1} (${candidate.diffLines} lines changed)\n${cut}`;
    })
    .join('\n\n');
  const result = await evaluator.evaluate(
    {
      condition:
        `Each of ${candidates.length} candidates below achieved this goal, and all its checks pass: "${condition}". ` +
        'Compare their patches and pick the best one (correct, simplest, fewest unrelated changes). Reply with ' +
        'achieved: true, next_step: the number of the best candidate (several numbers, comma-separated, only ' +
        'when they are equally good) and reason: why it is best.',
      turn: 1,
      maxTurns: 1,
      checks: [],
      files: [],
      patch,
      agentFinalMessage: '',
      agentOutputTail: '',
      previousVerdict: null,
    },
    signal,
  );
  if (result.kind !== 'verdict') {
    const why = result.kind === 'error' ? result.message : result.reason;
    return { goalId: fallback.goalId, reason: `the evaluator could not compare them (${why}): the smallest diff` };
  }
  const named = [...(result.verdict.nextStep ?? '').matchAll(/\d+/g)]
    .map((match) => Number(match[0]) - 1)
    .filter((index) => index >= 0 && index < candidates.length)
    .map((index) => candidates[index] as Candidate);
  if (named.length === 0) {
    return { goalId: fallback.goalId, reason: `the evaluator named no candidate (${result.verdict.reason}): the smallest diff` };
  }
  const winner = smallest(named);
  const tie = named.length > 1 ? ` (a tie of ${named.length}: the smaller diff)` : '';
  return { goalId: winner.goalId, reason: `${result.verdict.reason}${tie}` };
}
