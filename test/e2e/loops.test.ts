// End to end: scheduled loops in a real daemon, in real time. Each run is a fresh goal in a real git
// repository; the tests poll `goald loop list --json` / `goald history --json` (never a fixed sleep) and
// every daemon is stopped when its test ends (run-goald.ts).

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { expectToHold, readGoals, submitGoal, waitForPidFile } from '../helpers/daemon.js';
import { waitUntil } from '../helpers/wait.js';
import {
  HOUR_MS,
  ONE_TURN,
  createLoop,
  expectOnGrid,
  expectOneLineError,
  isFinished,
  listLoops,
  loopHistory,
  loopOf,
  promptOf,
  repo,
  rewriteStoredLoops,
  stopDaemon,
  storedLoops,
  waitForRuns,
  waitForStoredLoop,
} from '../helpers/loops.js';
import { goaldSandbox } from '../helpers/run-goald.js';

describe('goald loop', () => {
  it('a 2 s loop fires at least twice, names itself in each prompt, shows in `loop list`, and stops cleanly', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const loop = await createLoop(sandbox, ['2s', 'every tick is recorded', '-C', workspace.dir, ...ONE_TURN, '--agent', 'echo "$GOALD_TURN" >> ticks.txt']);
    expect(loop.workspace).toBe(workspace.dir);

    const runs = await waitForRuns(sandbox, loop.id, 'two finished runs', (goals) => goals.filter(isFinished).length >= 2);
    const [first, second] = runs;
    for (const [index, goal] of [first, second].entries()) {
      expect(goal?.loopId).toBe(loop.id);
      expect(goal?.condition).toBe('every tick is recorded');
      expect(goal).toMatchObject({ status: 'failed', reason: 'max-turns' });
      // The ancestry block names the loop (and which run this is); every run is a fresh goal.
      expect(await promptOf(sandbox, goal?.id ?? '')).toContain(`- Loop: loop ${loop.id} (every 2s), run ${index + 1}`);
    }
    expect(first?.id).not.toBe(second?.id);

    await waitForStoredLoop(sandbox, loop.id, 'with a finished last run', (candidate) => candidate.runs >= 2 && candidate.lastOutcome === 'failed');
    const listed = await loopOf(sandbox, loop.id);
    expect(listed).toMatchObject({ workspace: workspace.dir, every: '2s', condition: 'every tick is recorded', source: 'cli', stopped: false });
    expect(listed.runs).toBeGreaterThanOrEqual(2);
    expect((await loopHistory(sandbox, loop.id)).map((goal) => goal.id)).toContain(listed.lastGoalId);
    expect(Date.parse(listed.nextRunAt ?? '')).toBeGreaterThan(Date.parse(listed.lastRunAt ?? ''));
    expectOnGrid(listed, 2_000);
    const human = await sandbox.run(['loop', 'list']);
    expect(human.stdout).toContain('created with goald loop:');
    expect(human.stdout).toMatch(new RegExp(`${listed.id}\\s+every 2s\\s+every tick is recorded .* runs \\d+ · skipped \\d+ · last g\\S+ (active|failed) · next \\S+`));

    const stop = await sandbox.run(['loop', 'stop', loop.id]);
    expect(stop.stderr).toBe('');
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`loop ${loop.id} stopped`);
    // A run that was starting as the loop stopped has started by now; nothing new may start afterwards.
    const count = readGoals(sandbox).filter((goal) => goal.loopId === loop.id).length;
    await expectToHold('no new run for two more cadences', 4_500, () => readGoals(sandbox).filter((goal) => goal.loopId === loop.id).length === count);
    expect((await listLoops(sandbox, { all: false })).loops.map((candidate) => candidate.id)).not.toContain(loop.id);
    expect(await loopOf(sandbox, loop.id)).toMatchObject({ stopped: true, waiting: false });
    expect((await loopHistory(sandbox, loop.id)).length).toBe(count);
    expectOneLineError(await sandbox.run(['loop', 'run', loop.id]), /is stopped/);
  });

  it('waits while a goal is active in the workspace, counts the skipped runs, and runs once the workspace is free', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const pidFile = path.join(sandbox.root, 'long.pid');
    const long = await submitGoal(sandbox, ['the long goal ends', '-C', workspace.dir, '--check', 'exit 1', '--cooldown', '0', '--agent', `echo $$ > ${pidFile}; exec sleep 60`]);
    await waitForPidFile(pidFile);

    const loop = await createLoop(sandbox, ['1s', 'the loop gets its turn', '-C', workspace.dir, ...ONE_TURN, '--agent', 'true']);
    await waitForStoredLoop(sandbox, loop.id, 'waiting', (candidate) => candidate.waiting);
    // Further due runs do not queue up: one run waits, the rest count as skipped.
    const counted = await waitForStoredLoop(sandbox, loop.id, 'skipping', (candidate) => candidate.skipped >= 1);
    await waitForStoredLoop(sandbox, loop.id, 'skipping more', (candidate) => candidate.skipped > counted.skipped);
    expect(await loopOf(sandbox, loop.id)).toMatchObject({ waiting: true, runs: 0, lastGoalId: null });
    const human = await sandbox.run(['loop', 'list']);
    expect(human.stdout).toMatch(/runs 0 · skipped [1-9]\d* · never run · next \S+ · waiting/);
    expect(await loopHistory(sandbox, loop.id)).toEqual([]);

    const stopped = await sandbox.run(['stop', long.id]);
    expect(stopped.code, stopped.stderr).toBe(0);
    const [run] = await waitForRuns(sandbox, loop.id, 'its first run to finish', (goals) => goals.length >= 1 && isFinished(goals[0] as GoalRecord));
    const finishedAt = readGoals(sandbox).find((goal) => goal.id === long.id)?.finishedAt ?? '';
    expect(Date.parse(run?.createdAt ?? '')).toBeGreaterThanOrEqual(Date.parse(finishedAt));
    expect(await promptOf(sandbox, run?.id ?? '')).toContain(`- Loop: loop ${loop.id} (every 1s), run 1`);
    const released = await loopOf(sandbox, loop.id);
    expect(released.runs).toBeGreaterThanOrEqual(1);
    expect(released.skipped).toBeGreaterThanOrEqual(2);
  });

  it('persists across a daemon restart: a missed run fires once on start (catch-up once), none with --catch-up skip, then the cadence goes on', async () => {
    const [hourly, skipping, ticking] = await Promise.all([repo(), repo(), repo()]);
    const sandbox = await goaldSandbox();
    const once = await createLoop(sandbox, ['1h', 'caught up once', '-C', hourly.dir, ...ONE_TURN, '--agent', 'true']);
    const skip = await createLoop(sandbox, ['1h', 'missed runs are skipped', '-C', skipping.dir, ...ONE_TURN, '--agent', 'true', '--catch-up', 'skip']);
    const fast = await createLoop(sandbox, ['2s', 'ticks on after a restart', '-C', ticking.dir, ...ONE_TURN, '--agent', 'true']);
    await stopDaemon(sandbox);

    // Without a daemon, `loop list` reads the stored loops.
    const stored = await listLoops(sandbox);
    expect(stored.daemon).toBe(false);
    const fastBefore = stored.loops.find((loop) => loop.id === fast.id) as LoopRecord;
    expect(stored.loops.find((loop) => loop.id === skip.id)).toMatchObject({ catchUp: 'skip', runs: 0, stopped: false });
    // The hourly loops were "down" for 3.5 h: their grid started then, so three slots (2.5 h, 1.5 h and
    // 0.5 h ago) were missed and the next one is 30 min away, far beyond this test.
    const createdAt = Date.now() - 3.5 * HOUR_MS;
    await rewriteStoredLoops(sandbox, (loop) => {
      if (loop.id !== once.id && loop.id !== skip.id) return;
      loop.createdAt = new Date(createdAt).toISOString();
      loop.nextRunAt = new Date(createdAt + HOUR_MS).toISOString();
    });
    // The 2 s loop really misses its slot while the daemon is down.
    await waitUntil('a slot of the 2 s loop to pass', () => Date.now() > Date.parse(fastBefore.nextRunAt ?? '') + 100, 5_000);

    const restarted = await sandbox.run(['daemon']);
    expect(restarted.code, restarted.stderr).toBe(0);
    const caughtUp = await waitForStoredLoop(sandbox, once.id, 'to catch up', (loop) => loop.lastOutcome === 'failed');
    expect(caughtUp).toMatchObject({ runs: 1, skipped: 2, waiting: false, nextRunAt: new Date(createdAt + 4 * HOUR_MS).toISOString() });
    const skipped = await waitForStoredLoop(sandbox, skip.id, 'to skip the missed slots', (loop) => loop.skipped === 3);
    expect(skipped).toMatchObject({ runs: 0, lastGoalId: null, nextRunAt: new Date(createdAt + 4 * HOUR_MS).toISOString() });

    // The 2 s loop catches up and then keeps its cadence.
    await waitForStoredLoop(sandbox, fast.id, 'to run twice after the restart', (loop) => loop.runs >= fastBefore.runs + 2);
    expectOnGrid(await loopOf(sandbox, fast.id), 2_000);

    // Exactly one run of the hourly loop, none of the skipping one.
    expect((await loopHistory(sandbox, once.id)).map((goal) => goal.id)).toEqual([caughtUp.lastGoalId]);
    expect(await loopHistory(sandbox, skip.id)).toEqual([]);
    expect(await loopOf(sandbox, once.id)).toMatchObject({ runs: 1, skipped: 2 });
  });

  it('a run still waiting when the daemon stops is retried as soon as it starts again, not at the next slot', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    // A foreground goal holds the workspace; it ends while no daemon runs, so no daemon sees it end.
    const agentPid = path.join(sandbox.root, 'fg.pid');
    const foreground = sandbox.run([
      'start', 'the go file exists', '--foreground', '-C', workspace.dir, '--cooldown', '0', '--check', 'test -f go',
      '--agent', `echo $$ > ${agentPid}; while [ ! -f go ]; do sleep 0.05; done`,
    ]);
    await waitForPidFile(agentPid);
    const loop = await createLoop(sandbox, ['1h', 'runs after the foreground goal', '-C', workspace.dir, ...ONE_TURN, '--agent', 'true']);
    const fired = await sandbox.run(['loop', 'run', loop.id]);
    expect(fired.code, fired.stderr).toBe(0);
    expect(fired.stdout).toContain('a goal is active');
    await waitForStoredLoop(sandbox, loop.id, 'waiting', (candidate) => candidate.waiting);
    await stopDaemon(sandbox);

    await workspace.write('go', '');
    expect((await foreground).code).toBe(0);
    expect(storedLoops(sandbox).find((candidate) => candidate.id === loop.id)).toMatchObject({ waiting: true, runs: 0 });
    const restarted = await sandbox.run(['daemon']);
    expect(restarted.code, restarted.stderr).toBe(0);
    const ran = await waitForStoredLoop(sandbox, loop.id, 'to run', (candidate) => candidate.runs === 1, 5_000);
    expect(ran).toMatchObject({ waiting: false, nextRunAt: new Date(loop.nextRunAt).toISOString() });
    expect((await loopHistory(sandbox, loop.id)).map((goal) => goal.id)).toEqual([ran.lastGoalId]);
  });

  it('`goald loop run <loop>` fires now, off the cadence, and takes a unique prefix', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const loop = await createLoop(sandbox, ['1d', 'fired by hand', '-C', workspace.dir, ...ONE_TURN, '--agent', 'true']);
    expect(Date.parse(loop.nextRunAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(await loopHistory(sandbox, loop.id)).toEqual([]);

    const fired = await sandbox.run(['loop', 'run', loop.id.slice(0, 6)]);
    expect(fired.stderr).toBe('');
    expect(fired.code).toBe(0);
    const goalId = /^loop \S+ fired: goal (\S+) started$/.exec(fired.stdout.trim())?.[1];
    expect(goalId).toBeDefined();
    const [run] = await waitForRuns(sandbox, loop.id, 'its run to finish', (goals) => goals.length === 1 && goals.every(isFinished));
    expect(run).toMatchObject({ id: goalId, loopId: loop.id, status: 'failed', reason: 'max-turns' });
    expect(await promptOf(sandbox, goalId ?? '')).toContain(`- Loop: loop ${loop.id} (every 1d), run 1`);
    await waitForStoredLoop(sandbox, loop.id, 'with its outcome', (candidate) => candidate.lastOutcome === 'failed');
    const listed = await loopOf(sandbox, loop.id);
    expect(listed).toMatchObject({ runs: 1, lastGoalId: goalId, nextRunAt: new Date(loop.nextRunAt).toISOString() });
  });
});

