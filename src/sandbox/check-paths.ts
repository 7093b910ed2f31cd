// The user's sandbox paths, checked before a goal starts: a turn may write only inside the home or the
// workspace, and never into (or around) goald's own files; nothing may make those readable.

import path from 'node:path';
import type { SandboxSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { expandHome, realPathOf } from './profile.js';
import { isInside } from '../path-inside.js';

const USER_CONFIG_HINT = '~/.config/goald/config.json';

export interface GuardedPaths {
  home: string;
  workspace: string;
  /** GOALD_HOME and the user config's directory, named in messages as given. */
  goald: ReadonlyArray<{ path: string; name: string }>;
}

/** Throws a `config` GoaldError (exit 2) naming the first sandbox path that would widen what a turn reaches. */
export function checkSandboxPaths(settings: SandboxSettings, guarded: GuardedPaths): void {
  const home = canonical(guarded.home);
  const workspace = canonical(guarded.workspace);
  const goald = guarded.goald.map((entry) => ({ ...entry, path: canonical(entry.path) }));
  for (const given of settings.writable) {
    const file = canonical(expandHome(given, guarded.home));
    if (!isInside(file, home) && !isInside(file, workspace)) {
      throw new GoaldError(
        'config',
        `sandbox.writable: ${given} is outside your home (${guarded.home}) and the workspace`,
        `remove it from ${USER_CONFIG_HINT}, or use a path inside your home or the workspace`,
      );
    }
    const overlap = goald.find((entry) => isInside(file, entry.path) || isInside(entry.path, file));
    if (overlap !== undefined) {
      throw new GoaldError(
        'config',
        `sandbox.writable: ${given} overlaps ${overlap.name} (${overlap.path}), which a turn must not write`,
        `remove it from ${USER_CONFIG_HINT}, or name a directory beside ${overlap.name}`,
      );
    }
  }
  for (const given of settings.readable) {
    const file = canonical(expandHome(given, guarded.home));
    const overlap = goald.find((entry) => isInside(file, entry.path));
    if (overlap !== undefined) {
      throw new GoaldError(
        'config',
        `sandbox.readable: ${given} is inside ${overlap.name} (${overlap.path}), which a turn must not see`,
        `remove it from ${USER_CONFIG_HINT}`,
      );
    }
  }
}

// The real path when it exists (symlinks cannot smuggle a path in or out), else the resolved path.
function canonical(file: string): string {
  return realPathOf(file) ?? path.resolve(file);
}

