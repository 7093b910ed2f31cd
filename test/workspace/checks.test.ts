import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { describe, expect, onTestFinished, test } from 'vitest';

import type { CheckSpec } from '../../src/config/types.js';
import { SIGKILL_GRACE_MS } from '../../src/process/terminate-group.js';
import { checksSignature, createCheckRunner, OUTPUT_TAIL_BYTES, summarizeChecks } from '../../src/workspace/checks.js';
import type { CheckGroup, CheckResult } from '../../src/workspace/types.js';
import { deferred } from '../helpers/deferred.js';
import { isProcessRunning as isProcessRunningNow, waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

async function workspace(): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-checks-')));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function check(name: string, run: string, timeoutMs = 20_000): CheckSpec {
  return { name, run, timeoutMs };
}

/** True once the process no longer runs; a zombie waiting for its reaper counts as gone. */
async function isGone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }
}

function pidIn(output: string, label: string): number {
  const match = new RegExp(`${label} (\\d+)`).exec(output);
  expect(match).not.toBeNull();
  return Number(match?.[1]);
}

describe('createCheckRunner', () => {
  test('runs checks in order in the workspace and records pass and fail', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('where', 'pwd'), check('fails', 'echo broken >&2; exit 3'), check('env', 'echo "$GOALD_X"')],
      env: { GOALD_X: 'from env' },
    });
    const results = await runner.run();
    expect(results.map((r) => [r.name, r.exitCode, r.passed, r.timedOut])).toEqual([
      ['where', 0, true, false],
      ['fails', 3, false, false],
      ['env', 0, true, false],
    ]);
    expect(results[0]?.outputTail).toBe(`${dir}\n`);
    expect(results[1]?.outputTail).toBe('broken\n');
    expect(results[1]?.command).toBe('echo broken >&2; exit 3');
    expect(results[2]?.outputTail).toBe('from env\n');
    for (const result of results) expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('a timeout kills the whole process group, grandchild included', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('hangs', 'sleep 1000 & echo "grandchild $!"; wait', 300)],
    });
    const [result] = await runner.run();
    expect(result).toMatchObject({ name: 'hangs', passed: false, timedOut: true, exitCode: null });
    expect(result?.durationMs).toBeGreaterThanOrEqual(300);
    expect(result?.durationMs).toBeLessThan(SIGKILL_GRACE_MS);
    await expect.poll(() => isGone(pidIn(result?.outputTail ?? '', 'grandchild')), { timeout: 2_000 }).toBe(true); // an exiting process closes its pipes before it turns zombie
  });

  test('a group that ignores SIGTERM gets SIGKILL after the grace period', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('stubborn', 'trap "" TERM; sleep 1000 & echo "grandchild $!"; wait; wait', 200)],
    });
    const [result] = await runner.run();
    expect(result).toMatchObject({ timedOut: true, passed: false, exitCode: null });
    expect(result?.durationMs).toBeGreaterThanOrEqual(200 + SIGKILL_GRACE_MS - 100);
    await expect.poll(() => isGone(pidIn(result?.outputTail ?? '', 'grandchild')), { timeout: 2_000 }).toBe(true); // an exiting process closes its pipes before it turns zombie
  }, 15_000);

  test('a check that exits but leaves a process behind still finishes, and the leftover is ended', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('leaky', 'sleep 1000 & echo "leftover $!"; exit 0')],
    });
    const [result] = await runner.run();
    expect(result).toMatchObject({ passed: true, exitCode: 0, timedOut: false });
    expect(result?.durationMs).toBeLessThan(SIGKILL_GRACE_MS);
    await expect.poll(() => isGone(pidIn(result?.outputTail ?? '', 'leftover')), { timeout: 2_000 }).toBe(true); // an exiting process closes its pipes before it turns zombie
  });

  test('an abort rejects promptly, kills the running group and skips later checks', async () => {
    const dir = await workspace();
    const marker = path.join(dir, 'second-ran');
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('long', 'sleep 1000 & echo $! > pid.tmp && mv pid.tmp pid; wait'), check('second', `touch ${marker}`)],
    });
    const controller = new AbortController();
    const running = runner.run(controller.signal);
    await waitUntil('the check to write its pid file', () => existsSync(path.join(dir, 'pid')));
    const pid = Number((await readFile(path.join(dir, 'pid'), 'utf8')).trim());
    controller.abort(new Error('goal stopped'));
    await expect(running).rejects.toThrow('goal stopped');
    await waitUntilGone(pid);
    await expect(readFile(marker)).rejects.toThrow();
  });

  test('an abort of the last check, running, is no unhandled rejection', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({ workspace: dir, checks: [check('only', 'touch started; sleep 1000')] });
    const controller = new AbortController();
    const unhandled = await collectUnhandledRejections(async () => {
      const running = runner.run(controller.signal);
      await waitUntil('the check to start', () => existsSync(path.join(dir, 'started')));
      controller.abort(new Error('goal stopped'));
      await expect(running).rejects.toThrow('goal stopped');
    });
    expect(unhandled).toEqual([]);
  });

  test('an already-aborted signal runs nothing', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({ workspace: dir, checks: [check('never', 'touch ran')] });
    await expect(runner.run(AbortSignal.abort(new Error('too late')))).rejects.toThrow('too late');
    await expect(readFile(path.join(dir, 'ran'))).rejects.toThrow();
  });

  test('the output tail is bounded and keeps the end, without a broken first character', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({
      workspace: dir,
      checks: [
        check('chatty', "head -c 200000 /dev/zero | tr '\\0' a; echo; echo END"),
        // "é" is two bytes; an odd byte budget before it forces a cut inside a character.
        check('unicode', "printf 'x'; i=0; while [ $i -lt 3000 ]; do printf 'é'; i=$((i+1)); done; echo"),
      ],
    });
    const [chatty, unicode] = await runner.run();
    expect(Buffer.byteLength(chatty?.outputTail ?? '')).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
    expect(chatty?.outputTail.endsWith('a\nEND\n')).toBe(true);
    expect(unicode?.outputTail).toMatch(/^é+\n$/);
    expect(Buffer.byteLength(unicode?.outputTail ?? '')).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
  });

  test('a check that cannot start is a failed result, not an exception', async () => {
    const dir = path.join(await workspace(), 'gone');
    const runner = createCheckRunner({ workspace: dir, checks: [check('test', 'true')] });
    const [result] = await runner.run();
    expect(result).toMatchObject({ passed: false, exitCode: null, timedOut: false });
    expect(result?.outputTail).toContain('could not start the check');
  });

  test("a check sees no vendor's credentials, except those agent.passEnv names", async () => {
    const dir = await workspace();
    const saved = { OPENAI_API_KEY: process.env.OPENAI_API_KEY, ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY };
    process.env.OPENAI_API_KEY = 'sk-check-env-0123456789abcdefghij';
    process.env.ANTHROPIC_API_KEY = 'sk-ant-check-env-0123456789abcdef';
    onTestFinished(() => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    const printEnv = check('env', 'env | grep -E "^(OPENAI|ANTHROPIC)_" | sort; echo done');
    const [plain] = await createCheckRunner({ workspace: dir, checks: [printEnv] }).run();
    expect(plain?.outputTail.trim()).toBe('done');
    const [passed] = await createCheckRunner({ workspace: dir, checks: [printEnv], passEnv: ['ANTHROPIC_*'] }).run();
    expect(passed?.outputTail.trim()).toBe('ANTHROPIC_API_KEY=sk-ant-check-env-0123456789abcdef\ndone');
  });

  test('a timeout of 0 means no timeout', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({ workspace: dir, checks: [check('quick', 'exit 0', 0)] });
    const [result] = await runner.run();
    expect(result).toMatchObject({ passed: true, timedOut: false });
  });
});

