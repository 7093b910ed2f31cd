// The process groups of the commands and checks the agent's tools are running, so that when goald ends
// the turn (SIGTERM to the agent's group) they end too: they lead groups of their own, with their own
// GOALD_TURN_TOKEN, which neither the signal to the agent's group nor the adapter's sweep for the agent's
// token would reach, and a command that ignores SIGTERM would outlive the turn.

import { killMarkedProcesses } from '../../../process/escaped-processes.js';
import { signalGroup } from '../../../process/process-group.js';
import type { CheckGroup } from '../../../workspace/types.js';

export interface CommandGroups {
  /** Tracks a group from its start (the check runner's onGroup) until `release`. */
  add(group: CheckGroup): void;
  release(group: CheckGroup): void;
  /** SIGKILLs every tracked group and every process carrying its token; resolves when the sweep is done. */
  killAll(): Promise<void>;
}

/** Creates the registry of one agent process. */
export function createCommandGroups(): CommandGroups {
  const groups = new Set<CheckGroup>();
  return {
    add: (group) => void groups.add(group),
    release: (group) => void groups.delete(group),
    async killAll() {
      const all = [...groups];
      groups.clear();
      // No grace: the turn is over, and the agent process itself has only SIGKILL_GRACE_MS left.
      for (const group of all) signalGroup(group.pid, 'SIGKILL');
      await Promise.all(all.map((group) => killMarkedProcesses(group.token)));
    },
  };
}
