// End to end (issue 12): `goald race --foreground` runs the race in the CLI's own process, no daemon. `first`:
// the first member to achieve wins and the rest are stopped, a hostile one that ignores SIGTERM included;
// `best`: the smaller diff without an evaluator; none achieved exits 1; Ctrl-C stops every member; a daemon
// started meanwhile leaves the foreground race alone.

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readGoal, waitForPidFile } from '../helpers/daemon.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';
import { waitUntil } from '../helpers/wait.js';
import { goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';

const COMMON = ['--cooldown', '0', '--evaluator', 'none', '--check', 'test -f done.txt'];
const IGNORE_SIGTERM = fileURLToPath(new URL('../fixtures/agents/ignore-sigterm.mjs', import.meta.url));

interface RaceLine {
  type: string;
  id: string;
  status?: string;
  winner?: string | null;
  members: { agent: string; goalId: string | null; status: string }[];
}

async function repo(): Promise<Gitdir> {
  return gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
}

async function raceIds(sandbox: GoaldSandbox): Promise<string[]> {
  return (await readdir(path.join(sandbox.home, 'races')).catch(() => [])).map((name) => name.replace(/\.json$/, ''));
}

function expectNoDaemon(sandbox: GoaldSandbox): void {
  expect(existsSync(sandbox.socket)).toBe(false);
  expect(existsSync(path.join(sandbox.home, 'daemon.log'))).toBe(false);
}

describe('goald race --foreground', () => {
  it('--pick first: runs here, the first to achieve wins, the others are stopped (one ignores SIGTERM); JSON between race.submitted and race.finished', { timeout: 60_000 }, async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const signals = path.join(sandbox.root, 'signals');
    await mkdir(signals);
    // The slow member waits for a gate nobody opens; the hostile one ignores SIGTERM (only SIGKILL ends it);
    // the fast one waits until both run, then achieves.
    const slow = `touch ${signals}/slow; while [ ! -f ${signals}/never ]; do sleep 0.05; done`;
    const hostile = `touch ${signals}/hostile; exec node ${IGNORE_SIGTERM}`;
    const fast = `while [ ! -f ${signals}/slow ] || [ ! -f ${signals}/hostile ]; do sleep 0.02; done; echo fast > done.txt`;
    const run = await sandbox.run(['race', 'done.txt exists', '-C', git.dir, ...COMMON, '--agent', slow, '--agent', hostile, '--agent', fast, '--foreground', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const lines = parseJsonLines(run.stdout);
    const first = lines[0] as unknown as RaceLine;
    const last = lines.at(-1) as unknown as RaceLine;
    expect(first).toMatchObject({ type: 'race.submitted', pick: 'first' });
    expect(last).toMatchObject({ type: 'race.finished', id: first.id, status: 'picked' });
    const [slowMember, hostileMember, fastMember] = last.members;
    expect(last.winner).toBe(fastMember?.goalId);
    expect([slowMember?.status, hostileMember?.status, fastMember?.status]).toEqual(['failed', 'failed', 'achieved']);
    // Every member's events are printed, each naming its goal; each member finished before the last line.
    const ids = last.members.map((member) => String(member.goalId));
    for (const id of ids) {
      expect(lines.some((line) => line.type === 'goal.started' && line.id === id)).toBe(true);
      expect(lines.findIndex((line) => line.type === 'goal.finished' && line.id === id)).toBeLessThan(lines.length - 1);
    }
    for (const member of [slowMember, hostileMember]) {
      const goal = readGoal(sandbox, String(member?.goalId));
      expect(goal).toMatchObject({ status: 'failed', reason: 'stopped', owner: { kind: 'foreground' } });
      expect(existsSync(goal.workspace)).toBe(false);
    }
    expect(await git.git('show', `goald/${String(fastMember?.goalId)}:done.txt`)).toBe('fast');
    expect(existsSync(git.path('done.txt'))).toBe(false);
    expectNoDaemon(sandbox);
    // The race is stored like a daemon's: show and apply take it.
    const shown = await sandbox.run(['show', first.id]);
    expect(shown.stdout).toContain(`race ${first.id} · pick first · picked`);
    const applied = await sandbox.run(['apply', first.id, '-C', git.dir]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await readFile(git.path('done.txt'), 'utf8')).toBe('fast\n');
  });

  it('--pick best without an evaluator: every member finishes, the smaller diff wins; text like start --foreground', { timeout: 60_000 }, async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['race', 'done.txt exists', '-C', git.dir, ...COMMON, '--pick', 'best', '--agent', 'printf "a\\na\\n" > done.txt', '--agent', 'echo b > done.txt', '--foreground']);
    expect(run.code, run.stderr).toBe(0);
    const [id] = await raceIds(sandbox);
    const out = run.stdout.split('\n');
    expect(out[0]).toMatch(new RegExp(`^race ${String(id)} running here in ${git.dir}: 2 members, pick best$`));
    const record = JSON.parse(await readFile(path.join(sandbox.home, 'races', `${String(id)}.json`), 'utf8')) as RaceLine & { owner: unknown };
    expect(record.owner).toEqual({ kind: 'foreground', pid: expect.any(Number) });
    for (const member of record.members) expect(out.some((line) => line.startsWith(`${String(member.goalId)}  turn 1/`))).toBe(true);
    expect(record.winner).toBe(record.members[1]?.goalId);
    expect(run.stdout).toMatch(new RegExp(`${String(record.members[1]?.goalId)} +achieved +echo b > done.txt  1 lines  ← picked`));
    expect(run.stdout).toContain(`apply it: goald apply ${String(id)}`);
    expectNoDaemon(sandbox);
  });

  it('exits 1 when no member achieved the goal', { timeout: 60_000 }, async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['race', 'never', '-C', git.dir, ...COMMON, '--max-turns', '1', '--agent', 'echo x > x.txt', '--agent', 'true', '--foreground', '--json']);
    expect(run.code, run.stderr).toBe(1);
    expect(parseJsonLines(run.stdout).at(-1)).toMatchObject({ type: 'race.finished', status: 'none', winner: null, reason: 'no member achieved the goal' });
  });

  it('a daemon started meanwhile leaves the race alone; Ctrl-C stops every member and the race ends with none picked', { timeout: 60_000 }, async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const gate = (name: string): string => `echo $$ > ${sandbox.root}/${name}.pid; while [ ! -f ${sandbox.root}/never ]; do sleep 0.05; done`;
    const running = sandbox.run(['race', 'never', '-C', git.dir, ...COMMON, '--agent', gate('one'), '--agent', gate('two'), '--foreground', '--json']);
    const agents = [await waitForPidFile(path.join(sandbox.root, 'one.pid'), 30_000), await waitForPidFile(path.join(sandbox.root, 'two.pid'), 30_000)];
    const [id] = await raceIds(sandbox);
    const record = JSON.parse(await readFile(path.join(sandbox.home, 'races', `${String(id)}.json`), 'utf8')) as RaceLine & { owner: { pid: number } };

    expect((await sandbox.run(['daemon'])).code).toBe(0);
    const status = await sandbox.run(['status']);
    expect(status.code, status.stderr).toBe(0);
    // The daemon neither resumed nor ended it: it is the foreground process's.
    expect(await readFile(path.join(sandbox.home, 'daemon.log'), 'utf8')).not.toContain(`race ${String(id)}`);
    for (const pid of agents) expect(() => process.kill(pid, 0)).not.toThrow();

    process.kill(record.owner.pid, 'SIGINT');
    const run = await running;
    expect(run.code, run.stderr).toBe(1);
    const last = parseJsonLines(run.stdout).at(-1) as unknown as RaceLine;
    expect(last).toMatchObject({ type: 'race.finished', id, status: 'none' });
    expect(last.members.map((member) => member.status)).toEqual(['failed', 'failed']);
    for (const member of last.members) {
      const goal = readGoal(sandbox, String(member.goalId));
      expect(goal).toMatchObject({ status: 'failed', reason: 'stopped' });
      expect(existsSync(goal.workspace)).toBe(false);
    }
    await waitUntil('the agents to be gone', () => agents.every((pid) => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }));
  });
});
