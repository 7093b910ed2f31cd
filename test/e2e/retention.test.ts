// End to end: `goald prune` on real goals run by the built binary — without a daemon (directly on the
// store) and through the daemon (POST /v1/prune) — measured with du before and after; and daemon.log
// rotation by size.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGoals, submitGoal, waitForGoal } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';

// Each turn prints 120 KiB (under the per-turn token limit), so a goal's directory is worth measuring.
const CHATTY_AGENT = "node -e \"process.stdout.write('x'.repeat(120 * 1024) + '\\n')\"; echo done > done.txt";

/** Disk usage of `dir` in KiB, as du counts it. */
function duKiB(dir: string): number {
  const run = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return Number(run.stdout.split(/\s/)[0]);
}

function goalDirs(sandbox: GoaldSandbox): string[] {
  const dir = path.join(sandbox.home, 'goals');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

async function runFinishedGoal(sandbox: GoaldSandbox, how: 'foreground' | 'wait'): Promise<string> {
  const repo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  const run = await sandbox.run(['start', 'done.txt exists', `--${how}`, '--cooldown', '0', '-C', repo.dir, '--check', 'test -f done.txt', '--agent', CHATTY_AGENT, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const finished = parseJsonLines(run.stdout).find((event) => event.type === 'goal.finished');
  expect(finished).toMatchObject({ status: 'achieved' });
  return String(finished?.id);
}

function pruneJson(stdout: string): { dryRun: boolean; goals: Array<{ id: string; bytes: number }>; bytes: number; kept: number } {
  const line = parseJsonLines(stdout).find((event) => event.type === 'prune.finished');
  expect(line).toBeDefined();
  return line as unknown as ReturnType<typeof pruneJson>;
}

describe('goald prune', () => {
  it('without a daemon: --dry-run deletes nothing; then the oldest finished goals go and du shrinks by what it reported', async () => {
    const sandbox = await goaldSandbox();
    const ids = [];
    for (let n = 0; n < 3; n += 1) ids.push(await runFinishedGoal(sandbox, 'foreground'));
    expect(goalDirs(sandbox)).toEqual([...ids].sort());

    // The default limits (finished over 30 days ago, beyond the 10 newest) leave fresh goals alone.
    const defaults = await sandbox.run(['prune']);
    expect(defaults.code, defaults.stderr).toBe(0);
    expect(defaults.stdout).toMatch(/pruned 0 finished goals, freed 0 B \(3 finished kept\)/);

    const before = duKiB(sandbox.home);
    const dry = await sandbox.run(['prune', '--older-than', '0', '--keep', '1', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = pruneJson(dry.stdout);
    expect(planned).toMatchObject({ dryRun: true, kept: 1 });
    expect(planned.goals.map((goal) => goal.id).sort()).toEqual(ids.slice(0, 2).sort());
    expect(planned.bytes).toBeGreaterThan(2 * 120 * 1024);
    expect(goalDirs(sandbox)).toEqual([...ids].sort());
    expect(duKiB(sandbox.home)).toBe(before);

    const real = await sandbox.run(['prune', '--older-than', '0', '--keep', '1']);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/pruned 2 finished goals, freed \d+(\.\d)? KiB \(1 finished kept\)/);
    expect(goalDirs(sandbox)).toEqual([ids[2]]);
    const after = duKiB(sandbox.home);
    // What it said it freed is what du lost (state.json shrank a little too).
    expect(before - after).toBeGreaterThanOrEqual(Math.floor(planned.bytes / 1024) - 8);
    expect(before - after).toBeLessThanOrEqual(Math.ceil(planned.bytes / 1024) + 64);
    const history = parseJsonLines((await sandbox.run(['history', '--json'])).stdout)[0] as { goals: Array<{ id: string }> };
    expect(history.goals.map((goal) => goal.id)).toEqual([ids[2]]);
  });

  it('through the daemon: never the active goal whose agent is still running, only the finished ones', async () => {
    const sandbox = await goaldSandbox();
    const finished = [await runFinishedGoal(sandbox, 'wait'), await runFinishedGoal(sandbox, 'wait')];
    const busyRepo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const pidFile = path.join(sandbox.root, 'agent.pid');
    const { id: live } = await submitGoal(sandbox, ['never met', '-C', busyRepo.dir, '--check', 'false', '--agent', `echo $$ > ${pidFile}; exec sleep 600`]);
    await waitForGoal(sandbox, live, 'to run its agent', (goal) => goal.runningAgent !== null);

    const pruned = await sandbox.run(['prune', '--older-than', '0', '--keep', '0', '--json']);
    expect(pruned.code, pruned.stderr).toBe(0);
    const result = pruneJson(pruned.stdout);
    expect(result.goals.map((goal) => goal.id).sort()).toEqual([...finished].sort());
    expect(goalDirs(sandbox)).toEqual([live]);
    expect(readFileSync(path.join(sandbox.home, 'daemon.log'), 'utf8')).toMatch(/pruned 2 finished goal/);
    const status = parseJsonLines((await sandbox.run(['status', live, '--json'])).stdout)[0] as { goals: Array<{ status: string }> };
    expect(status.goals[0]?.status).toBe('active');
  });

  it('refuses a bad --keep or --older-than with exit 2 and the fix', async () => {
    const sandbox = await goaldSandbox();
    const keep = await sandbox.run(['prune', '--keep', 'ten']);
    expect(keep.code).toBe(2);
    expect(keep.stderr).toMatch(/--keep: "ten" is not a whole number of 0 or more — use e\.g\. --keep 10/);
    const age = await sandbox.run(['prune', '--older-than', '30 days']);
    expect(age.code).toBe(2);
    expect(age.stderr).toMatch(/--older-than: "30 days" is not a duration/);
  });
});

describe('summary.files', () => {
  it('a hostile agent that touches hundreds of files: 200 are listed, the rest counted, the box says how many more', async () => {
    const sandbox = await goaldSandbox();
    const repo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const agent = 'mkdir -p many && for i in $(seq 1 260); do echo $i > many/f$i.txt; done';
    const run = await sandbox.run(['start', 'many files', '--foreground', '--cooldown', '0', '-C', repo.dir, '--check', 'test -d many', '--agent', agent]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/and 252 more/);
    const [goal] = readGoals(sandbox);
    expect(goal?.summary.files).toHaveLength(200);
    expect(goal?.summary.filesOmitted).toBe(60);
  });
});

describe('daemon.log', () => {
  it('rotates past 5 MB when the daemon writes to it, keeping the old log as daemon.log.1 (0600)', async () => {
    const sandbox = await goaldSandbox();
    await mkdir(sandbox.home, { recursive: true, mode: 0o700 });
    const log = path.join(sandbox.home, 'daemon.log');
    const old = `${'an old line\n'.repeat(440_000)}`; // 5.28 MB
    await writeFile(log, old, { mode: 0o600 });
    const started = await sandbox.run(['daemon']);
    expect(started.code, started.stderr).toBe(0);
    expect(readFileSync(`${log}.1`, 'utf8')).toBe(old);
    expect(readFileSync(log, 'utf8')).toMatch(/listening on/);
    expect(statSync(log).size).toBeLessThan(64 * 1024);
    expect(statSync(log).mode & 0o777).toBe(0o600);
  });
});
