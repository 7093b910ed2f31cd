// The whole CLI against a cluster: a daemon started with GOALD_REDIS_URL is the control plane, `goald worker`
// processes run the turns, and `start`, `status`, `logs`, `pause`, `resume` and `stop` work as they do on
// one machine. The user's repository reaches the workers through its `origin`, a bare repository here.

import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { readCommittedTurns } from '../../src/cluster/turn-commit.js';
import { createTurnQueue } from '../../src/cluster/turn-queue.js';
import { runGit } from '../../src/workspace/git.js';
import { submitGoal } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { startGoaldWorker, stopGoaldWorkers, type GoaldWorker } from '../helpers/goald-workers.js';
import { waitForProcessGone } from '../helpers/processes.js';
import { expectOneLineError } from '../helpers/loops.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { goaldSandbox, sandboxDaemonPid, writeUserConfig, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

let server: RedisServer;
const workers: GoaldWorker[] = [];

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server.stop();
});

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') for (const worker of workers) process.stderr.write(`--- ${worker.name}\n${worker.log()}\n`);
  await stopGoaldWorkers(workers.splice(0));
});

// A goald home whose daemon is a cluster's control plane, a repository with an `origin` the workers reach,
// and two workers.
async function cluster(): Promise<{ sandbox: GoaldSandbox; repo: string; remote: string }> {
  const sandbox = await goaldSandbox();
  sandbox.env.GOALD_REDIS_URL = server.url;
  const remote = path.join(sandbox.root, 'origin.git');
  await runGit(['init', '--quiet', '--bare', '--initial-branch=main', remote], { cwd: sandbox.root });
  const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  await runGit(['remote', 'add', 'origin', remote], { cwd: workspace.dir });
  for (const name of ['w1', 'w2']) workers.push(await startGoaldWorker(sandbox.root, name, server.url));
  return { sandbox, repo: workspace.dir, remote };
}

