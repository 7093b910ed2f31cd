// What `goald status` asks the daemon for: without a goal named, the live goals only; with one named, the
// goals whose id starts with it (a prefix may name a finished one). Either way the reply does not grow with
// the home's history, which keeps every finished goal.

import { describe, expect, it } from 'vitest';

import { runPause, runResume, runStatus, runStop } from '../../src/cli/commands/control.js';
import type { CliIO } from '../../src/cli/io.js';
import { startTestDaemon } from '../daemon/support.js';
import { FakeGoalHost } from '../helpers/fake-goal-host.js';
import { goaldSandbox } from '../helpers/run-goald.js';

/** A host with one active goal and `finished` achieved ones, recording the filter of each listGoals. */
function hostWithHistory(finished: number): { host: FakeGoalHost; filters: unknown[] } {
  const host = new FakeGoalHost();
  host.addGoal({ id: 'glive00000001', status: 'active', phase: 'running' });
  for (let index = 0; index < finished; index++) host.addGoal({ id: `gdone${String(index).padStart(8, '0')}`, status: 'achieved', phase: 'achieved' });
  const filters: unknown[] = [];
  const list = host.listGoals.bind(host);
  host.listGoals = (filter = {}) => {
    filters.push(filter);
    return list(filter);
  };
  return { host, filters };
}

function captureIO(env: NodeJS.ProcessEnv): { io: CliIO; out: string[] } {
  const out: string[] = [];
  return { io: { out: (text) => out.push(text), err: () => undefined, env, cwd: '/' }, out };
}

describe('goald status', () => {
  it('asks the daemon for the live goals only, and shows them', async () => {
    const { host, filters } = hostWithHistory(30);
    const daemon = await startTestDaemon(host);
    const { io, out } = captureIO({ GOALD_SOCKET: daemon.socketPath, GOALD_HOME: daemon.dir });
    expect(await runStatus(undefined, { json: true }, io)).toBe(0);
    expect(filters).toEqual([{ status: ['active', 'paused'] }]);
    const shown = JSON.parse(out.join('')) as { goals: Array<{ id: string }> };
    expect(shown.goals.map((goal) => goal.id)).toEqual(['glive00000001']);
  });

  it('with a goal named, asks for the goals its id starts with, so a finished one is found by its prefix', async () => {
    const { host, filters } = hostWithHistory(3);
    const daemon = await startTestDaemon(host);
    const { io, out } = captureIO({ GOALD_SOCKET: daemon.socketPath, GOALD_HOME: daemon.dir });
    expect(await runStatus('gdone00000002', { json: true }, io)).toBe(0);
    expect(filters).toEqual([{ idPrefix: 'gdone00000002' }]);
    const shown = JSON.parse(out.join('')) as { goals: Array<{ id: string; status: string }> };
    expect(shown.goals).toEqual([expect.objectContaining({ id: 'gdone00000002', status: 'achieved' })]);
    // A prefix of several is ambiguous, one of none not found, as when every goal was listed.
    await expect(runStatus('gdone', { json: true }, io)).rejects.toMatchObject({ code: 'ambiguous', message: '"gdone" matches 3 goals (gdone00000000, gdone00000001, gdone00000002)' });
    await expect(runStatus('gnone', { json: true }, io)).rejects.toMatchObject({ code: 'not-found', message: 'no goal matches "gnone"' });
  });

  it('pause, resume and stop ask for the goals the reference can name, not the whole history', async () => {
    const { host, filters } = hostWithHistory(5);
    const daemon = await startTestDaemon(host);
    const { io, out } = captureIO({ GOALD_SOCKET: daemon.socketPath, GOALD_HOME: daemon.dir });
    expect(await runPause('glive', {}, io)).toBe(0);
    expect(await runResume('glive', io)).toBe(0);
    expect(await runStop('glive00000001', io)).toBe(0);
    expect(filters).toEqual([{ idPrefix: 'glive' }, { idPrefix: 'glive' }, { idPrefix: 'glive00000001' }]);
    expect(out.at(-1)).toBe('goal glive00000001 stopped');
  });

  it('the executable sends one request for a plain status, and shows its reply', async () => {
    const { host, filters } = hostWithHistory(2);
    const daemon = await startTestDaemon(host);
    const sandbox = await goaldSandbox();
    const env = { ...sandbox.env, GOALD_SOCKET: daemon.socketPath };
    const json = await sandbox.run(['status', '--json'], { env });
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { goals: Array<{ id: string }> }).goals.map((goal) => goal.id)).toEqual(['glive00000001']);
    const box = await sandbox.run(['status'], { env });
    expect(box.code).toBe(0);
    expect(box.stdout).toContain('glive00000001');
    expect(filters).toEqual([{ status: ['active', 'paused'] }, { status: ['active', 'paused'] }]);
  });

  it('with no daemon listening, the executable shows the stored state', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['status']);
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 0,
      stdout: 'no active goals (goald history lists finished ones)\n',
      stderr: 'goald: the daemon is not running; showing stored state\n',
    });
  });
});