describe('goald loop: bad input is one line, exit 2, and stores nothing', () => {
  it.each([
    ['an unparseable schedule', ['every tuesday'], /"every tuesday" is not a schedule — use a duration such as 30m, 2h or 1d, or a 5-field cron expression/],
    ['a bad cron field', ['61 * * * *'], /the minute field "61" is not valid/],
    ['a seconds field', ['*/5 * * * * *'], /6 fields/],
    ['an interval under 1 s', ['500ms'], /"500ms" is shorter than 1s/],
  ])('%s', async (_name, args, pattern) => {
    const sandbox = await goaldSandbox();
    // Refused before the workspace is even looked at, and before any daemon starts.
    expectOneLineError(await sandbox.run(['loop', ...args, 'x', '--check', 'true', '--agent', 'true']), pattern);
    expect(existsSync(sandbox.home)).toBe(false);
  });

  it('a directory that is not a git work tree', async () => {
    const sandbox = await goaldSandbox();
    const plain = path.join(sandbox.root, 'plain');
    await mkdir(plain);
    expectOneLineError(await sandbox.run(['loop', '30m', 'x', '-C', plain, '--check', 'true', '--agent', 'true']), /not inside a git work tree.*git init/);
    expectOneLineError(await sandbox.run(['loop', 'sync', '-C', plain]), /not inside a git work tree/);
    expect(existsSync(sandbox.home)).toBe(false);
  });

  it('start options the daemon refuses (no check, no evaluator) store no loop', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    expectOneLineError(await sandbox.run(['loop', '30m', 'x', '-C', workspace.dir, '--agent', 'true']), /no checks/);
    expect(storedLoops(sandbox)).toEqual([]);
  });

  it('an unknown loop id, with and without a daemon', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const loop = await createLoop(sandbox, ['1d', 'kept', '-C', workspace.dir, ...ONE_TURN, '--agent', 'true']);
    for (const action of ['stop', 'run']) {
      expectOneLineError(await sandbox.run(['loop', action, 'nope']), /no loop matches "nope".*goald loop list/);
    }
    await stopDaemon(sandbox);
    expectOneLineError(await sandbox.run(['loop', 'stop', 'nope']), /no loop matches "nope"/);
    expect(storedLoops(sandbox).map((stored) => [stored.id, stored.stopped])).toEqual([[loop.id, false]]);
  });
});
