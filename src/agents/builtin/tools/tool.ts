// The shape every builtin tool has: a name, a description, a zod schema that validates the model's
// arguments and from which the JSON Schema the model sees is generated, and a run function that returns a
// result for the model. A tool never throws for anything the model did: bad arguments, a path outside the
// workspace or a failing command are results the model reads and acts on.

import { z } from '../../../zod.js';
import { cutMiddle } from '../../../cut-text.js';
import type { CheckSpec } from '../../../config/types.js';
import type { ToolCall } from '../../types.js';
import type { CommandGroups } from './command-groups.js';

/** What a tool may use: the workspace (its real path), the goal's checks, the command policy, the turn's signal. */
export interface ToolContext {
  /** The workspace's real path (symlinks resolved): every path is confined to it. */
  workspace: string;
  checks: readonly CheckSpec[];
  commands: { allow: readonly string[]; deny: readonly string[] };
  /** Vendor credential variables the checks and commands keep (agent.passEnv). */
  passEnv: readonly string[];
  signal: AbortSignal;
  /** Where run_command and run_checks register their process groups (killed when the turn is ended). */
  groups?: CommandGroups;
}

/** A tool's answer: the text the model reads, whether it succeeded, and the call as drift detection sees it. */
export interface ToolResult {
  ok: boolean;
  content: string;
  /** Set when the arguments did not fit the schema (or were not JSON): counts toward malformed replies. */
  malformed?: boolean;
  report: ToolCall;
}

/** A tool with its arguments' type erased, as the loop holds them. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  /** The JSON Schema of the arguments, generated from the zod schema. */
  readonly parameters: Record<string, unknown>;
  /** Parses the raw JSON arguments and runs the tool; never rejects. */
  invoke(argumentsJson: string, context: ToolContext): Promise<ToolResult>;
}

/** Every result is cut to this many characters (both ends kept): one tool call must not flood the context. */
const MAX_TOOL_RESULT_CHARS = 24_000;

/** Defines a tool from its zod schema and its typed run function. */
export function defineTool<Schema extends z.ZodObject>(spec: {
  name: string;
  description: string;
  schema: Schema;
  run(args: z.infer<Schema>, context: ToolContext): Promise<ToolResult>;
}): Tool {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(spec.schema, { io: 'input' });
  return {
    name: spec.name,
    description: spec.description,
    parameters,
    async invoke(argumentsJson, context) {
      let raw: unknown;
      try {
        raw = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
      } catch {
        return malformed(spec.name, `the arguments are not valid JSON: ${cutMiddle(argumentsJson, 200)}`);
      }
      const parsed = spec.schema.safeParse(raw);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`);
        return malformed(spec.name, `invalid arguments: ${problems.join('; ')}`);
      }
      try {
        const result = await spec.run(parsed.data, context);
        return { ...result, content: cutMiddle(result.content, MAX_TOOL_RESULT_CHARS) };
      } catch (error) {
        // A bug or an unexpected I/O failure: still a result, so the turn goes on.
        const message = error instanceof Error ? error.message : String(error);
        return { ok: false, content: `${spec.name} failed: ${message}`, report: { name: spec.name } };
      }
    },
  };
}

/** A failed result (the model reads `content`). */
export function toolError(name: string, content: string, report: Partial<ToolCall> = {}): ToolResult {
  return { ok: false, content: `Error: ${content}`, report: { name, ...report } };
}

function malformed(name: string, content: string): ToolResult {
  return { ok: false, malformed: true, content: `Error: ${content}`, report: { name } };
}
