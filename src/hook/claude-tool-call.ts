// Reading one Claude Code tool call (a PostToolUse payload, or a `tool_use` block of the stream-json
// output: both carry the tool's name and its input object) as the drift detector's ToolCall.

import type { ToolCall } from '../agents/types.js';

// On the hook's per-call path: see post-tool-use.ts on the cost of importing built-ins.
const { isAbsolute, relative } = process.getBuiltinModule('node:path');

// Claude Code's tools that write a file, and the input field naming it.
const FILE_WRITING_TOOLS: ReadonlyMap<string, string> = new Map([
  ['Write', 'file_path'],
  ['Edit', 'file_path'],
  ['MultiEdit', 'file_path'],
  ['NotebookEdit', 'notebook_path'],
]);
// Tools that run a shell command from `input.command`.
const COMMAND_TOOLS = new Set(['Bash']);

/**
 * The ToolCall for a Claude Code tool name and input. Paths inside `cwd` become relative to it, so a
 * warning names `src/a.ts` rather than a long absolute path; the same file counts the same either way.
 */
export function readClaudeToolCall(name: string, input: unknown, cwd?: string): ToolCall {
  const call: ToolCall = { name };
  if (typeof input !== 'object' || input === null) return call;
  const fields = input as Record<string, unknown>;

  const pathField = FILE_WRITING_TOOLS.get(name);
  const filePath = pathField === undefined ? undefined : fields[pathField];
  if (typeof filePath === 'string' && filePath !== '') call.filePath = relativeToCwd(filePath, cwd);

  const command = fields.command;
  if (COMMAND_TOOLS.has(name) && typeof command === 'string' && command.trim() !== '') call.command = command;
  return call;
}

function relativeToCwd(filePath: string, cwd: string | undefined): string {
  if (cwd === undefined || cwd === '' || !isAbsolute(filePath)) return filePath;
  const inside = relative(cwd, filePath);
  return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? filePath : inside;
}
