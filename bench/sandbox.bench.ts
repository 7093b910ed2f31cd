// What the bubblewrap sandbox adds (issue 14: target ≤ 15 ms per turn at the median): a trivial agent turn
// (`true` through the command adapter: spawn, transcript, group reaping) and a trivial check (`true` through
// the check runner), each with and without the sandbox, interleaved so drift hits both alike. The sandboxed
// side includes building the turn's view and bwrap arguments, as the supervisor does every turn. A check as
// the supervisor runs it is also timed: its process started ahead and held (as while the snapshot's `git
// add` runs; 20 ms here), then timed from its release to its result, so bwrap's set-up is not in it; and
// a sandboxed turn as the supervisor runs it: its process started ahead (process/ready-leader.ts, 20 ms
// before, as while the turn before is checked), then timed from the turn's start like the others. That
// readied turn is also run as claude, codex and gemini take a prompt (in argv, no stdin), once with a short
// prompt and once with a 16 KB one: the difference is what a long prompt costs at the leader's gate.
// Run alone with `node dist/bench/sandbox.bench.js [--runs N]` after `npm run build`.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { createCommandAgent } from '../src/agents/command-agent.js';
import type { TurnInput } from '../src/agents/types.js';
import { DEFAULT_SANDBOX } from '../src/config/defaults.js';
import { startReadyLeader } from '../src/process/ready-leader.js';
import { spawnAgentProcess } from '../src/process/spawn.js';
import { openGoalSandbox } from '../src/sandbox/goal-sandbox.js';
import { runGit } from '../src/workspace/git.js';
import { createCheckRunner } from '../src/workspace/checks.js';
import { median, numberFlag, round, runWhenMain } from './bench-runner.js';

export const SANDBOX_ADDED_TARGET_MS = 15;

export interface SandboxBenchResult {
  runs: number;
  turnMs: number;
  sandboxedTurnMs: number;
  /** sandboxedTurnMs − turnMs; the target is ≤ 15 ms. */
  turnAddedMs: number;
  checkMs: number;
  sandboxedCheckMs: number;
  checkAddedMs: number;
  /** The check held 20 ms first (as the supervisor holds it during the snapshot), timed from its release. */
  heldCheckMs: number;
  heldSandboxedCheckMs: number;
  /** heldSandboxedCheckMs − heldCheckMs: what the sandbox adds to a turn's path per check. */
  heldCheckAddedMs: number;
  /** A sandboxed turn whose process was started 20 ms ahead (as the supervisor does), timed from its start. */
  readiedSandboxedTurnMs: number;
  /** readiedSandboxedTurnMs − turnMs: what the sandbox adds to a turn's path for its agent. */
  readiedTurnAddedMs: number;
  /** A readied sandboxed turn of a command taking its prompt in argv (no stdin): a short prompt, and a 16 KB one. */
  readiedArgvTurnMs: number;
  readiedLongArgvTurnMs: number;
  /** readiedLongArgvTurnMs − readiedArgvTurnMs: what a long prompt in argv costs at the leader's gate. */
  longArgvAddedMs: number;
}

/** The long prompt of the argv turns: about what three failing checks' tails and a recitation make. */
export const LONG_ARGV_PROMPT_BYTES = 16 * 1024;

