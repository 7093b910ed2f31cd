// edit_file: replaces one occurrence of a text in a file (exact, else whitespace-tolerant; see find-edit.ts).

import { readFile, writeFile } from 'node:fs/promises';
import { z } from '../../../zod.js';
import { locateEdit } from './find-edit.js';
import { writeRefusal } from './protected-paths.js';
import { defineTool, toolError } from './tool.js';
import { confinePath } from './workspace-path.js';

/** The edit_file tool. */
export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace one occurrence of old_string with new_string in a file. old_string must match the file (whitespace differences are tolerated) and be unique: include a few surrounding lines. When it is missing or not unique, nothing changes and the nearest candidates are shown.',
  schema: z.object({
    path: z.string().describe('Path relative to the workspace root.'),
    old_string: z.string().describe('The text to replace, as it stands in the file.'),
    new_string: z.string().describe('The text to put in its place.'),
  }),
  async run(args, context) {
    const target = await confinePath(context.workspace, args.path);
    if (!target.ok) return toolError('edit_file', target.error);
    const refusal = writeRefusal(target.relative);
    if (refusal !== null) return toolError('edit_file', refusal);
    const report = { filePath: target.relative };
    let content: string;
    try {
      content = await readFile(target.absolute, 'utf8');
    } catch {
      return toolError('edit_file', `${target.relative} does not exist; create it with write_file`, report);
    }
    const location = locateEdit(content, args.old_string, args.new_string);
    if (!location.ok) return toolError('edit_file', `${target.relative}: ${location.problem}`, report);
    await writeFile(target.absolute, content.slice(0, location.start) + location.replacement + content.slice(location.end));
    const how = location.kind === 'exact' ? '' : ' (matched with whitespace ignored)';
    return { ok: true, content: `edited ${target.relative}${how}`, report: { name: 'edit_file', ...report } };
  },
});
