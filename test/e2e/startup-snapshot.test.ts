// The `goald` command (bin/goald) and the start-up snapshot it starts a foreground goal from: the first
// such start runs as usual and has one built in GOALD_HOME at its end; the next starts from it and does
// exactly what a start without it does; and a snapshot taken for another node or another goald, or with
// Node options set, is never used. Real processes throughout: the launcher under /bin/sh through a
// symbolic link (as npm installs it), the background build, node --snapshot-blob. Which way a goal
// started is read from its agent's parent's command line (/proc/$PPID/cmdline: the goald process).

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, test } from 'vitest';

import { gitdir } from '../helpers/gitdir.js';
import { runProcess, type ProcessRun } from '../helpers/processes.js';
import { goaldSandbox, repoRoot, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

const launcher = path.join(repoRoot, 'bin', 'goald');
const bundle = path.join(repoRoot, 'dist', 'bundle');

interface Launch {
  sandbox: GoaldSandbox;
  /** bin/goald through a symbolic link in another directory, as npm links a package's bin. */
  goald: string;
  env: NodeJS.ProcessEnv;
}

async function launch(): Promise<Launch> {
  const sandbox = await goaldSandbox();
  const goald = path.join(sandbox.root, 'bin', 'goald');
  execFileSync('mkdir', ['-p', path.dirname(goald)]);
  symlinkSync(launcher, goald);
  const env: NodeJS.ProcessEnv = { ...sandbox.env };
  delete env.NODE_OPTIONS; // vitest's workers may carry some; users mostly have none
  return { sandbox, goald, env };
}

function snapshotDirOf(home: string): string {
  const startup = path.join(home, 'cache', 'startup');
  const [dir] = readdirSync(startup);
  if (dir === undefined) throw new Error(`no snapshot directory in ${startup}`);
  return path.join(startup, dir);
}

// The build a start asks for runs detached once that start exits: done when its identity file is written
// and its lock is gone (the process ends right after).
async function waitForSnapshot(home: string): Promise<string> {
  return waitUntil(
    'the start-up snapshot to be built',
    () => {
      const dir = snapshotDirOf(home);
      return existsSync(path.join(dir, 'identity')) && !existsSync(path.join(dir, '.building')) && dir;
    },
    60_000,
  );
}

/** A one-turn foreground goal whose agent records its goald process's command line; that line, and the run. */
async function startGoal(at: Launch, extra: { env?: NodeJS.ProcessEnv; args?: string[]; cwd?: string } = {}): Promise<{ run: ProcessRun; goaldArgv: string[] }> {
  const repo = await gitdir({ initialCommit: true });
  await repo.write('.git/info/exclude', 'started-by\n');
  const args = ['start', 'started-by exists', '--foreground', '--agent', "tr '\\0' '\\n' < /proc/$PPID/cmdline > started-by", '--check', 'test -f started-by', '--evaluator', 'none', '--cooldown', '0', ...(extra.args ?? [])];
  const run = await runProcess(at.goald, extra.cwd === undefined ? [...args, '-C', repo.dir] : args, { cwd: extra.cwd ?? at.sandbox.root, env: { ...at.env, ...extra.env } });
  const recorded = path.join(extra.cwd ?? repo.dir, 'started-by');
  const goaldArgv = existsSync(recorded) ? readFileSync(recorded, 'utf8').split('\n').filter((arg) => arg !== '') : [];
  return { run, goaldArgv };
}

const fromSnapshot = (argv: readonly string[]): boolean => argv.includes('--snapshot-blob');

describe('goald start --foreground from a start-up snapshot', () => {
  test('the first start builds one at its end, the next starts from it and does the same', { timeout: 120_000 }, async () => {
    const at = await launch();
    const first = await startGoal(at, { args: ['--json'] });
    expect(first.run.code, first.run.stderr).toBe(0);
    expect(first.goaldArgv.length).toBeGreaterThan(0);
    expect(fromSnapshot(first.goaldArgv)).toBe(false);

    const dir = await waitForSnapshot(at.sandbox.home);
    expect(readdirSync(dir).sort()).toEqual(['identity', 'start.blob']);
    // Private, as everything goald later trusts: nobody else may plant the code it runs.
    expect(execFileSync('stat', ['-c', '%a', dir, path.join(dir, 'start.blob'), path.join(dir, 'identity')], { encoding: 'utf8' }).split('\n').filter(Boolean)).toEqual(['700', '600', '600']);

    const second = await startGoal(at, { args: ['--json'] });
    expect(second.run.code, second.run.stderr).toBe(0);
    expect(fromSnapshot(second.goaldArgv)).toBe(true);
    // The same events, in the same order, as from the start without it (ids and times aside).
    const shape = (stdout: string): unknown[] =>
      stdout
        .trim()
        .split('\n')
        .map((line) => {
          const event = JSON.parse(line) as Record<string, unknown>;
          return [event.type, event.status ?? event.outcome ?? null];
        });
    expect(shape(second.run.stdout)).toEqual(shape(first.run.stdout));
    expect(second.run.stderr).toBe('');
  });

  test('from the snapshot, a start without -C works in its own directory, and errors exit as usual', { timeout: 120_000 }, async () => {
    const at = await launch();
    await startGoal(at);
    await waitForSnapshot(at.sandbox.home);

    // The snapshot was taken in another directory: the goal's workspace is still where goald was started.
    const repo = await gitdir({ initialCommit: true });
    await repo.write('.git/info/exclude', 'started-by\n');
    const here = await startGoal(at, { cwd: repo.dir });
    expect(here.run.code, here.run.stderr).toBe(0);
    expect(fromSnapshot(here.goaldArgv)).toBe(true);
    expect(here.run.stdout).toContain('Goal Achieved');

    // A bad value: the full CLI (loaded at run time, beside the snapshot's modules) reports it, exit 2.
    const bad = await runProcess(at.goald, ['start', 'x', '--foreground', '--max-turns', 'many', '-C', repo.dir], { cwd: repo.dir, env: at.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/max-turns/);
    // Not a git repository: goald's own error, exit 2, from the snapshot's modules.
    const notRepo = await runProcess(at.goald, ['start', 'x', '--foreground', '--agent', 'true', '--check', 'true', '--evaluator', 'none', '-C', at.sandbox.root], { cwd: at.sandbox.root, env: at.env });
    expect(notRepo.code).toBe(2);
    expect(notRepo.stderr).toMatch(/git/);
  });

  test('a snapshot for another node or goald, under Node options, or that others could write is not used; other commands pass through', { timeout: 120_000 }, async () => {
    const at = await launch();
    await startGoal(at);
    const dir = await waitForSnapshot(at.sandbox.home);
    const identity = readFileSync(path.join(dir, 'identity'), 'utf8');

    // NODE_OPTIONS may carry V8 flags the snapshot was not built with (Node would refuse to start).
    const withOptions = await startGoal(at, { env: { NODE_OPTIONS: '--no-warnings' } });
    expect(withOptions.run.code, withOptions.run.stderr).toBe(0);
    expect(fromSnapshot(withOptions.goaldArgv)).toBe(false);
    // Turned off.
    const off = await startGoal(at, { env: { GOALD_STARTUP_SNAPSHOT: 'off' } });
    expect(off.run.code, off.run.stderr).toBe(0);
    expect(fromSnapshot(off.goaldArgv)).toBe(false);

    // Built for another node binary (an upgrade in place gives the file a new inode or change time), or
    // for another build of goald: not used, and rebuilt at that start's end.
    for (const line of [0, 1]) {
      const lines = identity.split('\n');
      lines[line] = `1:2:3:4:${line}`;
      writeFileSync(path.join(dir, 'identity'), lines.join('\n'));
      const stale = await startGoal(at);
      expect(stale.run.code, stale.run.stderr).toBe(0);
      expect(fromSnapshot(stale.goaldArgv)).toBe(false);
      await waitUntil('the snapshot rebuilt', () => readFileSync(path.join(dir, 'identity'), 'utf8') === identity, 60_000);
      const again = await startGoal(at);
      expect(fromSnapshot(again.goaldArgv)).toBe(true);
    }

    // A blob or directory others could write (made so by hand) is not run; the blob is replaced by a private
    // one at that start's end (a directory goald never chmods: it stays unused until it is made private).
    execFileSync('chmod', ['644', path.join(dir, 'start.blob')]);
    const readable = await startGoal(at);
    expect(readable.run.code, readable.run.stderr).toBe(0);
    expect(fromSnapshot(readable.goaldArgv)).toBe(false);
    await waitUntil('the blob made private again', () => execFileSync('stat', ['-c', '%a', path.join(dir, 'start.blob')], { encoding: 'utf8' }).trim() === '600', 60_000);
    expect(fromSnapshot((await startGoal(at)).goaldArgv)).toBe(true);
    execFileSync('chmod', ['770', dir]);
    expect(fromSnapshot((await startGoal(at)).goaldArgv)).toBe(false);
    execFileSync('chmod', ['700', dir]);
    expect(fromSnapshot((await startGoal(at)).goaldArgv)).toBe(true);

    // Commands other than a foreground start run the bundle through the same file, read as JavaScript.
    expect(await runProcess(at.goald, ['--version'], { env: at.env })).toMatchObject({ code: 0, stderr: '' });
    const status = await runProcess(at.goald, ['status', '--json'], { env: at.env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ goals: [] });
  });
});

test("the snapshot's modules ask nothing of their process or machine as they load", () => {
  const out = execFileSync(process.execPath, [path.join(repoRoot, 'test', 'fixtures', 'startup-snapshot', 'audit-load.mjs')], {
    env: { PATH: process.env.PATH, BUNDLE: bundle },
    encoding: 'utf8',
  });
  expect(out).toMatch(/^loaded \d+\n$/);
  expect(Number(/^loaded (\d+)/.exec(out)?.[1])).toBeGreaterThan(20);
});
