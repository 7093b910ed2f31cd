// When an agent ran, as the guard's looks at files no snapshot holds use it: a file whose ctime falls in a
// window was changed by the agent's turn (checks run outside them).

import { statSync, writeFileSync } from 'node:fs';

/**
 * When an agent ran, in epoch milliseconds: from a ctime the kernel stamped just before its release (files
 * are stamped from a clock that may lag the wall clock by a tick; supervisor/agent-windows.ts) to the
 * wall clock once its process group has ended.
 */
export interface TimeWindow {
  from: number;
  to: number;
}

/** Whether a ctime falls in one of the windows. */
export function withinWindows(ctimeMs: number, windows: readonly TimeWindow[]): boolean {
  return windows.some((window) => ctimeMs >= window.from && ctimeMs <= window.to);
}

// How long writeStampedLater waits for the file clock to tick: beyond it (a filesystem that keeps whole
// seconds), the window opens at the tick the checks ended in, and more may be reported, never less.
const STAMP_WAIT_MS = 20;

/**
 * Writes `content` over `file` (in place, mode 0600) so that its ctime is later than every file time the
 * kernel gave out before the call, and resolves with that ctime: the start of an agent's window, which the
 * files the checks before it wrote must fall outside. File times come from a clock that ticks every 1-10 ms,
 * unless the file was looked at since it last changed (Linux >= 6.13 on ext4, xfs, btrfs, tmpfs: then from
 * the fine clock). So the file is emptied and looked at first (a floor no earlier write is above), then
 * written, and written again a millisecond later while its time is still the floor's.
 */
export async function writeStampedLater(file: string, content: string): Promise<number> {
  writeFileSync(file, '', { mode: 0o600 });
  const floor = statSync(file).ctimeMs;
  const giveUpAt = Date.now() + STAMP_WAIT_MS;
  for (;;) {
    writeFileSync(file, content, { mode: 0o600 });
    const stamped = statSync(file).ctimeMs;
    if (stamped > floor || Date.now() >= giveUpAt) return stamped;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
