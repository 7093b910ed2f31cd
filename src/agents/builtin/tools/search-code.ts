// search_code: a regular expression over the workspace's text files (.gitignore honoured), bounded.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from '../../../zod.js';
import { clip } from '../../../cut-text.js';
import { defineTool, toolError } from './tool.js';
import { listWorkspaceFiles } from './workspace-files.js';

const MAX_MATCHES = 100;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;

/** The search_code tool. */
export const searchCodeTool = defineTool({
  name: 'search_code',
  description: `Search the workspace's text files for a JavaScript regular expression; returns file:line: text, at most ${MAX_MATCHES} matches.`,
  schema: z.object({
    pattern: z.string().min(1).describe('A JavaScript regular expression, e.g. "function\\\\s+parse".'),
    glob: z.string().optional().describe('Only files matching this glob, e.g. "src/**/*.ts" (default: all).'),
    ignoreCase: z.boolean().optional().describe('Match case-insensitively.'),
  }),
  async run(args, context) {
    let regex: RegExp;
    try {
      regex = new RegExp(args.pattern, args.ignoreCase === true ? 'i' : '');
    } catch (error) {
      return toolError('search_code', `invalid regular expression: ${error instanceof Error ? error.message : String(error)}`);
    }
    const files = await listWorkspaceFiles(context.workspace, args.glob ?? '**', context.signal);
    const matches: string[] = [];
    let truncated = false;
    for (const file of files) {
      if (matches.length >= MAX_MATCHES) {
        truncated = true;
        break;
      }
      let buffer: Buffer;
      try {
        buffer = await readFile(path.join(context.workspace, file));
      } catch {
        continue; // removed meanwhile, or a directory entry of a submodule
      }
      if (buffer.length > MAX_FILE_BYTES || buffer.subarray(0, 8192).includes(0)) continue;
      const lines = buffer.toString('utf8').split('\n');
      for (const [index, line] of lines.entries()) {
        if (!regex.test(line)) continue;
        matches.push(`${file}:${index + 1}: ${clip(line, MAX_LINE_CHARS)}`);
        if (matches.length >= MAX_MATCHES) break;
      }
    }
    if (matches.length === 0) return { ok: true, content: `no matches for /${args.pattern}/`, report: { name: 'search_code' } };
    const note = truncated || matches.length >= MAX_MATCHES ? `\n(stopped at ${MAX_MATCHES} matches; narrow the pattern or glob)` : '';
    return { ok: true, content: `${matches.join('\n')}${note}`, report: { name: 'search_code' } };
  },
});
