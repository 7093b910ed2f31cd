// What the adapter hands the builtin agent's process for one turn, as a JSON file beside the prompt: the
// model, the goal's checks and the agent's limits. The process reads it back through this schema (a file
// on disk is validated like any other input).

import { readFile } from 'node:fs/promises';
import { z } from '../../zod.js';

const agentOptionsSchema = z.object({
  /** `openai:<model>` or `anthropic:<model>`. */
  model: z.string(),
  condition: z.string(),
  checks: z.array(z.object({ name: z.string(), run: z.string(), timeoutMs: z.number().nonnegative() })),
  maxIterations: z.number().int().positive(),
  verificationRetries: z.number().int().nonnegative(),
  maxContextTokens: z.number().int().positive(),
  commands: z.object({ allow: z.array(z.string()), deny: z.array(z.string()) }),
  /** In-turn reflection every N tool calls. */
  reciteEvery: z.number().int().positive(),
  /** Variables the checks and commands keep although they are vendor credentials (agent.passEnv). */
  passEnv: z.array(z.string()),
  /** The turn's state directory (drift-pause is written there), when the supervisor gave one. */
  stateDir: z.string().nullable(),
});

export type AgentOptions = z.infer<typeof agentOptionsSchema>;

/** Reads and validates the options file; throws with the field that is off. */
export async function readAgentOptions(path: string): Promise<AgentOptions> {
  const parsed = agentOptionsSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(`the options file ${path} is invalid: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'unknown problem'}`);
}
