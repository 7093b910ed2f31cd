// Where a command's executable is, the way the shell's exec would find it: one lookup for the agent's
// command before the first turn (agents/which.ts) and for every command spawn.ts hands to bwrap or
// setpriv. goald's own programs are looked up more strictly (goald-tools.ts). Synchronous on purpose: a PATH of ten entries is twenty
// local metadata calls (~0.05 ms), where the same calls sent through libuv's thread pool kept a start
// waiting ~0.7 ms for the round trips.

import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export interface PathLookup {
  /** The PATH variable to search (entries split on path.delimiter, searched in order). */
  pathVariable: string;
  /** What relative entries resolve from (an empty entry is this directory, as in the shell). */
  cwd: string;
}

/** The first executable file named `name` on the PATH, in PATH's order; null when there is none. */
export function findOnPath(name: string, lookup: PathLookup): string | null {
  for (const directory of lookup.pathVariable.split(path.delimiter)) {
    const candidate = path.resolve(lookup.cwd, directory, name);
    if (executableProblem(candidate) === null) return candidate;
  }
  return null;
}

/** Null when `file` is an executable file; otherwise what is wrong with it, worded to follow its name. */
export function executableProblem(file: string): string | null {
  try {
    if (!statSync(file).isFile()) return 'is not a file';
  } catch {
    // ENOENT, ENOTDIR (a PATH entry that is a file), EACCES on a directory on the way: nothing to run
    return 'does not exist';
  }
  try {
    accessSync(file, constants.X_OK);
    return null;
  } catch {
    return 'is not executable (chmod +x?)';
  }
}