// A check's process starts ahead of the check (its sandbox set up meanwhile) and runs nothing until released.
describe('createCheckRunner with its first check held', () => {
  /** The `opened` gate, settled by the test. */
  function gate(): { opened: Promise<void>; open: () => void; refuse: (reason: Error) => void } {
    const { promise, resolve, reject } = deferred();
    return { opened: promise, open: () => resolve(), refuse: reject };
  }

  test('the held check runs only once released; its time and its timeout count from then; its stdin is /dev/null', async () => {
    const dir = await workspace();
    const { opened, open } = gate();
    const groups: CheckGroup[] = [];
    // A 1 s timeout, released after 1.2 s: counted from the start of its process, the check would time out.
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('held', 'touch ran; sleep 0.1; test "$(readlink /proc/self/fd/0)" = /dev/null', 1_000)],
    });
    const running = runner.run(undefined, (group) => groups.push(group), null, opened);
    await expect.poll(() => groups.length).toBe(1);
    expect(isProcessRunningNow(groups[0]?.pid ?? 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
    open();
    const [result] = await running;
    expect(result).toMatchObject({ passed: true, timedOut: false, exitCode: 0, outputTail: '' });
    expect(existsSync(path.join(dir, 'ran'))).toBe(true);
    expect(result?.durationMs).toBeGreaterThanOrEqual(100);
    expect(result?.durationMs).toBeLessThan(1_200);
  });

  test('a refused gate ends the held process with nothing of the check run, and run rejects with its reason', async () => {
    const dir = await workspace();
    const { opened, refuse } = gate();
    const groups: CheckGroup[] = [];
    const runner = createCheckRunner({ workspace: dir, checks: [check('never', 'touch ran'), check('nor this', 'touch ran-too')] });
    const running = runner.run(undefined, (group) => groups.push(group), null, opened);
    await expect.poll(() => groups.length).toBe(1);
    refuse(new Error('the snapshot failed'));
    await expect(running).rejects.toThrow('the snapshot failed');
    await waitUntilGone(groups[0]?.pid ?? 0);
    expect(groups).toHaveLength(1);
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
    expect(existsSync(path.join(dir, 'ran-too'))).toBe(false);
  });

  test('an abort while held ends the held process and runs nothing', async () => {
    const dir = await workspace();
    const { opened } = gate();
    const groups: CheckGroup[] = [];
    const controller = new AbortController();
    const runner = createCheckRunner({ workspace: dir, checks: [check('never', 'touch ran')] });
    const running = runner.run(controller.signal, (group) => groups.push(group), null, opened);
    await expect.poll(() => groups.length).toBe(1);
    controller.abort(new Error('goal stopped'));
    await expect(running).rejects.toThrow('goal stopped');
    await waitUntilGone(groups[0]?.pid ?? 0);
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  test('run with a signal aborted already still takes its gate: a gate refused later is no unhandled rejection', async () => {
    const dir = await workspace();
    const { opened, refuse } = gate();
    const controller = new AbortController();
    controller.abort(new Error('goal stopped'));
    const runner = createCheckRunner({ workspace: dir, checks: [check('never', 'touch ran')] });
    const unhandled = await collectUnhandledRejections(async () => {
      await expect(runner.run(controller.signal, undefined, null, opened)).rejects.toThrow('goal stopped');
      // The supervisor's gate fails with the snapshot, which the same stop aborted.
      refuse(new Error('goal stopped'));
    });
    expect(unhandled).toEqual([]);
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  test("each later check's process starts while the one before runs, and runs its check only after that one ended", async () => {
    const dir = await workspace();
    const order = path.join(dir, 'order');
    const seenAtGroup: boolean[] = [];
    const runner = createCheckRunner({
      workspace: dir,
      checks: [check('first', `sleep 0.3; echo first >> ${order}`), check('second', `echo second >> ${order}`), check('third', `echo third >> ${order}`)],
    });
    const results = await runner.run(undefined, () => seenAtGroup.push(existsSync(order)));
    expect(results.map((result) => result.passed)).toEqual([true, true, true]);
    expect(await readFile(order, 'utf8')).toBe('first\nsecond\nthird\n');
    // The second check's process was reported before the first check wrote anything.
    expect(seenAtGroup.slice(0, 2)).toEqual([false, false]);
  });

  test('no checks: run resolves once released, and rejects with a refused gate', async () => {
    const dir = await workspace();
    const runner = createCheckRunner({ workspace: dir, checks: [] });
    const first = gate();
    const running = runner.run(undefined, undefined, null, first.opened);
    first.open();
    await expect(running).resolves.toEqual([]);
    const second = gate();
    const refused = runner.run(undefined, undefined, null, second.opened);
    second.refuse(new Error('refused'));
    await expect(refused).rejects.toThrow('refused');
  });
});

describe('checksSignature and summarizeChecks', () => {
  const result = (name: string, passed: boolean): CheckResult => ({
    name,
    command: `run ${name}`,
    exitCode: passed ? 0 : 1,
    passed,
    timedOut: false,
    durationMs: 5,
    outputTail: `${Math.random()}`,
  });

  test('the signature depends on names and outcomes only, not order, timing or output', () => {
    const a = checksSignature([result('test', true), result('lint', false)]);
    const b = checksSignature([result('lint', false), result('test', true)]);
    expect(a).toBe(b);
    expect(checksSignature([result('test', true), result('lint', true)])).not.toBe(a);
    expect(checksSignature([result('test', true)])).not.toBe(a);
    expect(checksSignature([])).toBe('[]');
  });

  test('summarizeChecks counts passing and failing', () => {
    expect(summarizeChecks([result('a', true), result('b', false), result('c', true)])).toEqual({
      passing: 2,
      failing: 1,
    });
  });
});

// A hostile check command: what it started outside its process group is gone once the check is over.
describe('createCheckRunner against escaped processes', () => {
  test('a setsid process a check started is killed when the check ends; the group is reported as it starts', async () => {
    const dir = await workspace();
    const pidFile = path.join(dir, 'escapee.pid');
    // The escapee writes its own pid; the check waits for it so the test knows which process to look at.
    const run = `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 7777' </dev/null >/dev/null 2>&1 & while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo done`;
    const groups: CheckGroup[] = [];
    const runner = createCheckRunner({ workspace: dir, checks: [check('escape', run)] });
    const started = performance.now();
    const [result] = await runner.run(undefined, (group) => groups.push(group));
    const escapee = Number(await readFile(pidFile, 'utf8'));
    onTestFinished(() => {
      try {
        process.kill(escapee, 'SIGKILL');
      } catch {
        // already gone, as expected
      }
    });
    expect(result).toMatchObject({ passed: true, outputTail: 'done\n' });
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ pid: expect.any(Number) as unknown, token: expect.stringMatching(/^[0-9a-f]{32}$/) as unknown });
    await waitUntilGone(escapee, 2_000);
    expect(performance.now() - started).toBeLessThan(SIGKILL_GRACE_MS);
  });
});

/** The unhandled rejections while `body` runs and a moment after (a daemon would die of any). */
async function collectUnhandledRejections(body: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await body();
    await new Promise((resolve) => setTimeout(resolve, 20)); // unhandled rejections are told after a tick
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return unhandled;
}
