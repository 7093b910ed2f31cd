// read_file: a text file of the workspace, whole or a range of lines, bounded.

import { readFile, stat } from 'node:fs/promises';
import { z } from '../../../zod.js';
import { defineTool, toolError } from './tool.js';
import { confinePath } from './workspace-path.js';

const MAX_FILE_BYTES = 2 * 1024 * 1024;
// Lines returned per call when no range is given; a range asks for more of a long file.
const DEFAULT_MAX_LINES = 800;

/** The read_file tool. */
export const readFileTool = defineTool({
  name: 'read_file',
  description: `Read a text file of the workspace. Returns up to ${DEFAULT_MAX_LINES} lines; pass startLine/endLine (1-based, inclusive) for other parts of a long file. Read a file before you edit it.`,
  schema: z.object({
    path: z.string().describe('Path relative to the workspace root.'),
    startLine: z.number().int().min(1).optional().describe('First line to return (1-based).'),
    endLine: z.number().int().min(1).optional().describe('Last line to return (inclusive).'),
  }),
  async run(args, context) {
    const target = await confinePath(context.workspace, args.path);
    if (!target.ok) return toolError('read_file', target.error);
    let info;
    try {
      info = await stat(target.absolute);
    } catch {
      return toolError('read_file', `${target.relative} does not exist; list_files shows what does`);
    }
    if (info.isDirectory()) return toolError('read_file', `${target.relative} is a directory; use list_files`);
    if (info.size > MAX_FILE_BYTES) {
      return toolError('read_file', `${target.relative} is ${info.size} bytes, over the ${MAX_FILE_BYTES}-byte limit; use search_code`);
    }
    const buffer = await readFile(target.absolute);
    if (buffer.subarray(0, 8192).includes(0)) return toolError('read_file', `${target.relative} is a binary file`);
    const lines = buffer.toString('utf8').split('\n');
    const total = lines.length;
    const start = Math.min(args.startLine ?? 1, total);
    const end = Math.min(args.endLine ?? start + DEFAULT_MAX_LINES - 1, total);
    if (end < start) return toolError('read_file', `endLine ${end} is before startLine ${start}`);
    const header = start === 1 && end === total ? `${target.relative} (${total} lines)` : `${target.relative} (lines ${start}-${end} of ${total})`;
    // Drift counts `filePath` as a file written: a read reports none.
    return { ok: true, content: `${header}\n${lines.slice(start - 1, end).join('\n')}`, report: { name: 'read_file' } };
  },
});
