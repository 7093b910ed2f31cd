// The builtin agent's system prompt, in layers: the base (who it is, its tools, described from the same
// zod schemas that validate the calls, its rules and when to stop) and the project (instructions files, the
// detected stack, a bounded file tree). The third layer, the task, is the supervisor's turn prompt, sent as
// the first user message (task-layer.ts).

import type { Tool } from './tools/tool.js';

/** The base layer: identity, tools, rules, stopping. */
export function buildBaseLayer(tools: readonly Tool[]): string {
  return [
    'You are goald\'s builtin coding agent. You work in a git repository (the workspace) on one goal, using tools. Each reply either calls tools or, when you are done, answers with text alone, which ends your turn.',
    '',
    '# Tools',
    ...tools.map(describeTool),
    '',
    '# Rules',
    '- For a large or new task, first reply with a short outline of your approach (and read what you need) before any edit.',
    '- Read a file before you edit it. Follow the patterns and style the project already uses. Change the least that does the job.',
    '- Prefer edit_file for changes inside a file; old_string must be copied from the file as it is now.',
    "- Run the goal's checks (run_checks) before you finish, and fix what they report.",
    '- Never edit goal.config.json, never weaken, skip or delete tests to make checks pass, never touch .git. goald verifies the result with its own checks and sees such changes.',
    '- Paths are relative to the workspace root; nothing outside it can be read or written.',
    '- Tool errors are information: read them and adjust; do not repeat a call that failed the same way.',
    '',
    '# When to stop',
    'When the checks pass and the goal is met, answer with a short summary of what you changed, without calling a tool. If you are blocked (something outside the workspace is needed), say so in text and stop.',
  ].join('\n');
}

// One tool as a bullet with its parameters, read from the JSON Schema generated from its zod schema.
function describeTool(tool: Tool): string {
  const properties = tool.parameters.properties;
  const required = new Set(Array.isArray(tool.parameters.required) ? tool.parameters.required.map(String) : []);
  const parameters =
    typeof properties === 'object' && properties !== null
      ? Object.entries(properties).map(([name, schema]: [string, unknown]) => {
          const type = readString(schema, 'type') ?? 'value';
          const description = readString(schema, 'description');
          return `    - ${name} (${type}${required.has(name) ? '' : ', optional'})${description === null ? '' : ` — ${description}`}`;
        })
      : [];
  return [`- ${tool.name}: ${tool.description}`, ...parameters].join('\n');
}

function readString(value: unknown, key: string): string | null {
  if (typeof value !== 'object' || value === null || !(key in value)) return null;
  const field: unknown = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : null;
}

/** The whole system prompt: the base layer, then the project layer. */
export function buildSystemPrompt(base: string, project: string): string {
  return `${base}\n\n${project}`;
}
