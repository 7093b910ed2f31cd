// Runs the goal's checks: shell commands whose exit status is ground truth. Each runs in its own process
// group so a timeout or a stop takes down everything the check started, grandchildren included. A check's
// process is started ahead of the check (GATE): bwrap's set-up (~5 ms) and the fork then happen while the
// snapshot reads the work tree, or while the check before it runs, not on the way to its result.

import { monotonicMs } from '../clock.js';
import type { CheckSpec } from '../config/types.js';
import { killMarkedProcesses, newProcessToken, readForkCount } from '../process/escaped-processes.js';
import { readProcessStartTime } from '../process/process-identity.js';
import { sandboxEnded, spawnGroupLeader } from '../process/spawn.js';
import { buildCheckEnv } from '../secrets/child-env.js';
import { SIGKILL_GRACE_MS, terminateGroup } from '../process/terminate-group.js';
import { withoutRepoLocationEnv } from './git.js';
import type { SandboxWrap } from '../sandbox/types.js';
import { createTestCounter, type TestCounter } from './test-counts.js';
import type { CheckGroup, CheckResult, CheckRunner } from './types.js';

// After SIGKILL, how long the pipes may stay open (held by a process outside the group) before we stop reading.
const ABANDON_PIPES_AFTER_KILL_MS = 1_000;

/** How much of a check's combined stdout+stderr is kept for the prompt and the evaluator. */
export const OUTPUT_TAIL_BYTES = 4 * 1024;

export interface CheckRunnerOptions {
  /** Absolute top level of the work tree; every check runs there. */
  workspace: string;
  checks: CheckSpec[];
  /** Added to the environment the checks inherit. */
  env?: Record<string, string>;
  /** Vendor credentials the checks keep (`agent.passEnv`); all others are removed. */
  passEnv?: readonly string[];
}

/**
 * Creates the runner for a goal's checks. `run` never throws for a failing or timed-out check. When the
 * signal aborts, it signals the running check's group (SIGTERM, SIGKILL after SIGKILL_GRACE_MS) and
 * rejects at once with the signal's reason; later checks do not run (the next one's waiting shell is ended).
 */
export function createCheckRunner(options: CheckRunnerOptions): CheckRunner {
  const env = buildCheckEnv({ ...withoutRepoLocationEnv(), ...options.env }, options.passEnv);
  return {
    async run(signal, onGroup, sandbox, opened) {
      const { checks } = options;
      // The gate is ours from here, even when nothing waits on it: it may fail later (a stop aborts the
      // snapshot it stands for), and an unheld rejection would end the daemon.
      opened?.catch(() => undefined);
      if (signal?.aborted) throw signal.reason;
      const start = (index: number, gate: Promise<unknown> | null): HeldCheck | null => {
        const check = checks[index];
        if (check === undefined) return null;
        const held = startCheck(check, { cwd: options.workspace, env, signal, onGroup, sandbox, gate });
        held.result.catch(() => undefined); // awaited below, unless an earlier check failed the run first
        return held;
      };
      const results: CheckResult[] = [];
      let current = start(0, opened ?? null);
      if (current === null) await opened; // no checks: done once the first one would have run
      for (let index = 0; current !== null; index += 1) {
        // The next check's process is set up (the fork of its shell, its sandbox) while this one runs, and
        // runs the check only once this one has ended.
        const running = current;
        // (The gate is this check's own result, already held: a promise made from it here would be left
        // unhandled after the last check, and a stop would end the daemon with it.)
        const next = running.released.then(() => start(index + 1, running.result));
        next.catch(() => undefined); // rejects only with this one's own failure, met below
        results.push(await running.result);
        current = await next;
      }
      return results;
    },
  };
}

// A check's shell started ahead of its turn waits here, before anything of the check runs: one line on
// stdin ("go") releases it, and stdin is /dev/null again for the check, as for one started at once. The
// line never comes when goald ends it or dies: the shell then exits with 125 and runs nothing.
const GATE = 'read -r goald_gate || exit 125; unset goald_gate; exec </dev/null; ';

/** A check's process, started; `released` settles when the check itself may run, `result` when it has. */
interface HeldCheck {
  released: Promise<void>;
  result: Promise<CheckResult>;
}

interface StartOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal | undefined;
  onGroup?: ((group: CheckGroup) => void) | undefined;
  sandbox?: SandboxWrap | null | undefined;
  /** Null: the check runs at once. Otherwise its shell is started now and runs the check once this resolves. */
  gate: Promise<unknown> | null;
}

/**
 * Starts one check; its result comes once it has run to completion or timeout, and rejects only when the
 * signal aborts or its gate rejects. Its time and its timeout count from its release.
 */
