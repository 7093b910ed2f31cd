// End to end, against hostile scripted agents and checks: a repository configured to run programs from
// goald's own git calls (fsmonitor, filter drivers) cannot stretch a turn, and processes that left the
// agent's or a check's process group (setsid, a double fork) do not outlive the turn, a stop, or a crash.

import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readRunningChecks } from '../../state/running-checks.js';
import { daemonLog, readGoal, submitGoal, waitForFinished, waitForPidFile } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { isProcessRunning, waitUntilGone } from '../helpers/processes.js';
import { goaldSandbox, parseJsonLines, repoRoot, sandboxDaemonPid } from '../helpers/run-goald.js';

const FAST = ['--cooldown', '0', '--evaluator', 'none'];
const escapeFixture = path.join(repoRoot, 'test', 'fixtures', 'agents', 'escape-group.mjs');

function repo() {
  return gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
}

/** Shell that starts a `setsid` escapee writing its pid to `pidFile`, and waits until it has. */
function setsidEscape(pidFile: string): string {
  return `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 7777' </dev/null >/dev/null 2>&1 & while [ ! -s ${pidFile} ]; do sleep 0.01; done`;
}

/** Shell that starts a double-forked node escapee (reparented to init) writing its pid to `pidFile`. */
function doubleForkEscape(pidFile: string): string {
  return `${process.execPath} ${escapeFixture} ${pidFile} --double-fork >/dev/null`;
}

function killLeftover(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone, as it should be
  }
}

describe('hostile repository configuration', () => {
  it('an agent that sets core.fsmonitor and a filter driver to `sleep 15` cannot stretch its turn past the timeout + 5 s', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = [
      'git config core.fsmonitor "sleep 15"',
      'git config filter.slow.clean "sleep 15; cat"',
      'git config filter.slow.required true',
      "echo '* filter=slow' > .gitattributes",
      'echo step >> progress.txt',
    ].join('; ');
    const started = performance.now();
    const result = await sandbox.run(
      ['start', 'progress.txt exists', '-C', workspace.dir, ...FAST, '--foreground', '--json', '--turn-timeout', '5s', '--max-turns', '1', '--check', 'test -f progress.txt', '--agent', agent],
    );
    const elapsedMs = performance.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(parseJsonLines(result.stdout).at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved', turns: 1 });
    expect(elapsedMs).toBeLessThan(10_000);
  });
});

describe('processes that left the process group', () => {
  it('a setsid escapee and a double-forked node daemon of an agent are gone when its turn ends', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const setsidPid = path.join(sandbox.root, 'setsid.pid');
    const forkPid = path.join(sandbox.root, 'fork.pid');
    const agent = `${setsidEscape(setsidPid)}; ${doubleForkEscape(forkPid)}; echo step >> progress.txt`;
    const result = await sandbox.run(
      ['start', 'progress.txt exists', '-C', workspace.dir, ...FAST, '--foreground', '--json', '--max-turns', '1', '--check', 'test -f progress.txt', '--agent', agent],
    );
    const escapees = [await waitForPidFile(setsidPid), await waitForPidFile(forkPid)];
    for (const pid of escapees) killLeftoverLater(pid);
    expect(result.code, result.stderr).toBe(0);
    // Gone by the time goal.finished was printed, not merely eventually.
    for (const pid of escapees) expect(isProcessRunning(pid), `escapee ${pid}`).toBe(false);
  });

  it('a setsid escapee of a check is gone when the check ends', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const pidFile = path.join(sandbox.root, 'check-escapee.pid');
    const result = await sandbox.run(
      ['start', 'always met', '-C', workspace.dir, ...FAST, '--foreground', '--json', '--check', `${setsidEscape(pidFile)}; true`, '--agent', 'true'],
    );
    const escapee = await waitForPidFile(pidFile);
    killLeftoverLater(escapee);
    expect(result.code, result.stderr).toBe(0);
    expect(isProcessRunning(escapee)).toBe(false);
  });

  it('`goald stop` kills the escapees of the running turn', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const setsidPid = path.join(sandbox.root, 'setsid.pid');
    const forkPid = path.join(sandbox.root, 'fork.pid');
    const { id } = await submitGoal(sandbox, ['never', '-C', workspace.dir, ...FAST, '--check', 'false', '--agent', `${setsidEscape(setsidPid)}; ${doubleForkEscape(forkPid)}; sleep 600`]);
    const escapees = [await waitForPidFile(setsidPid), await waitForPidFile(forkPid)];
    for (const pid of escapees) killLeftoverLater(pid);
    const stopped = await sandbox.run(['stop', id]);
    expect(stopped.code, `${stopped.stderr}${daemonLog(sandbox)}`).toBe(0);
    await waitForFinished(sandbox, id);
    for (const pid of escapees) await waitUntilGone(pid, 8_000);
  });

  it('after kill -9 of the daemon, the next daemon kills the agent\'s escapee and the running check\'s group', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agentEscapee = path.join(sandbox.root, 'agent-escapee.pid');
    const checkPid = path.join(sandbox.root, 'check.pid');
    const checkEscapee = path.join(sandbox.root, 'check-escapee.pid');
    const agentGate = path.join(sandbox.root, 'agent-go');
    // Turn 0's check passes at once; from turn 1 on it hangs (with an escapee) until the test is done.
    const check = `if [ -f ${agentGate} ]; then echo $$ > ${checkPid}; ${setsidEscape(checkEscapee)}; sleep 600; fi; false`;
    const agent = `${setsidEscape(agentEscapee)}; touch ${agentGate}`;
    const { id } = await submitGoal(sandbox, ['never', '-C', workspace.dir, ...FAST, '--check', check, '--agent', agent]);
    const escapees = [await waitForPidFile(agentEscapee), await waitForPidFile(checkEscapee)];
    const checkLeader = await waitForPidFile(checkPid);
    for (const pid of [...escapees, checkLeader]) killLeftoverLater(pid);
    // The agent's own sweep already ended its escapee; the check's group and escapee are the crash's leftovers.
    await waitUntilGone(escapees[0] ?? 0, 8_000);
    await expect.poll(async () => (await readRunningChecks(path.join(sandbox.home, 'goals', id))).map((group) => group.pid), { timeout: 15_000 }).toContain(checkLeader);

    const daemon = sandboxDaemonPid(sandbox);
    expect(daemon).not.toBeNull();
    process.kill(daemon ?? 0, 'SIGKILL');
    await waitUntilGone(daemon ?? 0);
    expect(isProcessRunning(checkLeader)).toBe(true);
    expect(isProcessRunning(escapees[1] ?? 0)).toBe(true);

    const restarted = await sandbox.run(['daemon']);
    expect(restarted.code, restarted.stderr).toBe(0);
    await waitUntilGone(checkLeader, 8_000);
    await waitUntilGone(escapees[1] ?? 0, 8_000);
    const stopped = await sandbox.run(['stop', id]);
    expect(stopped.code, `${stopped.stderr}${daemonLog(sandbox)}`).toBe(0);
    expect(readGoal(sandbox, id).status).toBe('failed');
  });
});

// Processes a failed assertion may leave: killed when the test is over (a no-op when all went well).
function killLeftoverLater(pid: number): void {
  onTestFinished(() => killLeftover(pid));
}
