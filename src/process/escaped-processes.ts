// Processes that left the process group goald started them in (`setsid cmd &`, a double fork) are out of
// reach of a group signal. Each agent turn and check therefore carries a random token in its environment,
// which every descendant inherits wherever it moves; once the group is gone, goald finds the processes
// still carrying it in /proc/<pid>/environ and kills them. A process that deliberately rebuilds its
// environment without the token escapes this sweep (the kernel sandbox's PID namespace is the answer to
// that); everything that merely detached is caught.

import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

/** The environment variable that marks every process of one agent turn or one check. */
const PROCESS_TOKEN_ENV = 'GOALD_TURN_TOKEN';

// A marked process may fork between the scan that found it and its SIGKILL; each further sweep catches
// the children of the last. Ten rounds end any realistic fork chain; a fork bomb outruns any sweep.
const MAX_SWEEPS = 10;
// Lets the kernel finish the kills of the last sweep before looking again.
const SWEEP_PAUSE_MS = 10;

/** A fresh random token for one process group's environment. */
export function newProcessToken(): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16))).toString('hex');
}

/** `env` plus the token that marks the processes started with it. */
export function markEnvironment(env: NodeJS.ProcessEnv, token: string): NodeJS.ProcessEnv {
  return { ...env, [PROCESS_TOKEN_ENV]: token };
}

/**
 * Kills (SIGKILL: they may be stopped, or ignore SIGTERM) every process whose environment carries `token`,
 * again and again until a sweep finds none; resolves with how many distinct processes were killed. Never
 * rejects; without /proc (not Linux) it finds nothing.
 */
export async function killMarkedProcesses(token: string): Promise<number> {
  const needle = Buffer.from(`${PROCESS_TOKEN_ENV}=${token}\0`);
  const killed = new Set<number>();
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep += 1) {
    const marked = await findMarkedProcesses(needle);
    if (marked.length === 0) break;
    for (const pid of marked) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // Gone already (ESRCH), or not ours to kill (EPERM).
      }
    }
    await delay(SWEEP_PAUSE_MS);
  }
  return killed.size;
}

/** The live (non-zombie) processes whose environment holds `needle`; [] when /proc cannot be read. */
async function findMarkedProcesses(needle: Buffer): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => pid !== process.pid);
  const found = await Promise.all(
    pids.map(async (pid) => {
      try {
        // A zombie's environ reads empty; another user's is unreadable (EACCES) unless we are root.
        const environ = await readFile(`/proc/${pid}/environ`);
        return environ.includes(needle) ? pid : null;
      } catch {
        return null;
      }
    }),
  );
  return found.filter((pid): pid is number => pid !== null);
}
