// The builtin agent's tools, in the order the model sees them.

import { editFileTool } from './edit-file.js';
import { listFilesTool } from './list-files.js';
import { readFileTool } from './read-file.js';
import { runChecksTool } from './run-checks.js';
import { runCommandTool } from './run-command.js';
import { searchCodeTool } from './search-code.js';
import type { Tool } from './tool.js';
import { writeFileTool } from './write-file.js';

/** Every tool of the builtin agent. */
export const BUILTIN_TOOLS: readonly Tool[] = [
  readFileTool,
  listFilesTool,
  searchCodeTool,
  editFileTool,
  writeFileTool,
  runCommandTool,
  runChecksTool,
];
