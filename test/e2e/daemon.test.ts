// End to end: the built `goald` CLI against a real daemon it auto-starts (detached) in a short temp
// GOALD_HOME, over the real Unix socket, with real agent processes in real git repositories.
// Readiness is polled (/v1/ping through the CLI, the state file); no daemon outlives its test.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  daemonLog,
  expectErrorEnvelope,
  expectToHold,
  gatedAgent,
  rawOversizedRequest,
  rawRequest,
  readGoal,
  readTurns,
  stepsCheck,
  submitGoal,
  waitForFinished,
  waitForGoal,
  waitForPidFile,
} from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { isProcessRunning, waitUntilGone } from '../helpers/processes.js';
import { goaldSandbox, parseJsonLines, sandboxDaemonPid, type GoaldRun } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

const FAST = ['--cooldown', '0'];

function repo() {
  return gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
}

function expectOneLineError(run: GoaldRun, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(pattern);
}

/** The session id (field 6 of /proc/<pid>/stat): a detached daemon leads its own session. */
function sessionOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[3]);
}

describe('goald start through the daemon', () => {
  it('auto-starts the daemon detached, prints the goal id, and `daemon status` shows the daemon', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    expect(sandboxDaemonPid(sandbox)).toBeNull();

    const started = await sandbox.run(['start', 'a.txt exists', '-C', workspace.dir, ...FAST, '--check', 'test -f a.txt', '--agent', 'touch a.txt']);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const id = /^goal (\S+) started in (.+)$/.exec(started.stdout.trim());
    expect(id?.[2]).toBe(workspace.dir);

    // The CLI has exited; the daemon lives on in its own session, logging to GOALD_HOME/daemon.log.
    const pid = sandboxDaemonPid(sandbox);
    expect(pid).not.toBeNull();
    expect(sessionOf(pid as number)).toBe(pid);
    expect(await readFile(`${sandbox.home}/daemon.log`, 'utf8')).toContain('listening on');

    const status = await sandbox.run(['daemon', 'status', '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid, socket: sandbox.socket, home: sandbox.home });
    const human = await sandbox.run(['daemon', 'status']);
    expect(human.stdout).toMatch(new RegExp(`running \\(pid ${pid}\\)`));

    expect((await waitForFinished(sandbox, id?.[1] as string)).status).toBe('achieved');
  });

  it('--wait exits 0 when achieved and 1 when failed; --json lines end with goal.finished', async () => {
    const [first, second] = await Promise.all([repo(), repo()]);
    const sandbox = await goaldSandbox();
    const achieved = await sandbox.run([
      'start', 'two lines', '-C', first.dir, ...FAST, '--check', 'test "$(cat n 2>/dev/null | wc -l)" -ge 2', '--agent', 'echo x >> n', '--wait', '--json',
    ]);
    expect(achieved.stderr).toBe('');
    expect(achieved.code).toBe(0);
    const events = parseJsonLines(achieved.stdout);
    expect(events[0]).toMatchObject({ type: 'goal.submitted', queued: false });
    expect(events.filter((event) => event.type === 'turn.finished')).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'goal.finished', id: events[0]?.id, status: 'achieved', reason: null, breaker: null, turns: 2, tokens: expect.any(Number) });

    const failed = await sandbox.run(['start', 'impossible', '-C', second.dir, ...FAST, '--check', 'exit 1', '--agent', 'echo y >> m', '--max-turns', '2', '--wait', '--json']);
    expect(failed.code).toBe(1);
    expect(parseJsonLines(failed.stdout).at(-1)).toMatchObject({ type: 'goal.finished', status: 'failed', reason: 'max-turns', breaker: 'max-turns', turns: 2 });

    // Without --json, --wait prints progress lines and the final box.
    const human = await sandbox.run(['start', 'already there', '-C', first.dir, ...FAST, '--check', 'test -f n', '--agent', 'true', '--wait']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Goal Achieved');
  });

  it('a GOALD_HOME inside the repository (the default one, with dotfiles at $HOME): no turn is blamed for what the daemon writes there', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const env = { GOALD_HOME: workspace.path('.local/state/goald') };
    try {
      // Before, each turn's diff held the daemon's status.json, state.json and its seal: the guard called
      // status.json a protected path rewritten, and the goal failed on tamper after two turns.
      const result = await sandbox.run(
        ['start', 'f.txt says 4', '-C', workspace.dir, ...FAST, '--check', 'test "$(cat f.txt 2>/dev/null)" = 4', '--agent', 'echo "$GOALD_TURN" > f.txt', '--evaluator', 'none', '--wait', '--json'],
        { env },
      );
      expect(result.stderr).toBe('');
      const events = parseJsonLines(result.stdout);
      expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved', reason: null, turns: 4 });
      const turns = events.filter((event) => event.type === 'turn.finished');
      expect(turns.map((event) => [event.tamper ?? [], (event.view as { files: unknown }).files])).toEqual(Array.from({ length: 4 }, () => [[], ['f.txt']]));
      expect(result.code).toBe(0);
    } finally {
      expect((await sandbox.run(['daemon', 'stop'], { env })).code).toBe(0);
    }
  });
});

