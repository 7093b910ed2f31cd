// A tiny filesystem for disk-full tests: a tmpfs of a few MB mounted on a sandbox's GOALD_HOME, so goald's
// own writes hit ENOSPC while the workspace (elsewhere) is fine. Mounting needs root (or CAP_SYS_ADMIN);
// tmpfsUnavailable() says why it cannot be done here, so tests skip with that reason instead of passing.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { sandboxDaemonPid, type GoaldSandbox } from './run-goald.js';
import { waitForProcessGone } from './processes.js';

function mount(dir: string, bytes: number): string | null {
  const run = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (run.error) return `mount could not run (${run.error.message})`;
  return run.status === 0 ? null : `mount -t tmpfs failed: ${run.stderr.trim() || `exit ${run.status}`}`;
}

// A process of the test may still hold the mount for a moment after its goal ended (a sandbox binding one
// of the home's files, a log being closed): umount is retried for a second, then the mount is detached
// lazily, so the clean-up that follows (removing the sandbox) never fails on EBUSY.
function unmount(dir: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if (spawnSync('umount', [dir]).status === 0) return;
    Atomics.wait(pause, 0, 0, 50);
  }
  spawnSync('umount', ['--lazy', dir]);
}

/** Why a tmpfs cannot be mounted here, or null when it can (probed once, by mounting one). */
export function tmpfsUnavailable(): string | null {
  const probe = mkdtempSync(path.join(tmpdir(), 'gd-mount-probe-'));
  try {
    const problem = mount(probe, 1024 * 1024);
    if (problem === null) unmount(probe);
    return problem;
  } finally {
    rmdirSync(probe);
  }
}

/** Mounts a `bytes`-sized tmpfs (0700) on `dir` (created if needed), unmounted when the test finishes. */
export function mountTinyDisk(dir: string, bytes: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const problem = mount(dir, bytes);
  if (problem !== null) throw new Error(problem);
  onTestFinished(() => unmount(dir));
}

/**
 * Mounts a `bytes`-sized tmpfs (0700) on the sandbox's GOALD_HOME. Registered after goaldSandbox(), its
 * clean-up runs first (vitest runs onTestFinished hooks as a stack): stop the daemon, then unmount, then
 * the sandbox removes its root.
 */
export function mountTinyHome(sandbox: GoaldSandbox, bytes: number): void {
  mountTinyDisk(sandbox.home, bytes);
  onTestFinished(async () => {
    const pid = sandboxDaemonPid(sandbox);
    if (pid === null) return;
    await sandbox.run(['daemon', 'stop']).catch(() => undefined);
    if (!(await waitForProcessGone(pid, 10_000))) process.kill(pid, 'SIGKILL');
    await waitForProcessGone(pid, 5_000);
  });
}