async function statusOf(sandbox: GoaldSandbox, id: string): Promise<GoalRecord> {
  const run = await sandbox.run(['status', id, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const goal = (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals[0];
  if (goal === undefined) throw new Error(`status ${id} showed no goal`);
  return goal;
}

describe('the CLI against a cluster', () => {
  it('start, status and logs: a goal runs on the workers and ends achieved, its branch on origin', { timeout: 90_000 }, async () => {
    const { sandbox, repo, remote } = await cluster();
    const { id } = await submitGoal(sandbox, [
      'progress.txt has three lines', '-C', repo, '--agent', 'echo "turn $GOALD_TURN" >> progress.txt',
      '--check', 'test "$(wc -l < progress.txt)" -ge 3', '--evaluator', 'none', '--cooldown', '0',
    ]);
    // Followed live from the start: the stream ends by itself when the goal does.
    const followed = sandbox.run(['logs', id, '-f', '--json']);
    await waitUntil(`goal ${id} achieved`, async () => (await statusOf(sandbox, id)).status === 'achieved', 60_000);
    const follow = await followed;
    expect(follow.code, follow.stderr).toBe(0);
    const live = follow.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; turn?: number; status?: string });
    expect(live.filter((event) => event.type === 'turn.finished').map((event) => event.turn)).toEqual([1, 2, 3]);
    expect(live.at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved' });
    const goal = await statusOf(sandbox, id);
    expect(goal).toMatchObject({ id, workspace: repo, condition: 'progress.txt has three lines' });
    expect(goal.summary.turns).toBe(3);
    const logs = await sandbox.run(['logs', id, '--json']);
    expect(logs.code, logs.stderr).toBe(0);
    const events = logs.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; turn?: number; status?: string });
    expect(events.filter((event) => event.type === 'turn.finished').map((event) => event.turn)).toEqual([1, 2, 3]);
    expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved' });
    await waitUntil('the branch moved to turn 3', async () => (await runGit(['show', `goald/${id}:progress.txt`], { cwd: remote, allowFailure: true })).stdout === 'turn 1\nturn 2\nturn 3\n');
    // The goal ended: the attempt refs its turns pushed are gone from the remote; the branch stays.
    await waitUntil('the attempt refs deleted', async () => (await runGit(['for-each-ref', `refs/goald/${id}/`], { cwd: remote })).stdout === '');
    // Rolled back, the branch holds turn 1's files; rolled forward again, turn 3's.
    const back = await sandbox.run(['rollback', id, '--to-turn', '1', '--json']);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ type: 'goal.rolled-back', id, toTurn: 1, afterTurn: 3, written: ['progress.txt'] });
    expect((await runGit(['show', `goald/${id}:progress.txt`], { cwd: remote })).stdout).toBe('turn 1\n');
    expect((await statusOf(sandbox, id)).rollbacks).toEqual([expect.objectContaining({ by: 'goald rollback', toTurn: 1 })]);
    const forward = await sandbox.run(['rollback', id, '--to-turn', '3', '--json']);
    expect(forward.code, forward.stderr).toBe(0);
    expect((await runGit(['show', `goald/${id}:progress.txt`], { cwd: remote })).stdout).toBe('turn 1\nturn 2\nturn 3\n');
    const missing = await sandbox.run(['rollback', id, '--to-turn', '7']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`goal ${id} has no turn 7 (its turns are 0 to 3)`);
    // The workers kept nothing of it: Redis and the remote hold the goal.
    for (const name of ['w1', 'w2']) {
      const home = path.join(sandbox.root, name, 'home', 'worker', 'home');
      if (!existsSync(path.join(home, 'state.json'))) continue; // this worker took none of its turns
      const state = JSON.parse(await readFile(path.join(home, 'state.json'), 'utf8')) as { goals: unknown[] };
      expect(state.goals).toEqual([]);
      expect(existsSync(path.join(home, 'goals', id))).toBe(false);
    }
    // The user's own checkout is untouched: the turns ran on the workers' worktrees.
    expect((await runGit(['status', '--porcelain'], { cwd: repo })).stdout).toBe('');

    // diff and apply fetch the branch from the remote into the workspace, then show it, whole or one turn,
    // and merge it, as for a worktree goal.
    const diff = await sandbox.run(['diff', id]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+turn 3');
    const second = await sandbox.run(['diff', id, '--turn', '2']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^commit [0-9a-f]{40}\ngoald: turn 2 · /);
    expect(second.stdout).toContain('+turn 2');
    expect(second.stdout).not.toContain('+turn 3');
    const applied = await sandbox.run(['apply', id, '-C', repo, '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ type: 'goal.applied', id, branch: `goald/${id}`, how: 'fast-forward', configChanged: false });
    expect(await readFile(path.join(repo, 'progress.txt'), 'utf8')).toBe('turn 1\nturn 2\nturn 3\n');
    const again = await sandbox.run(['apply', id, '-C', repo]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to apply');
    // A goal registered before its start commit was kept: the branch's first commit no worker made is its start.
    const redis = new Redis(server.url);
    try {
      const state = JSON.parse((await redis.hget(`{goald}:goal:${id}`, 'state')) ?? '{}') as Record<string, unknown>;
      expect(state.startCommit).toMatch(/^[0-9a-f]{40}$/);
      delete state.startCommit;
      await redis.hset(`{goald}:goal:${id}`, 'state', JSON.stringify(state));
    } finally {
      redis.disconnect();
    }
    const legacy = await sandbox.run(['diff', id]);
    expect(legacy.code, legacy.stderr).toBe(0);
    expect(legacy.stdout).toBe(diff.stdout);
  });

  it('pause lets the turn end and starts no more; a paused goal rolls back; resume goes on from there; stop kills the agent on its worker', { timeout: 90_000 }, async () => {
    const { sandbox, repo, remote } = await cluster();
    // Each turn takes about a second, or a minute once the hold file exists (the turn the test stops); the
    // goal never ends by itself.
    const holdFile = path.join(sandbox.root, 'hold');
    const heldPidFile = path.join(sandbox.root, 'held.pid');
    const agent = `cp "$GOALD_PROMPT_FILE" ${sandbox.root}/prompt-$GOALD_TURN.txt; if [ -f ${holdFile} ]; then echo $$ > ${heldPidFile}; sleep 60; else sleep 1; fi; echo "turn $GOALD_TURN" >> progress.txt`;
    const { id } = await submitGoal(sandbox, ['never met', '-C', repo, '--agent', agent, '--check', 'false', '--evaluator', 'none', '--cooldown', '0', '--max-turns', '50']);
    await waitUntil('turn 1 started', async () => (await statusOf(sandbox, id)).summary.turns >= 1, 30_000);
    const active = await sandbox.run(['rollback', id, '--to-turn', '0']);
    expect(active.code).toBe(2);
    expect(active.stderr).toContain(`goal ${id} is active`);

    const pause = await sandbox.run(['pause', id]);
    expect(pause.code, pause.stderr).toBe(0);
    expect((await statusOf(sandbox, id)).status).toBe('paused');
    // The turn in flight ends and commits (until then a rollback is refused, saying so); paused between
    // turns, the goal rolls back to turn 1, and its next turn, on whichever worker, starts from there.
    const rollback = await waitUntil('the pausing turn ended and the rollback taken', async () => {
      const run = await sandbox.run(['rollback', id, '--to-turn', '1', '--json']);
      return run.code === 0 || !run.stderr.includes('its turn is still running') ? run : undefined;
    }, 30_000);
    expect(rollback.code, rollback.stderr).toBe(0);
    const pausedAt = (await statusOf(sandbox, id)).summary.turns;
    expect(JSON.parse(rollback.stdout)).toMatchObject({ type: 'goal.rolled-back', toTurn: 1, afterTurn: pausedAt });
    // Then nothing more runs.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await statusOf(sandbox, id)).summary.turns).toBe(pausedAt);

    const resume = await sandbox.run(['resume', id]);
    expect(resume.code, resume.stderr).toBe(0);
    await waitUntil('a turn after the resume', async () => (await statusOf(sandbox, id)).summary.turns > pausedAt, 30_000);
    const next = pausedAt + 1;
    expect(readFileSync(path.join(sandbox.root, `prompt-${next}.txt`), 'utf8')).toContain('# Rolled back to turn 1');
    // Turn `next` follows turn 1 on the branch (later turns may already have followed it: the goal goes on).
    await waitUntil(`the branch at turn ${next}`, async () => {
      const progress = (await runGit(['show', `goald/${id}:progress.txt`], { cwd: remote, allowFailure: true })).stdout;
      if (!progress.startsWith(`turn 1\nturn ${next}\n`)) throw new Error(`progress.txt on the branch: ${JSON.stringify(progress)}`);
      return true;
    }, 30_000);

    // Mid-turn: the stop reaches the agent on whichever worker runs it. A turn that finds the hold file
    // sleeps a minute: gone well before that, it was the stop that ended it. (How fast a stop lands is
    // the cluster bench's figure, not this test's.)
    await writeFile(holdFile, '');
    await waitUntil('a turn holding', () => existsSync(heldPidFile), 10_000);
    const agentPid = Number(readFileSync(heldPidFile, 'utf8').trim());
    const stop = await sandbox.run(['stop', id]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(await waitForProcessGone(agentPid, 20_000)).toBe(true);
    expect(await statusOf(sandbox, id)).toMatchObject({ status: 'failed', reason: 'stopped' });
    const logs = await sandbox.run(['logs', id, '--json']);
    expect(logs.stdout.trim().split('\n').at(-1)).toContain('"goal.finished"');
    // The stopped goal's attempt refs leave the remote; its branch stays.
    await waitUntil('the attempt refs deleted', async () => (await runGit(['for-each-ref', `refs/goald/${id}/`], { cwd: remote })).stdout === '');
    expect((await runGit(['rev-parse', '--verify', `refs/heads/goald/${id}`], { cwd: remote })).exitCode).toBe(0);
  });

  it('Redis lost: status shows the goals as last read and says the cluster is degraded; control exits 3; all is well once Redis is back', { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const { id } = await submitGoal(sandbox, ['never met', '-C', repo, '--agent', 'sleep 0.3', '--check', 'false', '--evaluator', 'none', '--cooldown', '1s', '--max-turns', '50']);
    await waitUntil('turn 1 done', async () => (await statusOf(sandbox, id)).summary.turns >= 1, 30_000);
    await server.stop({ keepData: true });
    try {
      const json = await sandbox.run(['status', '--json']);
      expect(json.code, json.stderr).toBe(0);
      const shown = JSON.parse(json.stdout) as { goals: GoalRecord[]; cluster: { degraded: boolean; redis: string } };
      expect(shown.cluster).toMatchObject({ degraded: true, redis: server.url });
      expect(shown.goals.map((goal) => goal.id)).toEqual([id]);
      const text = await sandbox.run(['status']);
      expect(text.code).toBe(0);
      expect(text.stderr).toMatch(/the cluster is degraded: its Redis \(redis:\/\/127\.0\.0\.1:\d+\) cannot be reached; showing goals as last read at /);
      const pause = await sandbox.run(['pause', id]);
      expect(pause.code).toBe(3);
      expect(pause.stderr).toContain('cannot be reached');
      const loops = await sandbox.run(['loop', 'list']);
      expect(loops.code).toBe(3);
      expect(loops.stderr).toContain('cannot list loops: Redis at');
    } finally {
      server = await server.restart();
    }
    await waitUntil('the cluster is whole again', async () => {
      const run = await sandbox.run(['status', '--json']);
      return (JSON.parse(run.stdout) as { cluster?: { degraded: boolean } }).cluster?.degraded === false;
    }, 20_000);
    const stop = await sandbox.run(['stop', id]);
    expect(stop.code, stop.stderr).toBe(0);
  });

  it('a loop fires on the cluster: each tick starts a goal unless one is live in its workspace; loop stop ends it', { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    // Each run takes several of the loop's periods, so some ticks find the last run still live and one
    // waiting: with runs of ~2 s, a busy host's ticks (~2 s apart in a full suite run) met each run once,
    // set it waiting and never skipped, and this waited out its minute.
    const created = await sandbox.run([
      'loop', '1s', 'progress.txt exists', '-C', repo, '--agent', 'sleep 4; echo done >> progress.txt',
      '--check', 'test -f progress.txt', '--evaluator', 'none', '--cooldown', '0', '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { loop } = JSON.parse(created.stdout) as { loop: LoopRecord };
    expect(loop).toMatchObject({ every: '1s', workspace: repo, runs: 0 });
    expect(loop.nextRunAt).not.toBeNull();

    const loops = async (): Promise<LoopRecord[]> => {
      const run = await sandbox.run(['loop', 'list', '--json', '--all']);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { loops: LoopRecord[] }).loops;
    };
    const runsOf = async (): Promise<GoalRecord[]> => {
      const run = await sandbox.run(['history', '--json', '--loop', loop.id]);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals;
    };
    await waitUntil('two runs achieved and a tick skipped', async () => {
      const [shown] = await loops();
      return (await runsOf()).filter((goal) => goal.status === 'achieved').length >= 2 && (shown?.skipped ?? 0) >= 1;
    }, 60_000);

    const stop = await sandbox.run(['loop', 'stop', loop.id]);
    expect(stop.code, stop.stderr).toBe(0);
    await waitUntil('the last run ended', async () => (await runsOf()).every((goal) => goal.status === 'achieved'), 30_000);
    const runs = await runsOf();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await runsOf()).length).toBe(runs.length); // no tick after the stop

    const [shown] = await loops();
    expect(shown).toMatchObject({ id: loop.id, stopped: true, runs: runs.length, lastOutcome: 'achieved' });
    // The ticks done left Redis: a loop's memory does not grow with its runs.
    const redis = new Redis(server.url);
    try {
      const completed = await redis.keys('{goald}:loops-*:completed');
      for (const key of completed) expect(await redis.zcard(key)).toBe(0);
    } finally {
      redis.disconnect();
    }
    // Never two runs live at once in the workspace.
    const spans = runs.map((goal) => [Date.parse(goal.createdAt), Date.parse(goal.finishedAt ?? '')] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
  });

  it('a loop on the cluster outlives its daemon: no run while the daemon is down, and its ticks go on when it is back', { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const created = await sandbox.run(['loop', '1s', 'notes exist', '-C', repo, '--agent', 'echo x >> notes.txt', '--check', 'test -f notes.txt', '--evaluator', 'none', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { loop } = JSON.parse(created.stdout) as { loop: LoopRecord };
    const runs = async (): Promise<number> => {
      const run = await sandbox.run(['history', '--json', '--loop', loop.id]);
      return (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals.length;
    };
    await waitUntil('a first run', async () => (await runs()) >= 1, 30_000);
    expect((await sandbox.run(['daemon', 'stop'])).code).toBe(0);
    // Redis holds the loop and its next tick; nothing takes the tick while its owner is down.
    const redis = new Redis(server.url);
    try {
      const before = await redis.zcard('{goald}:goals');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await redis.zcard('{goald}:goals')).toBe(before);
    } finally {
      redis.disconnect();
    }
    const ranBefore = await runs(); // history reads a cluster through its daemon, and starts it when none runs
    expect((await sandbox.run(['daemon', 'status', '--json'])).stdout).toContain('"running":true');
    await waitUntil('runs after the restart', async () => (await runs()) >= ranBefore + 2, 30_000);
    expect((await sandbox.run(['loop', 'stop', loop.id])).code).toBe(0);
  });

  it('loop run: starts a run now, or it waits while a goal is live in the workspace; from another daemon, the owner runs it', { timeout: 120_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const created = await sandbox.run(['loop', '1h', 'notes exist', '-C', repo, '--agent', 'echo x >> notes.txt', '--check', 'test -f notes.txt', '--evaluator', 'none', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { loop } = JSON.parse(created.stdout) as { loop: LoopRecord };
    const runIds = async (): Promise<string[]> => {
      const run = await sandbox.run(['history', '--json', '--loop', loop.id]);
      return (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals.map((goal) => goal.id);
    };
    const fired = await sandbox.run(['loop', 'run', loop.id]);
    expect(fired.code, fired.stderr).toBe(0);
    const [first] = await runIds();
    expect(fired.stdout.trim()).toBe(`loop ${loop.id} fired: goal ${first} started`);
    await waitUntil('the first run ended', async () => (await statusOf(sandbox, first ?? '')).status === 'achieved', 30_000);

    // A goal of the user's own is live in the workspace: the run waits for it, then starts by itself.
    const { id: busy } = await submitGoal(sandbox, ['never met', '-C', repo, '--agent', 'sleep 0.3', '--check', 'false', '--evaluator', 'none', '--cooldown', '0', '--max-turns', '50']);
    const waiting = await sandbox.run(['loop', 'run', loop.id]);
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(waiting.stdout.trim()).toBe(`loop ${loop.id} fired, but a goal is active in ${repo}; the run waits for it`);
    expect((await runIds()).length).toBe(1);
    expect((await sandbox.run(['stop', busy])).code).toBe(0);
    await waitUntil('the waiting run started', async () => (await runIds()).length === 2, 20_000);
    const [, second] = await runIds();
    await waitUntil('the second run ended', async () => (await statusOf(sandbox, second ?? '')).status === 'achieved', 30_000);

    // Another daemon (another home) on the same cluster: the loop's owner runs it, from its workspace.
    const other = await goaldSandbox();
    other.env.GOALD_REDIS_URL = server.url;
    const remoteRun = await other.run(['loop', 'run', loop.id]);
    expect(remoteRun.code, remoteRun.stderr).toBe(0);
    expect(remoteRun.stdout).toMatch(new RegExp(`^loop ${loop.id} fired: goal g[a-z0-9]+ started`));
    await waitUntil('the third run', async () => (await runIds()).length === 3, 20_000);
    // Its owner down, the run is queued for it, and the other daemon says so.
    expect((await sandbox.run(['daemon', 'stop'])).code).toBe(0);
    const ownerDown = await other.run(['loop', 'run', loop.id]);
    expect(ownerDown.code).toBe(2);
    expect(ownerDown.stderr).toContain('did not take the run within 15 s');
    expect((await other.run(['loop', 'stop', loop.id])).code).toBe(0);
    // Stopped, its process ends: the connections its remote runs waited on were closed with them.
    const otherDaemon = sandboxDaemonPid(other);
    expect(otherDaemon).not.toBeNull();
    expect((await other.run(['daemon', 'stop'])).code).toBe(0);
    expect(await waitForProcessGone(otherDaemon ?? 0, 10_000)).toBe(true);
  });

  it('loops declared in goal.config.json run on the cluster with their own settings; an edit syncs them again; removing one stops it', { timeout: 120_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const config = path.join(repo, 'goal.config.json');
    // The workspace's settings allow 5 turns; the loop's own layer allows `maxTurns`; two notes meet the goal.
    const declaring = (every: string, maxTurns: number): string =>
      JSON.stringify({
        agent: { command: 'echo x >> notes.txt' },
        checks: [{ name: 'two notes', run: 'test "$(wc -l < notes.txt)" -ge 2' }],
        evaluator: { provider: 'none' },
        limits: { cooldown: '0', maxTurns: 5 },
        loops: [{ name: 'notes', every, goal: 'two notes exist', limits: { maxTurns } }],
      });
    await writeFile(config, declaring('1h', 1));
    const synced = await sandbox.run(['loop', 'sync', '-C', repo, '--json']);
    expect(synced.code, synced.stderr).toBe(0);
    const [loop] = (JSON.parse(synced.stdout) as { loops: LoopRecord[] }).loops;
    expect(loop).toMatchObject({ source: 'config', every: '1h', name: 'notes', condition: 'two notes exist', workspace: repo, runs: 0 });
    expect(loop?.nextRunAt).not.toBeNull();
    expectOneLineError(await sandbox.run(['loop', 'stop', loop?.id ?? '']), /declared in .*goal\.config\.json.*remove it from that file/);

    const runOnce = async (): Promise<GoalRecord> => {
      const fired = await sandbox.run(['loop', 'run', loop?.id ?? '']);
      expect(fired.code, fired.stderr).toBe(0);
      const id = /goal (g[a-z0-9]+) started/.exec(fired.stdout)?.[1] ?? '';
      await waitUntil(`run ${id} ended`, async () => !['active', 'paused'].includes((await statusOf(sandbox, id)).status), 40_000);
      return statusOf(sandbox, id);
    };
    // The run has the loop's own layer: one turn, one note, and the goal fails on its turn limit.
    expect(await runOnce()).toMatchObject({ status: 'failed', reason: 'max-turns', loopId: loop?.id, condition: 'two notes exist' });
    // Each run reads the file as it is then: three turns allowed, the second note meets the goal.
    await writeFile(config, declaring('1h', 3));
    const second = await runOnce();
    expect(second).toMatchObject({ status: 'achieved', loopId: loop?.id });
    expect(second.summary.turns).toBe(2);

    // The file is watched: a new period is a new declaration, and the old one stops (its history stays).
    await writeFile(config, declaring('2h', 3));
    const replaced = await waitUntil('the edited declaration', async () => {
      const run = await sandbox.run(['loop', 'list', '--json']);
      const loops = (JSON.parse(run.stdout) as { loops: LoopRecord[] }).loops;
      return loops.length === 1 && loops[0]?.every === '2h' ? loops[0] : undefined;
    }, 20_000);
    expect(replaced.id).not.toBe(loop?.id);
    const all = JSON.parse((await sandbox.run(['loop', 'list', '--json', '--all'])).stdout) as { loops: LoopRecord[] };
    expect(all.loops.find((other) => other.id === loop?.id)).toMatchObject({ stopped: true, runs: 2 });

    // An invalid file is refused by loop sync and changes nothing; a file without loops stops them.
    await writeFile(config, JSON.stringify({ limits: { maxTurns: 'x' } }));
    expectOneLineError(await sandbox.run(['loop', 'sync', '-C', repo]), /goal\.config\.json.*limits\.maxTurns/);
    await writeFile(config, JSON.stringify({ limits: { maxTurns: 2 } }));
    await waitUntil('no declared loop left', async () => (JSON.parse((await sandbox.run(['loop', 'list', '--json'])).stdout) as { loops: LoopRecord[] }).loops.length === 0, 20_000);
  });

  it('a race on the cluster: its members are cluster goals; the first to achieve wins and the other is stopped; apply <race> merges the winner; --pick best compares their branches', { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const raced = await sandbox.run([
      'race', 'done.txt exists', '-C', repo, '--agent', 'echo fast > done.txt; echo {} > goal.config.json', '--agent', 'sleep 30; echo slow > done.txt',
      '--check', 'test -f done.txt', '--evaluator', 'none', '--cooldown', '0', '--wait', '--json',
    ]);
    expect(raced.code, raced.stderr).toBe(0);
    const [submitted, finished] = raced.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; id: string; status?: string; winner?: string; members: { agent: string; goalId: string; status: string }[] });
    expect(submitted).toMatchObject({ type: 'race.submitted', repo });
    expect(finished).toMatchObject({ type: 'race.finished', id: submitted?.id, status: 'picked' });
    const [fast, slow] = finished?.members ?? [];
    expect(fast).toMatchObject({ agent: 'echo fast > done.txt; echo {} > goal.config.json', status: 'achieved', goalId: finished?.winner });
    // The members ran as cluster goals, on their own branches; the slower one was stopped on its worker.
    expect(await statusOf(sandbox, fast?.goalId ?? '')).toMatchObject({ status: 'achieved', workspace: repo });
    await waitUntil('the other member stopped', async () => (await statusOf(sandbox, slow?.goalId ?? '')).reason === 'stopped', 20_000);
    expect((await statusOf(sandbox, fast?.goalId ?? '')).worktree).toBeUndefined();

    const applied = await sandbox.run(['apply', submitted?.id ?? '', '-C', repo, '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ type: 'goal.applied', id: fast?.goalId, how: 'fast-forward', configChanged: true });
    expect(await readFile(path.join(repo, 'done.txt'), 'utf8')).toBe('fast\n');
    // The winner's agent wrote goal.config.json: applying it says so, since the next goals here read it.
    expect(applied.stderr).toContain(`goald: warning: this merge changed goal.config.json, which goal ${fast?.goalId}'s agent wrote`);

    // --pick best: both achieve; their branches' diffs are compared (no evaluator: the smaller one wins).
    const best = await sandbox.run([
      'race', 'notes.txt exists', '-C', repo, '--agent', 'printf "a\\nb\\nc\\n" > notes.txt', '--agent', 'echo a > notes.txt',
      '--check', 'test -f notes.txt', '--evaluator', 'none', '--cooldown', '0', '--pick', 'best', '--wait', '--json',
    ]);
    expect(best.code, best.stderr).toBe(0);
    const decided = JSON.parse(best.stdout.trim().split('\n').at(-1) ?? '{}') as { status: string; winner: string; reason: string; members: { goalId: string; status: string; diffLines?: number }[] };
    expect(decided.members.map((member) => [member.status, member.diffLines])).toEqual([['achieved', 3], ['achieved', 1]]);
    expect(decided).toMatchObject({ status: 'picked', winner: decided.members[1]?.goalId });
  });

  it("the user config's cluster section: the daemon finds Redis there, and its maxConcurrentTurns caps turns across the fleet", { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    delete sandbox.env.GOALD_REDIS_URL;
    await writeUserConfig(sandbox, { cluster: { redis: server.url, maxConcurrentTurns: 1 } });
    // Room for six turns at once on the workers, and three goals that would use it.
    for (const name of ['w3', 'w4']) workers.push(await startGoaldWorker(sandbox.root, name, server.url, ['--concurrency', '3']));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { id } = await submitGoal(sandbox, [
        'two lines', '-C', repo, '--agent', 'sleep 0.4; echo x >> progress.txt',
        '--check', 'test "$(wc -l < progress.txt)" -ge 2', '--evaluator', 'none', '--cooldown', '0',
      ]);
      ids.push(id);
    }
    await waitUntil('all three achieved', async () => {
      for (const id of ids) if ((await statusOf(sandbox, id)).status !== 'achieved') return false;
      return true;
    }, 60_000);
    const redis = new Redis(server.url);
    const queue = createTurnQueue(redis);
    try {
      expect(await queue.getGlobalConcurrency()).toBe(1);
      const spans = (await Promise.all(ids.map((id) => readCommittedTurns(redis, id))))
        .flat()
        .map((record) => {
          const { startedAt, finishedAt } = record as { startedAt: string; finishedAt: string };
          return [Date.parse(startedAt), Date.parse(finishedAt)] as const;
        })
        .sort((a, b) => a[0] - b[0]);
      expect(spans.length).toBe(9); // the pre-check and two turns each
      // One turn at a time across the fleet: each starts after the one before ended.
      for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    } finally {
      await queue.removeGlobalConcurrency(); // the next tests share this Redis
      await queue.close();
      redis.disconnect();
    }
  });

  it('edit changes a running goal\'s limits from its next turn, on whichever worker runs it (a turn in flight does not undo it); --resume reopens a budget failure', { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const gate = path.join(sandbox.root, 'go');
    // Turn 1 waits for the test, so the edit lands while a turn runs (its commit must not undo the edit).
    const started = path.join(sandbox.root, 'turn-1-started');
    const agent = `if [ "$GOALD_TURN" = 1 ]; then touch ${started}; while [ ! -f ${gate} ]; do sleep 0.05; done; fi; echo "turn $GOALD_TURN" >> progress.txt`;
    const { id } = await submitGoal(sandbox, ['never met', '-C', repo, '--agent', agent, '--check', 'false', '--evaluator', 'none', '--cooldown', '0', '--max-turns', '2']);
    await waitUntil('turn 1 running', () => existsSync(started), 30_000);

    const edited = await sandbox.run(['edit', id, '--max-turns', '4', '--json']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(JSON.parse(edited.stdout)).toMatchObject({ type: 'goal.edited', id, resumed: false, changes: [{ setting: 'limits.maxTurns', from: 2, to: 4 }] });
    await writeFile(gate, '');
    await waitUntil(`goal ${id} ended`, async () => (await statusOf(sandbox, id)).status === 'failed', 30_000);
    const goal = await statusOf(sandbox, id);
    expect(goal).toMatchObject({ reason: 'max-turns', summary: { turns: 4 } });
    expect(goal.edits).toEqual([expect.objectContaining({ by: 'goald edit', changes: [{ setting: 'limits.maxTurns', from: 2, to: 4 }] })]);
    const logs = await sandbox.run(['logs', id, '--json']);
    expect(logs.stdout).toContain('"type":"goal.edited"');

    // A finished goal takes no plain edit; --resume reopens it, only with the limit it failed on raised.
    const late = await sandbox.run(['edit', id, '--max-turns', '9']);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain(`goal ${id} already failed (max-turns)`);
    const notRaised = await sandbox.run(['edit', id, '--token-budget', '99999', '--resume']);
    expect(notRaised.code).toBe(2);
    expect(notRaised.stderr).toContain('--resume needs a higher --max-turns');
    const resumed = await sandbox.run(['edit', id, '--max-turns', '6', '--resume', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ type: 'goal.edited', id, resumed: true, changes: [{ setting: 'limits.maxTurns', from: 4, to: 6 }] });
    await waitUntil(`goal ${id} ended again`, async () => (await statusOf(sandbox, id)).status === 'failed', 30_000);
    expect(await statusOf(sandbox, id)).toMatchObject({ reason: 'max-turns', summary: { turns: 6 } });
    const redis = new Redis(server.url);
    try {
      const turns = (await readCommittedTurns(redis, id)) as Array<{ turn: number }>;
      expect(turns.map((turn) => turn.turn)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    } finally {
      redis.disconnect();
    }
  });

  it('prune deletes finished goals from Redis by the usual limits; live goals and branches stay', { timeout: 90_000 }, async () => {
    // The goals of this file's other tests are on the same Redis: this test's are the only ones.
    const flusher = new Redis(server.url);
    await flusher.flushall();
    flusher.disconnect();
    const { sandbox, repo, remote } = await cluster();
    const finished: string[] = [];
    for (const line of ['one', 'two']) {
      const { id } = await submitGoal(sandbox, [`a line ${line}`, '-C', repo, '--agent', `echo ${line} >> progress.txt`, '--check', 'test -s progress.txt', '--evaluator', 'none']);
      await waitUntil(`goal ${id} achieved`, async () => (await statusOf(sandbox, id)).status === 'achieved', 30_000);
      finished.push(id);
    }
    const { id: live } = await submitGoal(sandbox, ['never met', '-C', repo, '--agent', 'sleep 0.2', '--check', 'false', '--evaluator', 'none', '--cooldown', '1s', '--max-turns', '50']);
    const [older, newer] = finished as [string, string];

    const dry = await sandbox.run(['prune', '--older-than', '0', '--keep', '0', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as { dryRun: boolean; goals: Array<{ id: string; bytes: number }> };
    expect(planned.goals.map((goal) => goal.id).sort()).toEqual([...finished].sort());
    expect(planned.goals.every((goal) => goal.bytes > 0)).toBe(true);

    const real = await sandbox.run(['prune', '--older-than', '0', '--keep', '1', '--json']);
    expect(real.code, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ type: 'prune.finished', dryRun: false, goals: [{ id: older, status: 'achieved' }], kept: 1 });
    const redis = new Redis(server.url);
    try {
      expect(await redis.exists(`{goald}:goal:${older}`, `{goald}:goal:${older}:turns`, `{goald}:goal:${older}:events`)).toBe(0);
      expect(await redis.exists(`{goald}:goal:${newer}`, `{goald}:goal:${live}`)).toBe(2);
    } finally {
      redis.disconnect();
    }
    const history = await sandbox.run(['history', '--json']);
    expect((JSON.parse(history.stdout) as { goals: GoalRecord[] }).goals.map((goal) => goal.id)).toEqual([newer, live]);
    // The pruned goal's work stays on its branch.
    expect((await runGit(['show', `goald/${older}:progress.txt`], { cwd: remote })).stdout).toBe('one\n');
    expect((await sandbox.run(['stop', live])).code).toBe(0);
  });

  it('say reaches the next turn on whichever worker runs it, and is used up only by a turn that is committed', { timeout: 90_000 }, async () => {
    const { sandbox, repo } = await cluster();
    const prompts = path.join(sandbox.root, 'prompts');
    await mkdir(prompts);
    const gate = (turn: number): string => path.join(sandbox.root, `go-${turn}`);
    // Each turn keeps its prompt, then waits for its gate; the check never passes, so turn 2 is the last.
    const agent = `cp "$GOALD_PROMPT_FILE" ${prompts}/turn-$GOALD_TURN-$$.txt; while [ ! -f ${sandbox.root}/go-$GOALD_TURN ]; do sleep 0.05; done`;
    const { id } = await submitGoal(sandbox, ['never met', '-C', repo, '--agent', agent, '--check', 'false', '--evaluator', 'none', '--cooldown', '0', '--max-turns', '2']);
    const promptsOf = async (turn: number): Promise<string[]> =>
      Promise.all((await readdir(prompts)).filter((name) => name.startsWith(`turn-${turn}-`)).map((name) => readFile(path.join(prompts, name), 'utf8')));
    await waitUntil('turn 1 running', async () => (await promptsOf(1)).length === 1, 30_000);

    const said = await sandbox.run(['say', id, 'the flaky test is in src/net', '--json']);
    expect(said.code, said.stderr).toBe(0);
    expect(JSON.parse(said.stdout)).toEqual({ type: 'goal.guided', id, pending: 1 });
    await writeFile(gate(1), '');
    // Turn 2 carries it; a pause now cancels that turn, so the guidance waits for the turn run again.
    await waitUntil('turn 2 running', async () => (await promptsOf(2)).length === 1, 30_000);
    expect((await sandbox.run(['pause', id, '--now'])).code).toBe(0);
    await writeFile(gate(2), '');
    expect((await sandbox.run(['resume', id])).code).toBe(0);
    await waitUntil(`goal ${id} ended`, async () => (await statusOf(sandbox, id)).status === 'failed', 30_000);

    const second = await promptsOf(2);
    expect(second).toHaveLength(2);
    for (const prompt of second) expect(prompt).toContain('> the flaky test is in src/net');
    expect((await promptsOf(1))[0]).not.toContain('Guidance from the user');
    const redis = new Redis(server.url);
    try {
      const turns = (await readCommittedTurns(redis, id)) as Array<{ turn: number; guidance?: string[] }>;
      expect(turns.map((turn) => turn.guidance ?? [])).toEqual([[], [], ['the flaky test is in src/net']]);
      expect(await redis.llen(`{goald}:goal:${id}:guidance`)).toBe(0);
    } finally {
      redis.disconnect();
    }
    // A finished goal takes none.
    const late = await sandbox.run(['say', id, 'one more thing']);
    expect(late.code).toBe(2);
  });

  it("a remote's credentials never reach a message or the daemon's log", { timeout: 60_000 }, async () => {
    const { sandbox, repo } = await cluster();
    sandbox.env.GOALD_CLUSTER_REMOTE = 'http://goald:s3cret@127.0.0.1:1/origin.git';
    const run = await sandbox.run(['start', 'never met', '-C', repo, '--agent', 'true', '--check', 'false', '--evaluator', 'none']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('http://***@127.0.0.1:1/origin.git');
    expect(run.stderr).not.toContain('s3cret');
    expect(readFileSync(path.join(sandbox.home, 'daemon.log'), 'utf8')).not.toContain('s3cret');
  });

  it('a daemon whose Redis cannot be reached exits 3 naming it, its password hidden', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['daemon', '--foreground'], { env: { GOALD_REDIS_URL: 'redis://:s3cret@127.0.0.1:1/0' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('redis://:***@127.0.0.1:1/0');
    expect(run.stderr).not.toContain('s3cret');
  });
});
