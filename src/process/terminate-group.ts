// Ending a process group, the one way goald does it: agents, checks and a restarted daemon's leftovers
// all go through terminateGroup, so they share one grace period and one definition of "gone".

import { setTimeout as delay } from 'node:timers/promises';
import { monotonicMs } from '../clock.js';
import { isGroupAlive, signalGroup } from './process-group.js';

export const SIGKILL_GRACE_MS = 5_000; // same grace as execa's forceKillAfterDelay
// How often the group is re-checked while it is being terminated.
const GROUP_POLL_MS = 25;
// After SIGKILL, members die at once unless stuck in the kernel (state D); stop waiting for them then.
const AFTER_SIGKILL_WAIT_MS = 1_000;

/**
 * How a termination ended: `not-running` (no process of the group was there to signal), `terminated`
 * (gone within the grace), `killed` (gone after SIGKILL), `stuck` (still there after SIGKILL).
 */
export type TerminationOutcome = 'not-running' | 'terminated' | 'killed' | 'stuck';

export interface TerminateGroupOptions {
  /** Time between SIGTERM and SIGKILL; SIGKILL_GRACE_MS unless a test needs it shorter. */
  graceMs?: number;
}

/**
 * Ends every process of a group: SIGTERM, SIGCONT (a stopped process acts on SIGTERM only once
 * continued), then polls until no member runs, sending SIGKILL once the grace has passed. Resolves when
 * the group is gone, or AFTER_SIGKILL_WAIT_MS after SIGKILL when a member cannot die; never rejects.
 */
export async function terminateGroup(pgid: number, options: TerminateGroupOptions = {}): Promise<TerminationOutcome> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'not-running';
  signalGroup(pgid, 'SIGCONT');
  const killAt = monotonicMs() + (options.graceMs ?? SIGKILL_GRACE_MS);
  let killedAt: number | null = null;
  // Zombies do not count as running: orphaned members are reaped by init, which may take its time.
  while (await isGroupAlive(pgid)) {
    const now = monotonicMs();
    if (killedAt === null && now >= killAt) {
      signalGroup(pgid, 'SIGKILL');
      killedAt = now;
    }
    if (killedAt !== null && now - killedAt >= AFTER_SIGKILL_WAIT_MS) return 'stuck';
    await delay(killedAt === null ? Math.min(GROUP_POLL_MS, Math.max(0, killAt - now)) : GROUP_POLL_MS);
  }
  return killedAt === null ? 'terminated' : 'killed';
}
