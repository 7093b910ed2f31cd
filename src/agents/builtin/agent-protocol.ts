// The line protocol from the builtin agent's process to its adapter: every report is one stdout line
// `GOALD_AGENT {json}`; everything else the agent prints is transcript for humans. The adapter parses the
// lines live (usage for the per-turn token limit, tool calls for drift) like Claude Code's stream-json.

import { z } from '../../zod.js';

const PREFIX = 'GOALD_AGENT ';

const usageEvent = z.object({
  type: z.literal('usage'),
  /** The model as the server named it. */
  model: z.string(),
  /** Input tokens not served from a cache (cache writes included). */
  input: z.number().int().nonnegative(),
  /** Input tokens served from the provider's prompt cache. */
  cached: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  /** The server reported no usage for this call: counted from characters. */
  estimated: z.boolean().optional(),
});

const toolEvent = z.object({
  type: z.literal('tool'),
  name: z.string(),
  filePath: z.string().optional(),
  command: z.string().optional(),
  ok: z.boolean(),
});

/** Why the agent's turn ended. */
const END_REASONS = [
  'done', // the model answered with text alone and the checks passed (or there are none)
  'max-iterations', // agent.maxIterations model calls
  'checks-failing', // verification retries used up with checks still failing
  'malformed-replies', // three malformed replies in a row (an agent failure)
  'model-error', // the model API failed after retries
  'usage-limit', // the provider refused for quota or a usage limit
  'drift', // persistent high drift: stop before more is spent
] as const;

const endEvent = z.object({
  type: z.literal('end'),
  reason: z.enum(END_REASONS),
  message: z.string(),
  iterations: z.number().int().nonnegative(),
  /** Names of the checks still failing at the end, when verification ran. */
  failingChecks: z.array(z.string()),
  /** With `usage-limit`: when the limit resets (ms since epoch), if the server said. */
  resetAt: z.number().nullable().optional(),
});

const agentEvent = z.discriminatedUnion('type', [usageEvent, toolEvent, endEvent]);

export type AgentEvent = z.infer<typeof agentEvent>;

export type AgentEndEvent = z.infer<typeof endEvent>;
export type EndReason = AgentEndEvent['reason'];

/** One event as its stdout line (newline included). */
export function formatAgentEvent(event: AgentEvent): string {
  return `${PREFIX}${JSON.stringify(event)}\n`;
}

/** The event on a line, or null when the line is not one (or does not fit the schema). */
export function parseAgentEvent(line: string): AgentEvent | null {
  if (!line.startsWith(PREFIX)) return null;
  try {
    const parsed = agentEvent.safeParse(JSON.parse(line.slice(PREFIX.length)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
