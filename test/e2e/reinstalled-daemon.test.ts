// goald reinstalled or rebuilt under a running daemon (`npm install -g` over it): the daemon's next lazily
// loaded chunk is gone. That is no goal's failure: the daemon stops with its goals kept active, and the
// daemon the next command starts, from the new code, resumes them. A copy of the bundle plays the old
// install, so the build every other test uses is not touched.

import { cpSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonLog, readGoal, waitForFinished } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { runProcess, waitForProcessGone, type ProcessRun } from '../helpers/processes.js';
import { goaldBin, goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';

/** Runs `node <bin> <args>` in the sandbox's environment; its exit code and output. */
function runBin(sandbox: GoaldSandbox, bin: string, args: string[]): Promise<ProcessRun> {
  return runProcess(process.execPath, [bin, ...args], { cwd: sandbox.root, env: sandbox.env });
}

describe('goald reinstalled under a running daemon', () => {
  it('the daemon stops with the goal kept active, not failed for storage; the next daemon resumes it to achieved', async () => {
    const sandbox = await goaldSandbox();
    const oldInstall = path.join(sandbox.root, 'old-install');
    cpSync(path.dirname(goaldBin), oldInstall, { recursive: true });
    const oldBin = path.join(oldInstall, 'bin.js');
    const { dir } = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });

    const started = await runBin(sandbox, oldBin, ['daemon']);
    expect(started.code, started.stderr).toBe(0);
    const oldDaemon = Number(/pid (\d+)/.exec(started.stdout)?.[1]);
    let id = '';
    try {
      // The chunk a turn whose checks all pass loads first (the guard's look at files no snapshot holds).
      const chunks = readdirSync(oldInstall).filter((name) => name.startsWith('inspect-turn-'));
      expect(chunks).toHaveLength(1);
      for (const chunk of chunks) rmSync(path.join(oldInstall, chunk));

      const submitted = await runBin(sandbox, oldBin, ['start', 'f exists', '--json', '-C', dir, '--agent', 'echo x > f', '--check', 'test -f f', '--evaluator', 'none', '--cooldown', '0']);
      expect(submitted.code, submitted.stderr).toBe(0);
      id = String(parseJsonLines(submitted.stdout).find((event) => event.type === 'goal.submitted')?.id);

      expect(await waitForProcessGone(oldDaemon, 15_000), daemonLog(sandbox)).toBe(true);
      expect(daemonLog(sandbox)).toMatch(/goald was reinstalled or rebuilt under this daemon \(ENOENT[^\n]*inspect-turn-[^\n]*\); stopping, its goals kept active/);
      expect(readGoal(sandbox, id)).toMatchObject({ status: 'active', reason: null });
    } finally {
      await runBin(sandbox, oldBin, ['daemon', 'stop']).catch(() => undefined);
      await waitForProcessGone(oldDaemon, 10_000);
    }

    // The new install's daemon (the helper stops it at the end) takes the goal over and finishes it.
    const next = await sandbox.run(['daemon']);
    expect(next.code, next.stderr).toBe(0);
    const finished = await waitForFinished(sandbox, id);
    expect(finished, daemonLog(sandbox)).toMatchObject({ status: 'achieved' });
    expect(daemonLog(sandbox)).toContain('recovered (active, was running)');
  });
});
