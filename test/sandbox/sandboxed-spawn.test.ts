// A sandboxed agent process (real bwrap): when the turn's process is done, nothing it started is left —
// neither a background child in its group nor one that left the group without goald's token — although
// goald skips its own /proc sweep there (the PID namespace ends only once all of it is gone). And a goal
// whose sandbox is off never starts bwrap at all.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_SANDBOX } from '../../src/config/defaults.js';
import { spawnAgentProcess } from '../../src/process/spawn.js';
import { createCheckRunner } from '../../src/workspace/checks.js';
import { openGoalSandbox } from '../../src/sandbox/goal-sandbox.js';
import { isProcessRunning } from '../helpers/processes.js';
import { requiredSandbox as sandboxInTempDir } from '../helpers/sandbox.js';

/** Host pids of running `sleep <marker>` processes. */
function sleepers(marker: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(isProcessRunning);
}

/** A `required` sandbox (helpers/sandbox.ts) and a unique sleep marker. */
async function requiredSandbox() {
  return { ...(await sandboxInTempDir()), marker: String(5_000_000 + Math.floor(Math.random() * 1_000_000)) };
}

/** A script that starts two `sleep <marker>` (one in its own session), waits until both run, says `ready`. */
function leaveSleepers(marker: string, options: { quiet: boolean }): string {
  // quiet: the sleepers close their copies of the pipes, so nothing but the namespace's end stops them.
  const out = options.quiet ? ' >/dev/null 2>&1' : '';
  const detached = options.quiet ? 'setsid' : 'env -u GOALD_TURN_TOKEN setsid';
  return `sleep ${marker}${out} & ${detached} sleep ${marker}${out} & until [ "$(cat /proc/[0-9]*/comm 2>/dev/null | grep -cx sleep)" -ge 2 ]; do :; done; echo ready`;
}

/** Runs `script` as a sandboxed agent turn to its end. */
function runSandboxedAgent(setup: Awaited<ReturnType<typeof requiredSandbox>>, script: string, transcript: string) {
  return spawnAgentProcess({
    command: '/bin/sh',
    args: ['-c', script],
    cwd: setup.workspace,
    env: setup.env,
    stdin: null,
    transcriptPath: path.join(setup.home, transcript),
    timeoutMs: 30_000,
    sandbox: setup.sandbox.forChecks(),
  }).done;
}

describe('spawnAgentProcess in the sandbox', () => {
  it('leaves no process behind once done: a background child and a token-less setsid child die with the namespace', async () => {
    const setup = await requiredSandbox();
    const { marker } = setup;
    const result = await runSandboxedAgent(setup, leaveSleepers(marker, { quiet: false }), 'turn.log');
    expect(result.exitCode).toBe(0);
    expect(result.outputTail).toContain('ready');
    expect(sleepers(marker)).toEqual([]);
  });

  // bwrap exits with its command while the namespace's init, and with it the rest, ends a moment later
  // (src/sandbox/sandbox-end.ts); one run in ten saw that moment on a busy machine, so each test takes ten.
  it('a sandboxed check leaves nothing behind either, though goald does not sweep for it', async () => {
    const { workspace, sandbox, marker } = await requiredSandbox();
    const runner = createCheckRunner({ workspace, checks: [{ name: 'leaves sleepers', run: leaveSleepers(marker, { quiet: true }), timeoutMs: 30_000 }] });
    for (let attempt = 1; attempt <= 10; attempt++) {
      const [result] = await runner.run(undefined, undefined, sandbox.forChecks());
      expect(result?.passed).toBe(true);
      expect(result?.outputTail).toContain('ready');
      expect(sleepers(marker), `attempt ${attempt}`).toEqual([]);
    }
  });

  it('a held check sets its sandbox up and runs nothing until released; a refused one leaves nothing behind', async () => {
    const { workspace, sandbox } = await requiredSandbox();
    const runner = createCheckRunner({ workspace, checks: [{ name: 'held', run: 'touch ran; test "$(readlink /proc/self/fd/0)" = /dev/null', timeoutMs: 30_000 }] });
    let open = (): void => undefined;
    const groups: number[] = [];
    const released = runner.run(undefined, (group) => groups.push(group.pid), sandbox.forChecks(), new Promise<void>((resolve) => (open = resolve)));
    await expect.poll(() => groups.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
    open();
    const [result] = await released;
    expect(result).toMatchObject({ passed: true, outputTail: '' });
    expect(existsSync(path.join(workspace, 'ran'))).toBe(true);

    let refuse: (reason: Error) => void = () => undefined;
    const refused = runner.run(undefined, (group) => groups.push(group.pid), sandbox.forChecks(), new Promise<void>((_resolve, reject) => (refuse = reject)));
    await expect.poll(() => groups.length).toBe(2);
    await rm(path.join(workspace, 'ran'));
    refuse(new Error('not registered'));
    await expect(refused).rejects.toThrow('not registered');
    await expect.poll(() => isProcessRunning(groups[1] ?? 0)).toBe(false);
    expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
  });

  it('an agent whose leftovers hold no pipe: nothing is left once its turn is done', async () => {
    const setup = await requiredSandbox();
    const { marker } = setup;
    for (let attempt = 1; attempt <= 10; attempt++) {
      const result = await runSandboxedAgent(setup, leaveSleepers(marker, { quiet: true }), `turn-${attempt}.log`);
      expect(result.outputTail).toContain('ready');
      expect(result.strayProcessesKilled).toBe(false); // the namespace ended them, not goald's signals
      expect(sleepers(marker), `attempt ${attempt}`).toEqual([]);
    }
  });
});

describe('openGoalSandbox', () => {
  it('does not start bwrap for a goal whose sandbox is off; `goald sandbox` (probeWhenOff) still does', async () => {
    const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gso-')));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    const workspace = path.join(root, 'ws');
    await mkdir(workspace);
    const marker = path.join(root, 'probed');
    // A bwrap that says it was run: the probe is the only thing that starts it here.
    const fakeBwrap = path.join(root, 'bwrap');
    await writeFile(fakeBwrap, `#!/bin/sh\necho run >> '${marker}'\n`, { mode: 0o755 });
    const open = (probeWhenOff: boolean) =>
      openGoalSandbox(
        {
          // A bwrap path no other test uses, so the per-process probe cache holds nothing for it yet.
          settings: { ...DEFAULT_SANDBOX, mode: 'off', bwrap: fakeBwrap },
          workspace: { root: workspace, gitDir: path.join(workspace, '.git'), commonDir: path.join(workspace, '.git') },
          agent: { adapter: 'command', command: 'sh' },
          goaldHome: path.join(root, 'home'),
          env: { ...process.env, HOME: root },
        },
        { probeWhenOff },
      );
    const off = await open(false);
    expect(off.use).toBe('off');
    expect(off.forChecks()).toBeNull();
    expect(existsSync(marker)).toBe(false);
    const reported = await open(true);
    expect(reported.use).toBe('off');
    expect(reported.executable).toBe(fakeBwrap);
    expect(readFileSync(marker, 'utf8')).toBe('run\n');
  });
});
