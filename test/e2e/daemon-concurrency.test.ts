// End to end: many goals at once in one daemon — ten workspaces in parallel (submitted by ten CLI
// processes racing to auto-start the daemon), and a per-workspace queue.

import { describe, expect, it } from 'vitest';
import { expectToHold, gatedAgent, readGoal, readGoals, stepsCheck, submitGoal, waitForFinished, waitForPidFile } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, sandboxDaemonPid } from '../helpers/run-goald.js';

function repo() {
  return gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
}

describe('concurrency', () => {
  it('runs 10 goals in 10 workspaces at once, all submitted while the daemon auto-starts, all achieved by one daemon', async () => {
    const sandbox = await goaldSandbox();
    const repos = await Promise.all(Array.from({ length: 10 }, () => repo()));
    const runs = await Promise.all(
      repos.map((workspace, index) =>
        sandbox.run([
          'start', `goal ${index}`, '-C', workspace.dir, '--cooldown', '0',
          '--check', 'test "$(cat n 2>/dev/null | wc -l)" -ge 2', '--agent', 'echo x >> n', '--json',
        ]),
      ),
    );
    for (const run of runs) {
      expect(run.stderr, run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    const ids = runs.map((run) => String(parseJsonLines(run.stdout)[0]?.id));
    expect(new Set(ids).size).toBe(10);

    // Exactly one daemon won the race; every goal went to it.
    const pid = sandboxDaemonPid(sandbox);
    expect(pid).not.toBeNull();
    const ping = await sandbox.run(['daemon', 'status', '--json']);
    expect(JSON.parse(ping.stdout)).toMatchObject({ running: true, pid });

    for (const id of ids) {
      const goal = await waitForFinished(sandbox, id, 30_000);
      expect(goal, `${goal.id}: ${goal.reasonMessage ?? ''}`).toMatchObject({ status: 'achieved', summary: { turns: 2 } });
      expect(goal.owner).toEqual({ kind: 'daemon', pid });
    }
  }, 60_000); // 10 CLI processes, a daemon start and 20 turns: ~26 s alone on a loaded 2-core machine

  it('queues a second goal in a busy workspace, runs it after the first, and refuses with --no-queue', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const first = await submitGoal(sandbox, ['first', '-C', workspace.dir, '--cooldown', '0', '--check', stepsCheck(1), '--agent', agent.command]);
    expect(first.queued).toBe(false);
    await waitForPidFile(agent.agentPidFile(1));

    const second = await submitGoal(sandbox, ['second', '-C', workspace.dir, '--cooldown', '0', '--check', 'test -f second.txt', '--agent', 'touch second.txt']);
    expect(second.queued).toBe(true);
    expect(readGoal(sandbox, second.id)).toMatchObject({ status: 'active', phase: 'queued', startedAt: null });

    const status = await sandbox.run(['status']);
    const lines = status.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.find((line) => line.startsWith(second.id))).toMatch(/ queued /);
    expect(lines.find((line) => line.startsWith(first.id))).toMatch(/active · running/);

    const refused = await sandbox.run(['start', 'third', '-C', workspace.dir, '--check', 'true', '--agent', 'true', '--no-queue']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(new RegExp(`goal ${first.id} is already active in .*drop --no-queue`));
    expect(readGoals(sandbox).map((goal) => goal.condition)).toEqual(['first', 'second']); // nothing written

    // The queued goal waits as long as the first runs.
    await expectToHold('the second goal stays queued', 300, () => readGoal(sandbox, second.id).phase === 'queued');
    await agent.open(1);
    const done = await waitForFinished(sandbox, first.id);
    const next = await waitForFinished(sandbox, second.id);
    expect([done.status, next.status]).toEqual(['achieved', 'achieved']);
    expect(Date.parse(next.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(done.finishedAt ?? ''));
  });
});
