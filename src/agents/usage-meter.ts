// Token usage of a command agent's turn: estimated from characters (chars / 4) unless the agent reports
// its own with `GOALD_USAGE {"input_tokens":…,"output_tokens":…,"cost_usd":…}` lines.

import { z } from '../zod-mini.js';
import type { Usage } from './types.js';

// The usual rule of thumb for English text and code with BPE tokenizers (OpenAI's "~4 chars per token").
const CHARS_PER_TOKEN = 4;
const USAGE_LINE_PREFIX = 'GOALD_USAGE';

const usageLineSchema = z.object({
  input_tokens: z.int().check(z.nonnegative()),
  output_tokens: z.int().check(z.nonnegative()),
  cost_usd: z.optional(z.nullable(z.number().check(z.nonnegative()))),
});

export type ReportedUsage = z.infer<typeof usageLineSchema>;

/** Whether a line is meant as a usage report (valid or not); such lines are never the final message. */
export function isUsageLine(line: string): boolean {
  return line.startsWith(`${USAGE_LINE_PREFIX} `) || line.trim() === USAGE_LINE_PREFIX;
}

/** Parses a `GOALD_USAGE {json}` line; null when it is not one or its JSON does not fit the schema. */
export function parseUsageLine(line: string): ReportedUsage | null {
  if (!isUsageLine(line)) return null;
  try {
    const parsed = usageLineSchema.safeParse(JSON.parse(line.slice(USAGE_LINE_PREFIX.length)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export interface UsageMeter {
  addOutput(text: string): void;
  addReport(report: ReportedUsage): void;
  /** The count the per-turn token limit is checked against, while the turn runs. */
  liveTokens(): number;
  /** The turn's usage: the sum of the reports when there are any, else the estimate. */
  usage(): Usage;
}

/**
 * Creates a meter for one turn. Reports are summed: an agent reports once per model call, and a turn
 * makes many. The live count is the larger of the estimate and the reports rather than their sum, because
 * the printed output and the reported output tokens are largely the same tokens counted twice.
 */
export function createUsageMeter(prompt: string): UsageMeter {
  const inputEstimate = estimateTokens(prompt.length);
  let outputChars = 0;
  let reports = 0;
  let reportedInput = 0;
  let reportedOutput = 0;
  let reportedCost: number | null = null;

  return {
    addOutput(text) {
      outputChars += text.length;
    },
    addReport(report) {
      reports += 1;
      reportedInput += report.input_tokens;
      reportedOutput += report.output_tokens;
      if (report.cost_usd !== undefined && report.cost_usd !== null) {
        reportedCost = (reportedCost ?? 0) + report.cost_usd;
      }
    },
    liveTokens() {
      return Math.max(inputEstimate + estimateTokens(outputChars), reportedInput + reportedOutput);
    },
    usage() {
      if (reports > 0) {
        return {
          inputTokens: reportedInput,
          outputTokens: reportedOutput,
          totalTokens: reportedInput + reportedOutput,
          costUsd: reportedCost,
          estimated: false,
        };
      }
      const outputTokens = estimateTokens(outputChars);
      return {
        inputTokens: inputEstimate,
        outputTokens,
        totalTokens: inputEstimate + outputTokens,
        costUsd: null,
        estimated: true,
      };
    },
  };
}

/** Tokens for `chars` characters of text, by the chars / 4 rule. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