/** Measures a trivial turn and a trivial check, each with and without bwrap (medians of `runs`). */
export async function benchSandbox(opts: { runs?: number } = {}): Promise<SandboxBenchResult> {
  const runs = opts.runs ?? 41;
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gsx-')));
  try {
    const workspace = path.join(root, 'ws');
    const home = path.join(root, 'home');
    await mkdir(workspace);
    await mkdir(home, { mode: 0o700 });
    await runGit(['init', '-q'], { cwd: workspace });
    const env = { ...process.env, HOME: root, XDG_CONFIG_HOME: path.join(root, 'config') };
    const sandbox = await openGoalSandbox({
      settings: { ...DEFAULT_SANDBOX, mode: 'required' },
      workspace: { root: workspace, gitDir: path.join(workspace, '.git'), commonDir: path.join(workspace, '.git') },
      agent: { adapter: 'command', command: 'true' },
      goaldHome: home,
      env,
    });
    const agent = createCommandAgent({ command: 'true', env });
    const checks = createCheckRunner({ workspace, checks: [{ name: 'true', run: 'true', timeoutMs: 60_000 }] });
    const HOLD_MS = 20;
    let turn = 0;
    // The next turn's prompt file and state directory, which the sandbox mounts, as the supervisor makes them.
    const nextTurnFiles = async (prompt: string): Promise<{ promptPath: string; stateDir: string; transcriptPath: string }> => {
      turn += 1;
      const files = { promptPath: path.join(home, `turn-${turn}.prompt.txt`), stateDir: path.join(home, `turn-${turn}.state`), transcriptPath: path.join(home, `turn-${turn}.log`) };
      await writeFile(files.promptPath, prompt);
      await mkdir(files.stateDir);
      return files;
    };
    const runTurn = async (sandboxed: boolean, readied = false): Promise<number> => {
      const { promptPath, stateDir, transcriptPath } = await nextTurnFiles('do nothing');
      const wrap = sandboxed ? sandbox.forTurn({ promptPath, stateDir }) : null;
      const ready = readied && wrap !== null ? startReadyLeader({ cwd: workspace, sandbox: wrap }) : undefined;
      if (ready !== undefined) await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      const started = performance.now();
      const input: TurnInput = {
        goalId: 'bench',
        turn,
        condition: 'nothing',
        prompt: 'do nothing',
        workspace,
        promptPath,
        transcriptPath,
        timeoutMs: 60_000,
        turnTokenLimit: 0,
        sandbox: wrap,
        ...(ready === undefined ? {} : { ready }),
      };
      const result = await agent.runTurn(input, new AbortController().signal);
      if (result.outcome !== 'completed') throw new Error(`the trivial turn ended ${result.outcome}: ${result.error ?? ''}`);
      return performance.now() - started;
    };
    const longPrompt = Array.from({ length: LONG_ARGV_PROMPT_BYTES / 64 }, (_, line) => `${String(line).padStart(4, '0')} it's a "failing" test: expected \`1\`, got $x`.padEnd(63, '.')).join('\n');
    // A readied sandboxed turn of `sh -c true sh <prompt>` with no stdin, as an argv-taking CLI is spawned.
    const runArgvTurn = async (prompt: string): Promise<number> => {
      const { promptPath, stateDir, transcriptPath } = await nextTurnFiles(prompt);
      const wrap = sandbox.forTurn({ promptPath, stateDir });
      const ready = wrap === null ? undefined : startReadyLeader({ cwd: workspace, sandbox: wrap, env });
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      const started = performance.now();
      const result = await spawnAgentProcess({
        command: '/bin/sh', args: ['-c', 'true', 'sh', prompt], cwd: workspace, env, stdin: null,
        transcriptPath, timeoutMs: 60_000, sandbox: wrap, ready,
      }).done;
      if (result.exitCode !== 0) throw new Error(`the argv turn exited ${result.exitCode}: ${result.spawnError ?? ''}`);
      return performance.now() - started;
    };
    const runCheck = async (sandboxed: boolean): Promise<number> => {
      const started = performance.now();
      const [result] = await checks.run(undefined, undefined, sandboxed ? sandbox.forChecks() : null);
      if (result?.passed !== true) throw new Error(`the trivial check failed: ${result?.outputTail ?? ''}`);
      return performance.now() - started;
    };
    const runHeldCheck = async (sandboxed: boolean): Promise<number> => {
      let release = (): void => undefined;
      const opened = new Promise<void>((resolve) => (release = resolve));
      const running = checks.run(undefined, undefined, sandboxed ? sandbox.forChecks() : null, opened);
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      const started = performance.now();
      release();
      const [result] = await running;
      if (result?.passed !== true) throw new Error(`the trivial held check failed: ${result?.outputTail ?? ''}`);
      return performance.now() - started;
    };
    const times = { turn: [] as number[], sandboxedTurn: [] as number[], check: [] as number[], sandboxedCheck: [] as number[], heldCheck: [] as number[], heldSandboxedCheck: [] as number[], readiedTurn: [] as number[], argvTurn: [] as number[], longArgvTurn: [] as number[] };
    // One warm-up of each, then interleaved runs.
    await runTurn(false);
    await runTurn(true);
    await runCheck(false);
    await runCheck(true);
    await runHeldCheck(false);
    await runHeldCheck(true);
    await runTurn(true, true);
    await runArgvTurn('do nothing');
    await runArgvTurn(longPrompt);
    for (let index = 0; index < runs; index += 1) {
      times.turn.push(await runTurn(false));
      times.sandboxedTurn.push(await runTurn(true));
      times.check.push(await runCheck(false));
      times.sandboxedCheck.push(await runCheck(true));
      times.heldCheck.push(await runHeldCheck(false));
      times.heldSandboxedCheck.push(await runHeldCheck(true));
      times.readiedTurn.push(await runTurn(true, true));
      times.argvTurn.push(await runArgvTurn('do nothing'));
      times.longArgvTurn.push(await runArgvTurn(longPrompt));
    }
    const turnMs = median(times.turn);
    const sandboxedTurnMs = median(times.sandboxedTurn);
    const checkMs = median(times.check);
    const sandboxedCheckMs = median(times.sandboxedCheck);
    return {
      runs,
      turnMs: round(turnMs),
      sandboxedTurnMs: round(sandboxedTurnMs),
      turnAddedMs: round(sandboxedTurnMs - turnMs),
      checkMs: round(checkMs),
      sandboxedCheckMs: round(sandboxedCheckMs),
      checkAddedMs: round(sandboxedCheckMs - checkMs),
      heldCheckMs: round(median(times.heldCheck)),
      heldSandboxedCheckMs: round(median(times.heldSandboxedCheck)),
      heldCheckAddedMs: round(median(times.heldSandboxedCheck) - median(times.heldCheck)),
      readiedSandboxedTurnMs: round(median(times.readiedTurn)),
      readiedTurnAddedMs: round(median(times.readiedTurn) - turnMs),
      readiedArgvTurnMs: round(median(times.argvTurn)),
      readiedLongArgvTurnMs: round(median(times.longArgvTurn)),
      longArgvAddedMs: round(median(times.longArgvTurn) - median(times.argvTurn)),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, async (argv) => {
  const result = await benchSandbox({ runs: numberFlag(argv, '--runs') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
});