function startCheck(check: CheckSpec, options: StartOptions): HeldCheck {
  const { signal, onGroup, sandbox, gate } = options;
  if (signal?.aborted) {
    const aborted = Promise.reject(signal.reason);
    return { released: aborted, result: aborted };
  }
  // The shell leads a new process group, so terminating it reaches all it started; the token in its
  // environment reaches what left the group.
  const token = newProcessToken();
  const forksBefore = readForkCount();
  const script = gate === null ? check.run : `${GATE}${check.run}`;
  // /bin/sh, never a `sh` looked up on PATH: one an agent put in the workspace would decide the check.
  const child = spawnGroupLeader('/bin/sh', ['-c', script], { cwd: options.cwd, env: options.env, stdin: gate === null ? 'ignore' : 'pipe', token, sandbox });
  if (child.pid !== undefined) onGroup?.({ pid: child.pid, startTime: readProcessStartTime(child.pid), token });
  // A shell that ended before its release (bwrap could not set up) leaves nothing to write to.
  child.stdin?.on('error', () => undefined);
  let started = monotonicMs();
  const tail = createTail(OUTPUT_TAIL_BYTES);
  // The test runner's counts, read from the whole output as it streams (test-counts.ts).
  const counter = createTestCounter();
  let timedOut = false;
  let settled = false;
  let terminating = false;
  let timeoutTimer: NodeJS.Timeout | undefined;

  // Settles once nothing the check started in its group (or sandbox) runs: a server it left behind must
  // not hold its port while the next check starts. The sweep for processes that left the group is not
  // waited for.
  let groupGone: Promise<unknown> = Promise.resolve();
  const killGroup = (): Promise<unknown> => {
    if (terminating || child.pid === undefined) return groupGone;
    terminating = true;
    const leader = child.pid;
    groupGone = terminateGroup(leader, { graceMs: SIGKILL_GRACE_MS });
    void groupGone.then(() => killMarkedProcesses(token, { bornAfter: { pid: leader, forksBefore } }));
    return groupGone;
  };

  const released = gate === null ? Promise.resolve() : gate.then(() => undefined);
  const result = new Promise<CheckResult>((resolve, reject) => {
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timeoutTimer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = (): void => {
      void killGroup();
      settle(() => reject(signal?.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    released.then(
      () => {
        if (settled || terminating) return;
        started = monotonicMs();
        child.stdin?.end('go\n');
        // A timeout of 0 (or less) means the check may run as long as it likes.
        if (check.timeoutMs > 0 && Number.isFinite(check.timeoutMs)) {
          timeoutTimer = setTimeout(() => {
            timedOut = true;
            void killGroup();
          }, check.timeoutMs);
        }
      },
      (reason: unknown) => {
        // Never released: nothing of the check ran.
        void killGroup();
        settle(() => reject(reason));
      },
    );

    child.stdout.on('data', (chunk: Buffer) => {
      tail.push(chunk);
      counter.push('stdout', chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      tail.push(chunk);
      counter.push('stderr', chunk);
    });
    child.on('error', (error) => {
      tail.push(Buffer.from(`\n[goald: could not start the check: ${error.message}]\n`));
      settle(() => resolve(resultOf(check, null, false, started, tail.text(), counter)));
    });
    // The shell is gone but anything it left running in the group still holds the pipes open: end it,
    // or 'close' would wait for a leaked server forever.
    child.on('exit', (code) => {
      // A sandboxed check's leader is bwrap: once its namespace has ended nothing of the check is left, and
      // scanning /proc for it costs ~8 ms a check.
      if (sandbox == null || terminating) void killGroup();
      else groupGone = sandboxEnded(child).then((over) => (over ? undefined : killGroup()));
      // Last resort for a process that left the group (setsid) while keeping our pipes: stop reading.
      const abandon = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        settle(() => resolve(resultOf(check, code, timedOut, started, tail.text(), counter)));
      }, SIGKILL_GRACE_MS + ABANDON_PIPES_AFTER_KILL_MS);
      child.once('close', () => clearTimeout(abandon));
    });
    child.on('close', (code) => {
      void groupGone.then(() => settle(() => resolve(resultOf(check, code, timedOut, started, tail.text(), counter))));
    });
  });
  return { released, result };
}

function resultOf(
  check: CheckSpec,
  exitCode: number | null,
  timedOut: boolean,
  started: number,
  outputTail: string,
  counter: TestCounter,
): CheckResult {
  const tests = counter.result();
  return {
    name: check.name,
    command: check.run,
    exitCode,
    passed: exitCode === 0 && !timedOut,
    timedOut,
    durationMs: Math.round(monotonicMs() - started),
    outputTail,
    ...(tests === null ? {} : { tests }),
  };
}

interface Tail {
  push: (chunk: Buffer) => void;
  text: () => string;
}

/** Keeps the last `limit` bytes of a byte stream and decodes them without a broken first character. */
function createTail(limit: number): Tail {
  let kept = Buffer.alloc(0);
  return {
    push(chunk) {
      kept = Buffer.concat([kept, chunk]);
      if (kept.length > limit) kept = kept.subarray(kept.length - limit);
    },
    text() {
      let start = 0;
      // Skip UTF-8 continuation bytes (10xxxxxx) the cut left without their lead byte; at most three.
      while (start < 3 && start < kept.length && ((kept[start] ?? 0) & 0xc0) === 0x80) start++;
      return kept.subarray(start).toString('utf8');
    },
  };
}

/** A stable fingerprint of check outcomes (names and pass/fail), independent of check order. */
export function checksSignature(results: readonly CheckResult[]): string {
  const outcomes = results
    .map((result): [string, 'pass' | 'fail'] => [result.name, result.passed ? 'pass' : 'fail'])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(outcomes);
}

/** Counts passing and failing checks. */
export function summarizeChecks(results: readonly CheckResult[]): { passing: number; failing: number } {
  const passing = results.filter((result) => result.passed).length;
  return { passing, failing: results.length - passing };
}
