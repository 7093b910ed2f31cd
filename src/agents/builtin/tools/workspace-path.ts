// Confines every path a tool is given to the workspace: `..` that climbs out, an absolute path elsewhere
// and a symlink (anywhere along the path) that leads outside are refused, as is `.git/` (the history and
// the objects goald's snapshots rely on). For a file that does not exist yet, its nearest existing ancestor
// is what must resolve inside.

import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isErrnoCode } from '../../../errno.js';

export type ConfinedPath = { ok: true; absolute: string; relative: string } | { ok: false; error: string };

/** Resolves `input` (relative to the workspace, or absolute inside it) and checks that it stays inside. */
export async function confinePath(workspace: string, input: string): Promise<ConfinedPath> {
  if (input.includes('\0')) return { ok: false, error: 'the path contains a NUL byte' };
  const absolute = path.resolve(workspace, input === '' ? '.' : input);
  const relative = path.relative(workspace, absolute);
  if (isOutside(relative)) {
    return { ok: false, error: `${JSON.stringify(input)} is outside the workspace; use a path relative to the workspace root` };
  }
  if (relative === '.git' || relative.startsWith(`.git${path.sep}`)) {
    return { ok: false, error: `${JSON.stringify(input)} is inside .git, which the agent may not read or change` };
  }
  const real = await realpathOfNearest(absolute);
  if (real === null || isOutside(path.relative(workspace, real))) {
    return { ok: false, error: `${JSON.stringify(input)} leads outside the workspace through a symbolic link; it is refused` };
  }
  return { ok: true, absolute, relative: relative === '' ? '.' : relative.split(path.sep).join('/') };
}

/** The workspace's own real path, which confinePath expects. */
export function realWorkspace(workspace: string): Promise<string> {
  return realpath(workspace);
}

function isOutside(relative: string): boolean {
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

// The real path of `target`, or of its nearest existing ancestor joined with the rest; null when a dangling
// symbolic link is on the way (writing through it would create its target, wherever that is).
async function realpathOfNearest(target: string): Promise<string | null> {
  let current = target;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest);
    } catch (error) {
      // ENOENT: not there (yet); ENOTDIR: a file where a directory was expected; a dangling symlink too.
      if (!isErrnoCode(error, 'ENOENT') && !isErrnoCode(error, 'ENOTDIR')) throw error;
      if (await isSymlink(current)) return null;
      const parent = path.dirname(current);
      if (parent === current) return target;
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}

async function isSymlink(target: string): Promise<boolean> {
  try {
    return (await lstat(target)).isSymbolicLink();
  } catch {
    return false;
  }
}
