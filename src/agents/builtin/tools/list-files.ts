// list_files: the workspace's files matching a glob, .gitignore honoured, bounded.

import { z } from '../../../zod.js';
import { defineTool } from './tool.js';
import { listWorkspaceFiles } from './workspace-files.js';

const MAX_ENTRIES = 500;

/** The list_files tool. */
export const listFilesTool = defineTool({
  name: 'list_files',
  description: `List the workspace's files (tracked and untracked, .gitignore honoured) matching a glob; at most ${MAX_ENTRIES}.`,
  schema: z.object({
    pattern: z.string().optional().describe('Glob relative to the workspace root, e.g. "src/**/*.ts" (default "**": everything).'),
  }),
  async run(args, context) {
    const pattern = args.pattern ?? '**';
    const files = await listWorkspaceFiles(context.workspace, pattern.replace(/^\.\//, ''), context.signal);
    const shown = files.slice(0, MAX_ENTRIES);
    const more = files.length > shown.length ? `\n… and ${files.length - shown.length} more; narrow the pattern` : '';
    const content = files.length === 0 ? `no files match ${JSON.stringify(pattern)}` : `${shown.join('\n')}${more}`;
    return { ok: true, content, report: { name: 'list_files' } };
  },
});
