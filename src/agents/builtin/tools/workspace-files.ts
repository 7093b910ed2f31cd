// The files of the workspace as git sees them: tracked and untracked, `.gitignore` honoured, deleted files
// left out, filtered by a glob pathspec. git is the reference implementation of .gitignore and is always
// there (a goal's workspace is a git work tree), so no glob or ignore library is needed.

import { runGit } from '../../../workspace/git.js';

/** Workspace-relative paths matching `glob` (git's `:(glob)` magic: `*` within a segment, `**` across). */
export async function listWorkspaceFiles(workspace: string, glob: string, signal: AbortSignal): Promise<string[]> {
  const pathspec = `:(glob)${glob === '' ? '**' : glob}`;
  const common = ['-z', '--', pathspec];
  const [present, deleted] = await Promise.all([
    runGit(['ls-files', '--cached', '--others', '--exclude-standard', ...common], { cwd: workspace, signal }),
    runGit(['ls-files', '--deleted', ...common], { cwd: workspace, signal }),
  ]);
  const gone = new Set(splitNul(deleted.stdout));
  return [...new Set(splitNul(present.stdout))].filter((file) => !gone.has(file)).sort();
}

function splitNul(text: string): string[] {
  return text.split('\0').filter((entry) => entry !== '');
}
