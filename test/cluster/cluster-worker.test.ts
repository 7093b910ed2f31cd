// Real goald turns on a cluster: `goald worker` processes (the built CLI) take turn jobs from BullMQ on a real
// redis-server, run each turn as a goald goal's step (a real agent command, snapshot, checks, breakers), and
// pass the tree on through a bare git remote, so a turn on one worker starts from what the last turn, on
// another worker, left. Every turn is committed once; the goal's branch holds one commit per changed turn.

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from 'xstate';

import { goalMachine } from '../../machines/goal.machine.js';
import { toJson } from '../../state/json.js';
import type { GoalRecord, Json } from '../../state/types.js';
import { hideUrlCredentials, readClusterGoalEvents, readClusterGoalRecord } from '../../src/cluster/cluster-goals.js';
import { submitClusterGoal } from '../../src/cluster/submit-goal.js';
import { readClusterGoal, readCommittedTurns } from '../../src/cluster/turn-commit.js';
import { createTurnQueue } from '../../src/cluster/turn-queue.js';
import { resolveGoalSettings } from '../../src/config/resolve-settings.js';
import type { StartFlags } from '../../src/config/start-options.js';
import { newGoalRecord } from '../../src/supervisor/launch.js';
import { runGit } from '../../src/workspace/git.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { startGoaldWorker, stopGoaldWorkers, turnsCommittedBy, type GoaldWorker } from '../helpers/goald-workers.js';
import { isDescendantOf, isGroupLeader, isProcessRunning, pidsWithMarker } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

let server: RedisServer;
let redis: Redis;
let queue: Queue;
let root: string;
let remote: string;
const workers: GoaldWorker[] = [];

beforeAll(async () => {
  server = await startRedis();
  // The test's own clients ride out the restart test's outage quietly (ioredis reconnects by itself).
  redis = new Redis(server.url, { maxRetriesPerRequest: null }).on('error', () => undefined);
  queue = createTurnQueue(new Redis(server.url, { maxRetriesPerRequest: null }).on('error', () => undefined));
});

afterAll(async () => {
  await queue.close();
  redis.disconnect();
  await server.stop();
});

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-cw-')));
  remote = path.join(root, 'remote.git');
  await git(['init', '--quiet', '--bare', '--initial-branch=main', remote], root);
});

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') for (const worker of workers) process.stderr.write(`--- ${worker.name}\n${worker.log()}\n`);
  await stopGoaldWorkers(workers.splice(0));
  await queue.obliterate({ force: true });
  await redis.flushall();
  await rm(root, { recursive: true, force: true });
});

async function git(args: string[], cwd: string): Promise<string> {
  return (await runGit(args, { cwd })).stdout.trim();
}

const startWorker = async (name: string, args: readonly string[] = []): Promise<GoaldWorker> => {
  const worker = await startGoaldWorker(root, name, server.url, args);
  workers.push(worker);
  return worker;
};

// The user's repository (one commit) and a goal in it, registered on the cluster the way the daemon does.
async function submitGoal(name: string, flags: StartFlags, condition = 'progress.txt has three lines', edit: (goal: GoalRecord) => GoalRecord = (goal) => goal): Promise<string> {
  const repo = path.join(root, name);
  await git(['init', '--quiet', '--initial-branch=main', repo], root);
  await writeFile(path.join(repo, 'README.md'), `# ${name}\n`);
  await git(['add', '-A'], repo);
  await git(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '--quiet', '-m', 'start'], repo);
  const { settings } = await resolveGoalSettings({ condition, workspace: repo, flags: { evaluator: 'none', cooldown: '0', sandbox: false, ...flags }, env: { HOME: root } });
  const goal = edit(newGoalRecord(settings, { kind: 'daemon', pid: process.pid }));
  await submitClusterGoal({ redis, queue, goal, remote });
  return goal.id;
}

const statusOf = async (goalId: string): Promise<string | undefined> => (await readClusterGoal(redis, goalId))?.status;
const turnsOf = async (goalId: string): Promise<number[]> => ((await readCommittedTurns(redis, goalId)) as Array<{ turn: number }>).map((record) => record.turn);

// A turn commit's subject names its turn (`goald: turn N · <reason>`, as a worktree goal's): `turn N`.
function turnOfSubject(subject: string): string {
  const turn = /^goald: turn (\d+) · ./.exec(subject)?.[1];
  return turn === undefined ? subject : `turn ${turn}`;
}

