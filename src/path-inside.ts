// Whether a path lies inside a directory, by its path alone (resolve symlinks first where they matter).

import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** `file` relative to `dir` when it lies inside it ('' for `dir` itself); null when it lies outside. */
export function relativeInside(dir: string, file: string): string | null {
  const relative = path.relative(dir, file);
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative) ? null : relative;
}

/** Whether `file` is `dir` or lies inside it. */
export function isInside(file: string, dir: string): boolean {
  return relativeInside(dir, file) !== null;
}

/**
 * `isInside` for two paths already absolute and normalized (realpath(3) or path.resolve): a prefix test,
 * without path.relative's resolving of both (findTool compares every PATH entry with a dozen directories).
 */
export function isInsideResolved(file: string, dir: string): boolean {
  return file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`);
}

/** `file` with its symlinks resolved (realpath(3)); resolved by its path alone when it does not exist. */
export function realOrResolved(file: string): string {
  // existsSync first: a failed realpathSync builds an error (~6 µs), and many paths asked about are absent.
  if (!existsSync(file)) return path.resolve(file);
  try {
    return realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}