describe('controlling goals: status, pause, resume, stop, logs -f', () => {
  it('shows a status box, pauses at the turn boundary, starts nothing while paused, resumes; logs -f follows to the end', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['two steps', '-C', workspace.dir, ...FAST, '--check', stepsCheck(2), '--agent', agent.command]);
    await waitForPidFile(agent.agentPidFile(1));

    const box = await sandbox.run(['status', id]);
    expect(box.code).toBe(0);
    expect(box.stdout).toContain('Goal: two steps');
    expect(box.stdout).toContain(`id ${id} · active · running`);
    expect(box.stdout).toMatch(/turn 1\/20 · \d+ tokens · /); // the turn in flight
    // Without an id, the goal of the current workspace is meant.
    const here = await sandbox.run(['status', '--json'], { cwd: workspace.dir });
    expect(JSON.parse(here.stdout)).toMatchObject({ daemon: true, goals: [{ id, status: 'active', phase: 'running' }] });

    const logs = sandbox.run(['logs', '-f', id]);

    const pause = await sandbox.run(['pause'], { cwd: workspace.dir });
    expect(pause.code).toBe(0);
    expect(pause.stdout.trim()).toBe(`goal ${id} will pause at the end of the current turn`);
    expect(readGoal(sandbox, id).status).toBe('active'); // the turn in flight finishes first

    await agent.open(1);
    await waitForGoal(sandbox, id, 'to pause at the boundary', (goal) => goal.status === 'paused');
    // No turn (no agent, no check) starts while paused, though the cool-down is 0.
    await expectToHold('no second turn while paused', 700, () => !existsSync(agent.agentPidFile(2)));
    const paused = await sandbox.run(['status', id]);
    expect(paused.stdout).toContain('paused (requested)');
    expect(paused.stdout).toMatch(/turn 1\/20/);

    const resume = await sandbox.run(['resume', id]);
    expect(resume.code).toBe(0);
    expect(resume.stdout.trim()).toBe(`goal ${id} resumed`);
    await waitForPidFile(agent.agentPidFile(2));
    await agent.open(2);

    const followed = await logs;
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/turn 1\/20 .*checks 0\/1/);
    expect(followed.stdout).toContain('paused (requested)');
    expect(followed.stdout).toContain('resumed');
    expect(followed.stdout).toMatch(/turn 2\/20 .*checks 1\/1/);
    expect(followed.stdout).toContain('Goal Achieved');
    expect((await waitForFinished(sandbox, id)).status).toBe('achieved');
  });

  it('resume before the turn ends cancels a pending pause: status shows it pending, then the goal goes on', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['two steps', '-C', workspace.dir, ...FAST, '--check', stepsCheck(2), '--agent', agent.command]);
    await waitForPidFile(agent.agentPidFile(1));
    expect((await sandbox.run(['pause', id])).stdout.trim()).toBe(`goal ${id} will pause at the end of the current turn`);
    expect((await sandbox.run(['status', id])).stdout).toContain(`id ${id} · active · running · pausing after this turn`);

    const resume = await sandbox.run(['resume', id]);
    expect(resume.code).toBe(0);
    expect(resume.stdout.trim()).toBe(`goal ${id} will not pause: the pause asked for is cancelled`);
    expect((await sandbox.run(['status', id])).stdout).not.toContain('pausing after this turn');
    await agent.open(1);
    // Turn 2 starts: the pause was not taken at the boundary.
    await waitForPidFile(agent.agentPidFile(2));
    expect(readGoal(sandbox, id).status).toBe('active');
    await agent.open(2);
    expect((await waitForFinished(sandbox, id)).status).toBe('achieved');
  });

  it('lists several goals one line each; stop kills the agent group and records failed/stopped', async () => {
    const [first, second] = await Promise.all([repo(), repo()]);
    const sandbox = await goaldSandbox();
    const agentA = gatedAgent(`${sandbox.root}/a`);
    const agentB = gatedAgent(`${sandbox.root}/b`);
    await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(`${sandbox.root}/a`), fs.mkdir(`${sandbox.root}/b`)]));
    const a = await submitGoal(sandbox, ['goal a', '-C', first.dir, ...FAST, '--check', stepsCheck(1), '--agent', agentA.command]);
    const b = await submitGoal(sandbox, ['goal b', '-C', second.dir, ...FAST, '--check', stepsCheck(1), '--agent', agentB.command]);
    const leader = await waitForPidFile(agentA.agentPidFile(1));
    const grandchild = await waitForPidFile(agentA.childPidFile(1));
    await waitForPidFile(agentB.agentPidFile(1));

    const list = await sandbox.run(['status']);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.find((line) => line.startsWith(a.id))).toMatch(/active · running .*goal a/);
    expect(lines.find((line) => line.startsWith(b.id))).toMatch(/active · running .*goal b/);

    const stop = await sandbox.run(['stop', a.id]);
    expect(stop.code).toBe(0);
    expect(stop.stdout.trim()).toBe(`goal ${a.id} stopped`);
    expect(readGoal(sandbox, a.id)).toMatchObject({ status: 'failed', reason: 'stopped', runningAgent: null });
    await waitUntilGone(leader);
    await waitUntilGone(grandchild);
    const turns = await readTurns(sandbox, a.id);
    expect(turns.at(-1)?.agent?.outcome).toBe('aborted');

    // The other goal is undisturbed and finishes.
    expect(readGoal(sandbox, b.id).status).toBe('active');
    await agentB.open(1);
    expect((await waitForFinished(sandbox, b.id)).status).toBe('achieved');
  });
});

