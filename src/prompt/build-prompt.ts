// One turn's prompt: the condition verbatim, the ancestry, the evaluator's last advice, the failing
// checks' output, and the recitation last (DESIGN.md § One turn, step 2).

import type { Ancestry } from '../config/types.js';
import type { CheckResult } from '../workspace/types.js';
import type { Verdict } from '../evaluator/types.js';
import { renderAncestry } from './ancestry.js';
import { renderRecitation, type RecitationInput } from './recitation.js';
import { renderRollbackBlock, type RollbackNote } from './rollback-block.js';
import { renderTamperBlock } from './tamper-block.js';
import { renderGuidanceBlock } from './guidance-block.js';
import type { GuardReport } from '../guard/types.js';
import { cutTail } from '../cut-text.js';

const FAILING_CHECK_TAIL_CHARS = 3_000; // per check: enough for a test runner's summary and first error

export interface PromptInput {
  condition: string;
  turn: number;
  maxTurns: number;
  ancestry: Ancestry;
  lastVerdict: Verdict | null;
  checks: CheckResult[] | null;
  filesChanged: RecitationInput['filesChanged'];
  filesOmitted?: number;
  warnings: string[];
  /** The tamper guard's report on the last turn: each finding is named with a request to revert it. */
  guard?: GuardReport;
  /** The recitation's distance line (prompt/distance-line.ts), when measured. */
  distance?: string | null;
  /** What the owner said (`goald say`) since the last turn started: its own block, before the recitation. */
  guidance?: string[];
  /** A rollback of the files since the last turn (`--keep-best`, `goald rollback`): its own section. */
  rollback?: RollbackNote | null;
}

/** Builds the full prompt for one turn. */
export function buildTurnPrompt(input: PromptInput): string {
  const sections: string[] = [];
  sections.push(
    [
      '# Goal',
      input.condition,
      '',
      'You are working in this repository toward the goal above. Make the changes yourself; do not ask',
      'questions. When this turn ends, goald runs the checks and an independent reviewer judges the result.',
    ].join('\n'),
  );
  const ancestry = renderAncestry(input.ancestry);
  if (ancestry) sections.push(ancestry);

  if (input.lastVerdict) {
    const advice = [`# Reviewer's last assessment`, input.lastVerdict.reason];
    if (input.lastVerdict.nextStep) advice.push(`Suggested next step: ${input.lastVerdict.nextStep}`);
    sections.push(advice.join('\n'));
  }

  const failing = (input.checks ?? []).filter((check) => !check.passed);
  if (failing.length > 0) {
    const blocks = failing.map((check) => {
      const status = check.timedOut ? 'timed out' : `exit ${check.exitCode ?? 'signal'}`;
      return `## ${check.name} (\`${check.command}\`, ${status})\n\`\`\`\n${cutTail(check.outputTail, FAILING_CHECK_TAIL_CHARS)}\n\`\`\``;
    });
    sections.push(`# Failing checks\n${blocks.join('\n\n')}`);
  }

  if (input.rollback) sections.push(renderRollbackBlock(input.rollback));

  const tamper = input.guard ? renderTamperBlock(input.guard) : null;
  if (tamper) sections.push(tamper);

  const guidance = renderGuidanceBlock(input.guidance ?? []);
  if (guidance) sections.push(guidance);

  const lastChecks = input.checks?.map((check) => ({ name: check.name, passed: check.passed })) ?? null;
  sections.push(
    renderRecitation({
      condition: input.condition,
      turn: input.turn,
      maxTurns: input.maxTurns,
      checks: lastChecks,
      lastVerdictReason: input.lastVerdict?.reason ?? null,
      remaining: input.lastVerdict?.remaining ?? [],
      filesChanged: input.filesChanged,
      filesOmitted: input.filesOmitted ?? 0,
      warnings: input.warnings,
      distance: input.distance ?? null,
    }),
  );
  return sections.join('\n\n') + '\n';
}
