// Paths the builtin agent's write tools refuse outright: the goal's contract (goal.config.json at the
// workspace root) and goald's reserved `.goald/` directory. The tamper guard would catch such a change after
// the turn; refusing it at the tool keeps an honest model from wasting a turn and a hostile one from trying.

import { WORKSPACE_CONFIG_FILE } from '../../../guard/goald-paths.js';

/** Why a workspace-relative path may not be written, or null when it may. */
export function writeRefusal(relative: string): string | null {
  if (relative === WORKSPACE_CONFIG_FILE) {
    return `${WORKSPACE_CONFIG_FILE} is the goal's contract (its checks and limits); the agent may not change it`;
  }
  if (relative === '.goald' || relative.startsWith('.goald/')) return '.goald/ holds goald\'s own files; the agent may not change them';
  return null;
}