describe('bad input through the CLI: one line, exit 2', () => {
  it("stop while the goal's only check runs: the check's group is killed and the daemon lives on", async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const checkPid = `${sandbox.root}/check.pid`;
    // Turn 0's check fails at once (no agent has run yet); turn 1's hangs until the goal is stopped.
    const check = `if [ -f ran ]; then echo $$ > ${checkPid}; exec sleep 600; fi; false`;
    const { id } = await submitGoal(sandbox, ['check hangs', '-C', workspace.dir, ...FAST, '--check', check, '--agent', 'touch ran']);
    const leader = await waitForPidFile(checkPid);
    const daemon = sandboxDaemonPid(sandbox);

    const stop = await sandbox.run(['stop', id]);
    expect(stop.code, `${stop.stderr}${daemonLog(sandbox)}`).toBe(0);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'failed', reason: 'stopped' });
    await waitUntilGone(leader);
    expect(isProcessRunning(daemon ?? 0)).toBe(true);
    expect((await sandbox.run(['status', id])).code).toBe(0);
  });

  it('unknown id, ambiguous prefix, pause or stop of a finished goal', async () => {
    const [first, second] = await Promise.all([repo(), repo()]);
    const sandbox = await goaldSandbox();
    const one = await sandbox.run(['start', 'one', '-C', first.dir, ...FAST, '--check', 'test -f a', '--agent', 'touch a', '--wait', '--json']);
    const two = await sandbox.run(['start', 'two', '-C', second.dir, ...FAST, '--check', 'test -f a', '--agent', 'touch a', '--wait', '--json']);
    expect([one.code, two.code]).toEqual([0, 0]);
    const [idOne, idTwo] = [one, two].map((run) => String(parseJsonLines(run.stdout)[0]?.id));
    let common = 0;
    while (idOne?.[common] === idTwo?.[common]) common += 1;

    expectOneLineError(await sandbox.run(['status', 'nosuchgoal']), /no goal matches "nosuchgoal"/);
    expectOneLineError(await sandbox.run(['pause', 'nosuchgoal']), /no goal matches "nosuchgoal"/);
    expectOneLineError(await sandbox.run(['stop', (idOne ?? '').slice(0, common)]), /matches 2 goals.*type more of the id/);
    expectOneLineError(await sandbox.run(['pause', idOne ?? '']), new RegExp(`goal ${idOne} already achieved`));
    expectOneLineError(await sandbox.run(['resume', idOne ?? '']), /already achieved/);
    expectOneLineError(await sandbox.run(['stop', idTwo ?? '']), /already achieved.*nothing to stop/);
    // A unique prefix works.
    const shown = await sandbox.run(['show', (idTwo ?? '').slice(0, common + 1), '--json']);
    expect(shown.code).toBe(0);
    const shownJson: unknown = JSON.parse(shown.stdout);
    expect(shownJson).toMatchObject({ goal: { id: idTwo } });
  });
});

