// write_file: creates or replaces a file of the workspace (parent directories created).

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from '../../../zod.js';
import { writeRefusal } from './protected-paths.js';
import { defineTool, toolError } from './tool.js';
import { confinePath } from './workspace-path.js';

/** The write_file tool. */
export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create a file, or replace a whole file, in the workspace. For a change inside an existing file prefer edit_file.',
  schema: z.object({
    path: z.string().describe('Path relative to the workspace root.'),
    content: z.string().describe('The complete new content of the file.'),
  }),
  async run(args, context) {
    const target = await confinePath(context.workspace, args.path);
    if (!target.ok) return toolError('write_file', target.error);
    const refusal = writeRefusal(target.relative);
    if (refusal !== null) return toolError('write_file', refusal);
    await mkdir(path.dirname(target.absolute), { recursive: true });
    await writeFile(target.absolute, args.content);
    const lines = args.content === '' ? 0 : args.content.split('\n').length;
    return { ok: true, content: `wrote ${target.relative} (${lines} lines)`, report: { name: 'write_file', filePath: target.relative } };
  },
});
