// Helpers for end-to-end tests of loops and live configuration: `goald loop` / `loop list` / `history
// --loop` through the built CLI, stored loops read straight from the state file for cheap polling, and a
// clean daemon stop. Polling is bounded (waitUntil); nothing sleeps.

import { readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { GoalRecord, LoopRecord } from '../../state/types.js';
import { readGoals } from './daemon.js';
import { waitUntil } from './wait.js';
import { gitdir } from './gitdir.js';
import { waitUntilGone } from './processes.js';
import { sandboxDaemonPid, type GoaldRun, type GoaldSandbox } from './run-goald.js';

// Each run is one agent turn against a failing check: the goal fails by max-turns at turn 1, quickly.
export const ONE_TURN = ['--check', 'exit 1', '--max-turns', '1', '--cooldown', '0'];

/** A git repository with one commit (and `files`), removed when the test ends. */
export function repo(files: Record<string, string> = { 'README.md': '# demo\n' }) {
  return gitdir({ files, initialCommit: true });
}

/** Achieved or failed. */
export function isFinished(goal: GoalRecord): boolean {
  return goal.status === 'achieved' || goal.status === 'failed';
}

/** `goald loop <args>` (human output): the loop id, workspace and next run it printed. */
export async function createLoop(sandbox: GoaldSandbox, args: string[]): Promise<{ id: string; workspace: string; nextRunAt: string }> {
  const run = await sandbox.run(['loop', ...args]);
  expect(run.stderr, run.stderr).toBe('');
  expect(run.code).toBe(0);
  const printed = /^loop (\S+) every (\S+) in (.+); next run (\S+)$/.exec(run.stdout.trim());
  expect(printed, run.stdout).not.toBeNull();
  const [, id = '', every = '', workspace = '', next = ''] = printed ?? [];
  expect(every).toBe(args[0]);
  expect(Number.isNaN(Date.parse(next))).toBe(false);
  return { id, workspace, nextRunAt: next };
}

/** `goald loop list --json --all`: every loop, stopped ones included. */
export async function listLoops(sandbox: GoaldSandbox, options: { all?: boolean } = { all: true }): Promise<{ daemon: boolean; loops: LoopRecord[] }> {
  const run = await sandbox.run(['loop', 'list', '--json', ...(options.all ? ['--all'] : [])]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { daemon: boolean; loops: LoopRecord[] };
}

/** One loop as `goald loop list --json --all` shows it. */
export async function loopOf(sandbox: GoaldSandbox, id: string): Promise<LoopRecord> {
  const loop = (await listLoops(sandbox)).loops.find((candidate) => candidate.id === id);
  if (!loop) throw new Error(`loop ${id} is not listed`);
  return loop;
}

/** `goald history --loop <id> --json`: the loop's runs, oldest first. */
export async function loopHistory(sandbox: GoaldSandbox, id: string): Promise<GoalRecord[]> {
  const run = await sandbox.run(['history', '--loop', id, '--json']);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals;
}

/** Polls the state file until the loop's runs (oldest first) satisfy `predicate`; then `goald history --loop` must agree. */
export async function waitForRuns(sandbox: GoaldSandbox, id: string, what: string, predicate: (goals: GoalRecord[]) => boolean, timeoutMs = 15_000): Promise<GoalRecord[]> {
  await waitUntil(`loop ${id}: ${what}`, () => {
    const goals = readGoals(sandbox)
      .filter((goal) => goal.loopId === id)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    return predicate(goals);
  }, timeoutMs);
  return loopHistory(sandbox, id);
}

/** The prompt goald gave the agent in one turn of a goal. */
export function promptOf(sandbox: GoaldSandbox, goalId: string, turn = 1): Promise<string> {
  return readFile(path.join(sandbox.home, 'goals', goalId, `turn-${turn}.prompt.txt`), 'utf8');
}

export const HOUR_MS = 3_600_000;

/** Polls the state file (cheaper than a CLI run per poll) until the stored loop satisfies `predicate`. */
export function waitForStoredLoop(sandbox: GoaldSandbox, id: string, what: string, predicate: (loop: LoopRecord) => boolean, timeoutMs = 15_000): Promise<LoopRecord> {
  return waitUntil(`loop ${id} ${what}`, () => {
    const loop = storedLoops(sandbox).find((candidate) => candidate.id === id);
    return loop && predicate(loop) ? loop : undefined;
  }, timeoutMs);
}

/** Edits the stored loops while no daemon runs (how a test stands in for hours of downtime). */
export async function rewriteStoredLoops(sandbox: GoaldSandbox, edit: (loop: LoopRecord) => void): Promise<void> {
  expect(sandboxDaemonPid(sandbox)).toBeNull();
  const file = path.join(sandbox.home, 'state.json');
  const state = JSON.parse(await readFile(file, 'utf8')) as { loops: LoopRecord[] };
  state.loops.forEach(edit);
  await writeFile(`${file}.edit`, JSON.stringify(state));
  await rename(`${file}.edit`, file);
}

/** The loops in the sandbox's state file (empty before the first write). */
export function storedLoops(sandbox: GoaldSandbox): LoopRecord[] {
  try {
    return (JSON.parse(readFileSync(path.join(sandbox.home, 'state.json'), 'utf8')) as { loops: LoopRecord[] }).loops;
  } catch {
    return [];
  }
}

/** A duration loop keeps an exact cadence: every deadline is createdAt + k × period. */
export function expectOnGrid(loop: LoopRecord, periodMs: number): void {
  expect(loop.nextRunAt).not.toBeNull();
  expect((Date.parse(loop.nextRunAt ?? '') - Date.parse(loop.createdAt)) % periodMs).toBe(0);
}

/** Stops the sandbox's running daemon with `goald daemon stop` and waits until its process is gone. */
export async function stopDaemon(sandbox: GoaldSandbox): Promise<void> {
  const pid = sandboxDaemonPid(sandbox);
  expect(pid).not.toBeNull();
  const stopped = await sandbox.run(['daemon', 'stop']);
  expect(stopped.code, stopped.stderr).toBe(0);
  await waitUntilGone(pid as number, 10_000);
}

/** A usage error: exit 2, nothing on stdout, one line on stderr matching `pattern`. */
export function expectOneLineError(run: GoaldRun, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(pattern);
}
