// Helpers for the agent tests: fixture paths, temp dirs, an agent's output lines and process states (waits
// on a condition go through ../helpers/wait.ts; never fixed sleeps).

import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { readProcessStateNow } from '../../src/process/process-group.js';

/** Absolute path of an executable fixture in test/fixtures/agents. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/agents/${name}.mjs`, import.meta.url));
}

/** A fresh temp directory, removed when the test finishes. */
export async function makeTempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'goald-agents-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A shell script that does nothing, made executable at `file` (for PATH look-ups); returns `file`. */
export async function executable(file: string): Promise<string> {
  await writeFile(file, '#!/bin/sh\n');
  await chmod(file, 0o755);
  return file;
}

/** Collects lines and resolves waits for a given line. */
export function createLineLog(): {
  lines: string[];
  onLine: (line: string) => void;
  waitFor: (predicate: string | ((line: string) => boolean)) => Promise<string>;
} {
  const lines: string[] = [];
  const waiters: Array<{ test: (line: string) => boolean; resolve: (line: string) => void }> = [];
  const matcher = (predicate: string | ((line: string) => boolean)) =>
    typeof predicate === 'string' ? (line: string) => line === predicate : predicate;
  return {
    lines,
    onLine(line) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.test(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    },
    waitFor(predicate) {
      const test = matcher(predicate);
      const seen = lines.find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
  };
}

/**
 * Whether a process no longer runs. A zombie counts as gone: it has exited and only waits to be reaped,
 * which some container inits never do for orphans.
 */
export async function isProcessGone(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const state = readProcessStateNow(pid);
  return state === null || state.state === 'Z' || state.state === 'X';
}

/** The /proc state letter of a process (T = stopped), or null when it is gone. */
export async function processStateOf(pid: number): Promise<string | null> {
  return readProcessStateNow(pid)?.state ?? null;
}

/** Kills a pid if it still exists; for cleanup after a failed assertion. */
export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}
