// What of the user's git directory a sandboxed turn of a worktree goal may write (issue 12). An in-place
// goal's turn may write the whole git directory (a commit writes refs, the index, the config's neighbours);
// a worktree goal's turn gets only its own worktree's git directory, the object store and the `goald/*`
// refs, so an agent can commit on its branch but cannot move the user's HEAD, branches or stash.

import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedWorkspace } from '../workspace/find-workspace.js';

/** The writable git paths of a goal working in a worktree under `<goaldHome>/worktrees/`; null for any other workspace. */
export function worktreeGoalGitDirs(workspace: Pick<ResolvedWorkspace, 'root' | 'gitDir' | 'commonDir'>, goaldHome: string): string[] | null {
  const relative = path.relative(path.join(goaldHome, 'worktrees'), workspace.root);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative) || workspace.gitDir === workspace.commonDir) return null;
  const shared = [path.join(workspace.commonDir, 'objects'), path.join(workspace.commonDir, 'refs', 'heads', 'goald'), path.join(workspace.commonDir, 'logs', 'refs', 'heads', 'goald')];
  return [workspace.gitDir, ...shared.filter((dir) => existsSync(dir))];
}
