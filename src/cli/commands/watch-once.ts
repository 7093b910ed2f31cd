// `goald watch [goal] --once`: one frame of the watch view, printed as plain text, for scripts and tests.
// It runs on the fast path (fast-command.ts) like `goald status`: no commander, no ink, and the daemon
// asked for the goals first (one round trip) and pinged or started only when that fails.

import { fstatSync } from 'node:fs';

import { ensureDaemon, daemonSocketPath } from '../../daemon/auto-start.js';
import { createDaemonClient, type DaemonClient } from '../../daemon/client.js';
import { resolveGoalRef, resolveLoopRef } from '../../daemon/resolve-goal.js';
import { EXIT, GoaldError, isGoaldError } from '../../errors.js';
import type { GoalRecord } from '../../../state/types.js';
import type { CliIO } from '../io.js';
import { frameText, renderFrame } from '../watch/watch-frame.js';
import { daemonWatchSource } from '../watch/watch-source.js';

const DEFAULT_COLUMNS = 100;
const DEFAULT_ROWS = 30;

/** The daemon's client and its goals: one request when it runs; started (as every client does) when not. */
export async function connectWithGoals(env: NodeJS.ProcessEnv): Promise<{ client: DaemonClient; goals: GoalRecord[] }> {
  const client = createDaemonClient(daemonSocketPath(env));
  try {
    return { client, goals: await client.listGoals() };
  } catch (error) {
    if (!isGoaldError(error) || error.code !== 'daemon-unreachable') throw error;
  }
  const started = await ensureDaemon(env);
  return { client: started, goals: await started.listGoals() };
}

/**
 * The goal or loop `ref` names (exit 2 when neither does), or null to select the first row. The loops are
 * asked for only when no goal matches.
 */
export async function selectedRowId(client: DaemonClient, goals: readonly GoalRecord[], ref: string | undefined): Promise<string | null> {
  if (ref === undefined) return null;
  try {
    return resolveGoalRef(goals, ref).id;
  } catch (goalError) {
    if (!isGoaldError(goalError) || goalError.code !== 'not-found') throw goalError;
    try {
      return resolveLoopRef(await client.listLoops(), ref).id;
    } catch (loopError) {
      if (!isGoaldError(loopError) || loopError.code !== 'not-found') throw loopError;
      throw new GoaldError('not-found', `no goal or loop matches ${JSON.stringify(ref)}`, 'list them with: goald status and goald loop list', { cause: goalError });
    }
  }
}

// The terminal's size, or COLUMNS/LINES when stdout is not a terminal (a script's pipe), else 100×30.
function frameSize(env: NodeJS.ProcessEnv): { width: number; height: number } {
  const fromEnv = (value: string | undefined, fallback: number): number => {
    const parsed = Number(value);
    return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
  };
  // Only a character device can be a terminal: a pipe or a file is never asked, as building process.stdout
  // to ask it costs more than the rest of the frame.
  const terminal = stdoutIsCharacterDevice() ? process.stdout : null;
  return {
    width: terminal?.columns ?? fromEnv(env.COLUMNS, DEFAULT_COLUMNS),
    height: terminal?.rows ?? fromEnv(env.LINES, DEFAULT_ROWS),
  };
}

function stdoutIsCharacterDevice(): boolean {
  try {
    return fstatSync(1).isCharacterDevice();
  } catch {
    return false; // closed
  }
}

/** Runs `goald watch [goal] --once`; resolves with the exit code. */
export async function runWatchOnce(ref: string | undefined, io: CliIO): Promise<number> {
  const { client, goals } = await connectWithGoals(io.env);
  const selected = await selectedRowId(client, goals, ref);
  const snapshot = await daemonWatchSource(client).load(selected, goals);
  const lines = renderFrame({
    goals: snapshot.goals,
    loops: snapshot.loops,
    selectedId: selected,
    ...frameSize(io.env),
    logLines: null,
    prompt: null,
    message: null,
  });
  io.out(frameText(lines));
  return EXIT.ok;
}
