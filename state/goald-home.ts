// GOALD_HOME, resolved on its own (no other goald module): the executable's first act, turning on the
// compile cache (src/cli/compile-cache.ts), needs it before any chunk of the bundle is loaded.

import { isAbsolute, join, resolve } from 'node:path';

/** Returns an env value, treating the empty string as unset (as shells and XDG do). */
export function readEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Resolves GOALD_HOME: `GOALD_HOME`, else `$XDG_STATE_HOME/goald`, else `~/.local/state/goald`. */
export function resolveGoaldHome(env: NodeJS.ProcessEnv): string {
  const explicit = readEnv(env, 'GOALD_HOME');
  if (explicit !== undefined) return resolve(explicit);
  // The XDG spec says a relative XDG_* path is invalid and must be ignored.
  const xdg = readEnv(env, 'XDG_STATE_HOME');
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'goald');
  // node:os only when HOME is unset: every command resolves this, and most have HOME.
  return join(readEnv(env, 'HOME') ?? process.getBuiltinModule('node:os').homedir(), '.local', 'state', 'goald');
}


/**
 * True when `dir` is a real directory (not a link) of this user that group and others cannot write: where
 * goald may keep what it later trusts (its caches), even before GOALD_HOME itself has been checked.
 */
export function isPrivateDirectory(dir: string): boolean {
  let stats: import('node:fs').Stats;
  try {
    stats = process.getBuiltinModule('node:fs').lstatSync(dir);
  } catch {
    return false;
  }
  const uid = process.getuid?.();
  return stats.isDirectory() && (uid === undefined || stats.uid === uid) && (stats.mode & 0o022) === 0;
}