describe('the control socket', () => {
  it('answers malformed requests with 4xx error envelopes and leaves a running goal undisturbed', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['survive the fuzz', '-C', workspace.dir, ...FAST, '--check', stepsCheck(1), '--agent', agent.command]);
    await waitForPidFile(agent.agentPidFile(1));
    const json = { 'Content-Type': 'application/json' };

    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'POST', '/v1/goals', '{"dir": ', json), 400)).toBe('bad-request');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'POST', '/v1/goals', '[1,2,3]', json), 400)).toBe('bad-request');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'POST', '/v1/goals', JSON.stringify({ dir: 'relative', flags: {} }), json), 400)).toBe('bad-request');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'GET', '/v1/nope'), 404)).toBe('not-found');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'GET', '/v2/goals'), 404)).toBe('not-found');
    const wrongMethod = await rawRequest(sandbox.socket, 'DELETE', '/v1/goals');
    expect(expectErrorEnvelope(wrongMethod, 405)).toBe('bad-request');
    expect(wrongMethod.headers.allow).toBe('GET, POST');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'PUT', `/v1/goals/${id}/pause`, '{}', json), 405)).toBe('bad-request');
    expect(expectErrorEnvelope(await rawOversizedRequest(sandbox.socket, '/v1/goals', 1024 * 1024 + 1), 413)).toBe('bad-request');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'GET', '/v1/goals/nosuchgoal'), 404)).toBe('not-found');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'POST', `/v1/goals/${id}/pause`, '{"now":"yes"}', json), 400)).toBe('bad-request');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'POST', `/v1/goals/${id}/resume`, '{}', json), 409)).toBe('conflict');
    expect(expectErrorEnvelope(await rawRequest(sandbox.socket, 'GET', '/v1/goals/..%2F..%2Fetc/events'), 400)).toBe('bad-request');

    // The goal never noticed: its agent still runs, and it finishes normally.
    const ping = await rawRequest(sandbox.socket, 'GET', '/v1/ping');
    expect(ping.status).toBe(200);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'active', phase: 'running' });
    await agent.open(1);
    expect((await waitForFinished(sandbox, id)).status).toBe('achieved');
  });

  it('is a 0600 socket in a 0700 directory that curl --unix-socket can talk to', async () => {
    const sandbox = await goaldSandbox();
    const started = await sandbox.run(['daemon']);
    expect(started.code).toBe(0);
    expect(started.stdout).toContain(sandbox.socket);
    expect((await stat(sandbox.socket)).isSocket()).toBe(true);
    expect((await stat(sandbox.socket)).mode & 0o777).toBe(0o600);
    expect((await stat(sandbox.home)).mode & 0o777).toBe(0o700);

    const curl = spawnSync('curl', ['--version']);
    if (curl.error !== undefined) return; // no curl on this machine: the socket checks above still ran
    const ping = spawnSync('curl', ['-sS', '--max-time', '5', '--unix-socket', sandbox.socket, 'http://x/v1/ping'], { encoding: 'utf8' });
    expect(ping.status).toBe(0);
    expect(JSON.parse(ping.stdout)).toMatchObject({ ok: true, pid: sandboxDaemonPid(sandbox), home: sandbox.home });
  });

  it('`daemon stop` shuts the daemon down and removes its socket', async () => {
    const sandbox = await goaldSandbox();
    await sandbox.run(['daemon']);
    const pid = sandboxDaemonPid(sandbox) as number;
    expect(isProcessRunning(pid)).toBe(true);
    const stopped = await sandbox.run(['daemon', 'stop']);
    expect(stopped.code).toBe(0);
    await waitUntilGone(pid, 8_000);
    expect(existsSync(sandbox.socket)).toBe(false);
    expect(existsSync(`${sandbox.home}/daemon.pid`)).toBe(false);
    const status = await sandbox.run(['daemon', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: false });
    await waitUntil('nothing listening', () => !existsSync(sandbox.socket));
  });
});
