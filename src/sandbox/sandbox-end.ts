// When a sandboxed process is really over. bwrap exits as soon as the command it ran does, while its PID
// namespace may still hold what the command left running: the namespace's init (bwrap's child, pid 1
// inside) outlives bwrap until --die-with-parent kills it, and only as that init exits does the kernel
// kill and reap the rest. So "bwrap exited" is not "nothing of it runs"; the init's end is. bwrap names
// the init's host pid on --info-fd before it lets the command start.

import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { monotonicMs } from '../clock.js';
import { z } from '../zod-mini.js';
import { readProcessStateNow } from '../process/process-group.js';

/** The child's file descriptor bwrap writes its info JSON to (the fourth stdio entry of the spawn). */
export const BWRAP_INFO_FD = 3;

// The init usually ends within a millisecond of bwrap; a busy machine takes longer to schedule it.
const END_POLL_MS = 1;
// After this long the init is stuck (or not bwrap's): the caller falls back to ending the group by signal.
const END_WAIT_LIMIT_MS = 2_000;
// bwrap's info is ~200 bytes; anything longer is not bwrap's and not read further.
const INFO_LIMIT_BYTES = 4_096;

const bwrapInfoSchema = z.object({ 'child-pid': z.int().check(z.positive()) });

/** bwrap's --info-fd arguments: they go before the `--` that ends bwrap's own options. */
export function bwrapInfoArgs(): string[] {
  return ['--info-fd', String(BWRAP_INFO_FD)];
}

/**
 * Reads bwrap's --info-fd JSON until bwrap closes the descriptor; resolves with the sandbox init's host pid,
 * or null when bwrap wrote none (it failed before starting the namespace). Never rejects.
 */
export function readSandboxInitPid(info: Readable): Promise<number | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (): void => {
      info.removeAllListeners('data');
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // Not JSON: bwrap failed before writing it all.
      }
      const result = bwrapInfoSchema.safeParse(parsed);
      resolve(result.success ? result.data['child-pid'] : null);
    };
    info.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= INFO_LIMIT_BYTES) chunks.push(chunk);
    });
    info.once('end', finish);
    info.once('error', finish);
    info.once('close', finish);
  });
}

/**
 * Resolves true once the sandbox's init is gone or a zombie (so the kernel has ended every process of its
 * namespace), false when it still runs after END_WAIT_LIMIT_MS. `pgid` is the group bwrap led, which the
 * init belongs to: a pid in another group is the init's pid reused by someone else, so the init is gone.
 */
export async function waitForSandboxEnd(initPid: number, pgid: number): Promise<boolean> {
  const giveUpAt = monotonicMs() + END_WAIT_LIMIT_MS;
  for (;;) {
    const init = readProcessStateNow(initPid);
    if (init === null || init.pgid !== pgid || init.state === 'Z' || init.state === 'X') return true;
    if (monotonicMs() >= giveUpAt) return false;
    await delay(END_POLL_MS);
  }
}
