// A `goald start --foreground --json` run whose events are read while it runs: the tests wait for an event
// (a pause), look at the goal from outside (`goald status --json`), then let the run finish or stop it.

import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';
import { goaldBin, type GoaldRun } from '../../test/helpers/run-goald.js';

export type GoaldEvent = Record<string, unknown> & { type?: unknown };

export interface LiveGoald {
  pid: number;
  /** The JSON events printed so far, in order. */
  events: GoaldEvent[];
  /** Resolves with the first event (already printed or still to come) that matches; rejects on exit. */
  waitForEvent(what: string, match: (event: GoaldEvent) => boolean): Promise<GoaldEvent>;
  /** Resolves when the process exits. */
  done: Promise<GoaldRun>;
}

// A process still running when its test ends gets this long to stop after SIGTERM (it kills its agent,
// whose own grace period is 5 s), then SIGKILL.
const STOP_GRACE_MS = 8_000;

/** Spawns `node dist/bundle/bin.js <args>`; it is stopped (SIGTERM, then SIGKILL) if still running at the test's end. */
export function spawnGoald(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): LiveGoald {
  const child = spawn(process.execPath, [goaldBin, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const events: GoaldEvent[] = [];
  const waiters = new Set<{ match: (event: GoaldEvent) => boolean; resolve: (event: GoaldEvent) => void }>();
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stdout += text;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim().startsWith('{')) continue;
      const event = JSON.parse(line) as GoaldEvent;
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<GoaldRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await done.catch(() => undefined);
    clearTimeout(timer);
  });

  return {
    pid: child.pid ?? 0,
    events,
    done,
    waitForEvent(what, match) {
      const seen = events.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.add({ match, resolve });
        void done.then((run) =>
          reject(new Error(`goald exited (code ${run.code}, signal ${run.signal}) before ${what}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`)),
        );
      });
    },
  };
}