describe('goald worker', () => {
  it('runs 10 goals to their end across three workers, each turn starting from the tree the last one left', { timeout: 120_000 }, async () => {
    const started = [await startWorker('w1'), await startWorker('w2'), await startWorker('w3')];
    // Each turn appends its number; the check passes at three lines, so turns 1–3 must each see the others'.
    const agent = 'echo "turn $GOALD_TURN" >> progress.txt';
    const check = 'test "$(wc -l < progress.txt)" -ge 3';
    const goals = [];
    for (let n = 0; n < 10; n += 1) goals.push(await submitGoal(`g${n}`, { agent, check: [check], maxTurns: '6' }));
    for (const goalId of goals) {
      await waitUntil(`goal ${goalId} achieved`, async () => (await statusOf(goalId)) === 'achieved' || ((await statusOf(goalId)) === 'failed' && Promise.reject(new Error(`goal ${goalId} failed`))), 60_000);
      expect(await turnsOf(goalId)).toEqual([0, 1, 2, 3]);
      // One commit per changed turn on the goal's branch (moved just after the fence), the last with all three lines.
      const subjects = async (): Promise<string[]> => (await git(['log', '--format=%s', `goald/${goalId}`], remote)).split('\n').map(turnOfSubject);
      await waitUntil(`goald/${goalId} moved to turn 3`, async () => (await subjects())[0] === 'turn 3');
      expect(await subjects()).toEqual(['turn 3', 'turn 2', 'turn 1', 'start']);
      expect(await git(['show', `goald/${goalId}:progress.txt`], remote)).toBe('turn 1\nturn 2\nturn 3');
    }
    // Every worker took turns (ten goals' pre-checks were waiting when all three were ready), 40 in all.
    await waitUntil('the workers logged 40 turns', () => started.reduce((sum, worker) => sum + turnsCommittedBy(worker), 0) === 40);
    expect(started.map(turnsCommittedBy).every((count) => count > 0)).toBe(true);
  });

  it("takes the goal's limits from the cluster, not from the worktree the agent writes, and never shows the agent the Redis URL", { timeout: 90_000 }, async () => {
    await startWorker('w1');
    // A hostile agent: raises its own turn limit in goal.config.json and keeps what it can see of its environment.
    const agent = `printf '{"limits":{"maxTurns":50}}' > goal.config.json; env > seen-env.txt; echo x >> progress.txt`;
    const goalId = await submitGoal('gh', { agent, check: ['false'], maxTurns: '2' });
    await waitUntil(`goal ${goalId} ended`, async () => ['achieved', 'failed'].includes((await statusOf(goalId)) ?? ''), 60_000);
    expect(await statusOf(goalId)).toBe('failed');
    expect(await turnsOf(goalId)).toEqual([0, 1, 2]);
    const records = (await readCommittedTurns(redis, goalId)) as Array<{ breakers?: unknown; status?: string }>;
    expect(records.at(-1)?.status).toBe('failed');
    // The branch moves just after the fence: to turn 2's commit, whose seen-env.txt is turn 2's.
    const seen = await waitUntil('goald branch at turn 2', async () => {
      const text = (await runGit(['show', `goald/${goalId}:seen-env.txt`], { cwd: remote, allowFailure: true })).stdout;
      return text.includes('GOALD_TURN=2') && text;
    });
    expect(seen).not.toContain('GOALD_REDIS_URL');
    expect(seen).not.toContain(String(server.port));
  });

  // In the sandbox, bwrap's pid namespace ends with the worker (everything the turn started dies);
  // unsandboxed, the kernel kills the turn's group leader (setpriv --pdeathsig).
  it.each([
    { sandbox: true, what: 'no process of its turn' },
    { sandbox: false, what: "not its agent's leader" },
  ])('a worker SIGKILLed mid-turn leaves $what alive (sandbox: $sandbox); the turn runs again on the other worker, applied once', { timeout: 90_000 }, async ({ sandbox }) => {
    const fast = ['--lock-duration', '2s', '--stalled-interval', '1s'];
    const pair = [await startWorker('w1', fast), await startWorker('w2', fast)];
    // A duration no other process uses marks the turn's processes (the shell and its sleep).
    const marker = '2.7182818';
    const goalId = await submitGoal('gk', { agent: `sleep ${marker}; echo "turn $GOALD_TURN" >> progress.txt`, check: ['test -s progress.txt'], maxTurns: '3', sandbox });
    // Once the sleep itself runs, every process of the turn has armed its death signal (setpriv sets it
    // before it execs the command; a worker killed in that instant would leave the process unarmed).
    const running = await waitUntil('the turn is running', () => {
      const pids = pidsWithMarker(marker);
      return pids.some((pid) => isSleep(pid, marker)) && pids;
    }, 30_000);
    const holder = pair.find((worker) => running.some((pid) => isDescendantOf(pid, worker.child.pid ?? -1)));
    if (holder === undefined) throw new Error('no worker runs the turn');
    const other = pair.find((worker) => worker !== holder);
    const mustDie = sandbox ? running : running.filter((pid) => isGroupLeader(pid));
    expect(mustDie.length).toBeGreaterThan(0);
    holder.child.kill('SIGKILL');
    await waitUntil("the killed worker's turn is gone", () => mustDie.every((pid) => !isProcessRunning(pid)), 2_000);
    await waitUntil(`goal ${goalId} achieved`, async () => (await statusOf(goalId)) === 'achieved', 60_000);
    expect(await turnsOf(goalId)).toEqual([0, 1]);
    await waitUntil('the other worker committed turn 1', () => other?.log().includes(`goal ${goalId}: turn 1 committed`));
    const subjects = async (): Promise<string[]> => (await git(['log', '--format=%s', `goald/${goalId}`], remote)).split('\n').map(turnOfSubject);
    await waitUntil('the branch at turn 1', async () => (await subjects())[0] === 'turn 1');
    expect(await subjects()).toEqual(['turn 1', 'start']);
  });

  it('a worker frozen past its lock commits nothing when it wakes: the turn ran on the other worker, one record and one commit', { timeout: 90_000 }, async () => {
    const fast = ['--lock-duration', '2s', '--stalled-interval', '1s'];
    const pair = [await startWorker('w1', fast), await startWorker('w2', fast)];
    const marker = '3.1415926';
    const goalId = await submitGoal('gf', { agent: `sleep ${marker}; echo "turn $GOALD_TURN" >> progress.txt`, check: ['test -s progress.txt'], maxTurns: '3' });
    const ownerOf = (pid: number): GoaldWorker | undefined => pair.find((worker) => isDescendantOf(pid, worker.child.pid ?? -1));
    const first = await waitUntil('the turn is running', () => pidsWithMarker(marker)[0], 30_000);
    const frozen = ownerOf(first);
    const other = pair.find((worker) => worker !== frozen);
    if (frozen === undefined || other === undefined) throw new Error('no worker runs the turn');
    frozen.child.kill('SIGSTOP');
    // Its lock expires unrenewed and the turn goes to the other worker; the frozen one wakes while it runs.
    await waitUntil('the other worker runs the turn', () => pidsWithMarker(marker).some((pid) => ownerOf(pid) === other), 30_000);
    frozen.child.kill('SIGCONT');
    await waitUntil(`goal ${goalId} achieved`, async () => (await statusOf(goalId)) === 'achieved', 60_000);
    await waitUntil('the other worker committed turn 1', () => other.log().includes(`goal ${goalId}: turn 1 committed`));
    expect(frozen.log()).not.toContain(`goal ${goalId}: turn 1 committed`);
    expect(await turnsOf(goalId)).toEqual([0, 1]);
    const subjects = async (): Promise<string[]> => (await git(['log', '--format=%s', `goald/${goalId}`], remote)).split('\n').map(turnOfSubject);
    await waitUntil('the branch at turn 1', async () => (await subjects())[0] === 'turn 1');
    expect(await subjects()).toEqual(['turn 1', 'start']);
  });

  it('Redis restarted mid-goal (append-only file on): the workers wait it out, and the goal completes with every turn applied once', { timeout: 90_000 }, async () => {
    const pair = [await startWorker('w1'), await startWorker('w2')];
    const goalId = await submitGoal('gr', { agent: 'sleep 0.5; echo "turn $GOALD_TURN" >> progress.txt', check: ['test "$(wc -l < progress.txt)" -ge 4'], maxTurns: '8' });
    await waitUntil('turn 1 committed', async () => (await turnsOf(goalId)).includes(1), 30_000);
    await server.stop({ keepData: true });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    server = await server.restart();
    await waitUntil(`goal ${goalId} achieved`, async () => (await statusOf(goalId)) === 'achieved', 60_000);
    expect(await turnsOf(goalId)).toEqual([0, 1, 2, 3, 4]);
    const subjects = async (): Promise<string[]> => (await git(['log', '--format=%s', `goald/${goalId}`], remote)).split('\n').map(turnOfSubject);
    await waitUntil('the branch at turn 4', async () => (await subjects())[0] === 'turn 4');
    expect(await subjects()).toEqual([4, 3, 2, 1].map((turn) => `turn ${turn}`).concat('start'));
    expect(pair.every((worker) => worker.child.exitCode === null)).toBe(true);
  });

  it('a worker stopped with SIGTERM mid-turn (a deploy) hands the turn back at once: the other worker runs it, applied once', { timeout: 90_000 }, async () => {
    // The default 30 s lock: the turn must come back by the hand-back, not by the lock's expiry.
    const pair = [await startWorker('w1'), await startWorker('w2')];
    const marker = '4.6692016';
    const goalId = await submitGoal('gd', { agent: `sleep ${marker}; echo "turn $GOALD_TURN" >> progress.txt`, check: ['test -s progress.txt'], maxTurns: '3' });
    const first = await waitUntil('the turn is running', () => pidsWithMarker(marker)[0], 30_000);
    const holder = pair.find((worker) => isDescendantOf(first, worker.child.pid ?? -1));
    const other = pair.find((worker) => worker !== holder);
    if (holder === undefined || other === undefined) throw new Error('no worker runs the turn');
    const exited = new Promise((resolve) => holder.child.once('exit', resolve));
    const stoppedAt = Date.now();
    holder.child.kill('SIGTERM');
    await exited;
    expect(isProcessRunning(first)).toBe(false);
    await waitUntil(`goal ${goalId} achieved`, async () => (await statusOf(goalId)) === 'achieved', 25_000);
    expect(Date.now() - stoppedAt).toBeLessThan(25_000);
    expect(await turnsOf(goalId)).toEqual([0, 1]);
    expect(holder.log()).toContain(`goal ${goalId}: turn 1 aborted`);
    await waitUntil('the other worker committed turn 1', () => other.log().includes(`goal ${goalId}: turn 1 committed`));
  });

  it("a sandboxed turn cannot write the worker's mirror, where the worker runs git to push", { timeout: 90_000 }, async () => {
    await startWorker('w1');
    // The hostile agent finds the mirror through its checkout's alternates and plants a command in its config.
    const agent = 'mirror="$(dirname "$(cat .git/objects/info/alternates)")"; git config -f "$mirror/config" core.sshCommand "touch /tmp/goald-pwned" 2> refused.txt; echo $? > status.txt';
    const goalId = await submitGoal('gs', { agent, check: ['test -s status.txt'], maxTurns: '2', sandbox: true });
    await waitUntil(`goal ${goalId} achieved`, async () => (await statusOf(goalId)) === 'achieved', 60_000);
    await waitUntil('the branch at turn 1', async () => (await runGit(['show', `goald/${goalId}:status.txt`], { cwd: remote, allowFailure: true })).exitCode === 0);
    expect(await git(['show', `goald/${goalId}:status.txt`], remote)).not.toBe('0');
    const mirrors = path.join(root, 'w1', 'home', 'worker', 'mirrors');
    for (const mirror of readdirSync(mirrors)) expect(readFileSync(path.join(mirrors, mirror, 'config'), 'utf8')).not.toContain('sshCommand');
  });

  it('a goal whose budget refuses its next turn ends on that turn\'s job, with no record of a turn that never ran', { timeout: 90_000 }, async () => {
    await startWorker('w1');
    // Turn 1's output is counted as about 750 tokens: within the budget of 1 000, but turn 2, projected
    // to spend as much, is refused before it runs.
    const goalId = await submitGoal('gw', { agent: "head -c 3000 /dev/zero | tr '\\0' a", check: ['false'], maxTurns: '5', tokenBudget: '1000' });
    await waitUntil(`goal ${goalId} failed`, async () => (await statusOf(goalId)) === 'failed', 60_000);
    expect(await readClusterGoalRecord(redis, goalId)).toMatchObject({ status: 'failed', reason: 'token-budget' });
    expect(await turnsOf(goalId)).toEqual([0, 1]);
    expect((await readClusterGoal(redis, goalId))?.committedTurn).toBe(2);
  });

  it('a turn that fails on every attempt (its remote gone) fails the goal as cluster-error, and ends its event stream', { timeout: 90_000 }, async () => {
    await startWorker('w1');
    const goalId = await submitGoal('gx', { agent: 'true', check: ['false'], maxTurns: '3' });
    await rename(remote, `${remote}.gone`);
    await waitUntil(`goal ${goalId} failed`, async () => (await statusOf(goalId)) === 'failed', 40_000);
    const record = await readClusterGoalRecord(redis, goalId);
    expect(record).toMatchObject({ status: 'failed', reason: 'cluster-error' });
    expect(record?.reasonMessage).toMatch(/^turn 0 failed on every attempt: /);
    expect(await turnsOf(goalId)).toEqual([]);
    // The event follows the status (failGoalAfterTurnError: two writes): under load, a moment later.
    await waitUntil('the event stream ended', async () => (await readClusterGoalEvents(redis, goalId)).events.at(-1)?.type === 'goal.finished', 10_000);
    const { events } = await readClusterGoalEvents(redis, goalId);
    expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'failed', reason: 'cluster-error' });
  });

  it('a goal whose stored machine it cannot read fails as cluster-error, naming the field; the worker runs the next goal', { timeout: 90_000 }, async () => {
    const worker = await startWorker('w1');
    const bad = await submitGoal('gbad', { agent: 'echo x >> progress.txt', check: ['test -f progress.txt'], maxTurns: '3' }, 'progress exists', (goal) => ({ ...goal, machine: unreadableMachine(goal.id) }));
    // Before the machine was checked, XState threw from a timer and the worker died at the first turn job.
    const ended = (): boolean => worker.child.exitCode !== null || worker.child.signalCode !== null;
    const outcome = await waitUntil(`goal ${bad} failed, or the worker gone`, async () => (ended() ? 'the worker exited' : (await statusOf(bad)) === 'failed' && 'failed'), 40_000);
    expect(outcome).toBe('failed');
    const record = await readClusterGoalRecord(redis, bad);
    expect(record).toMatchObject({ status: 'failed', reason: 'cluster-error' });
    expect(record?.reasonMessage).toMatch(new RegExp(`^turn \\d+ failed on every attempt: goal ${bad}'s stored state machine is unreadable \\(machine\\.value: .*bogus`));
    expect(await turnsOf(bad)).toEqual([]);
    // The worker lives on: the next goal runs to its end there.
    const good = await submitGoal('ggood', { agent: 'echo x >> progress.txt', check: ['test -f progress.txt'], maxTurns: '3' }, 'progress exists');
    await waitUntil(`goal ${good} achieved`, async () => (await statusOf(good)) === 'achieved', 40_000);
    expect(ended()).toBe(false);
  });
});

// A goal's machine as a turn stores it after its pre-check (the goal goes on), with its state made one the
// machine does not have: a hand edit, a disk error, a downgrade.
function unreadableMachine(goalId: string): Json {
  const actor = createActor(goalMachine, { input: { goalId } }).start();
  actor.send({ type: 'precheck.finished', achieved: false, at: Date.now() });
  const stored = toJson(actor.getPersistedSnapshot()) as { [key: string]: Json };
  actor.stop();
  return { ...stored, value: 'bogus' };
}

describe('hideUrlCredentials', () => {
  it('hides the user and password of every URL in a message, and leaves the rest', () => {
    expect(hideUrlCredentials('git push https://bot:ghp_secret@github.com/a/b.git failed; redis://:pw@10.0.0.1:6379/0 too')).toBe(
      'git push https://***@github.com/a/b.git failed; redis://***@10.0.0.1:6379/0 too',
    );
    expect(hideUrlCredentials('fatal: /srv/remote.git does not appear to be a git repository')).toBe('fatal: /srv/remote.git does not appear to be a git repository');
  });
});

function isSleep(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
  } catch {
    return false;
  }
}
