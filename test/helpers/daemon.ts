// Helpers for end-to-end tests of the daemon: bounded waits on goals and pid files (wait.ts, never a sleep),
// goal records read straight from the state file (works with or without a daemon, even after kill -9),
// pid files written by agents, process states from /proc, and raw HTTP over the control socket.

import { request, type IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { readTurnRecords, type TurnRecord } from '../../state/index.js';
import type { GoalRecord } from '../../state/types.js';
import { parseJsonLines, type GoaldRun, type GoaldSandbox } from './run-goald.js';
import { waitUntil } from './wait.js';

// How often expectToHold re-checks a condition that must keep holding.
const HOLD_CHECK_MS = 25;

/** The goals in the sandbox's state file (empty before the first write). */
export function readGoals(sandbox: GoaldSandbox): GoalRecord[] {
  try {
    return (JSON.parse(readFileSync(path.join(sandbox.home, 'state.json'), 'utf8')) as { goals: GoalRecord[] }).goals;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** One goal's record from the state file. */
export function readGoal(sandbox: GoaldSandbox, id: string): GoalRecord {
  const goal = readGoals(sandbox).find((candidate) => candidate.id === id);
  if (!goal) throw new Error(`goal ${id} is not in the state file`);
  return goal;
}

/** The daemon's log (empty before it wrote one): for a failed assertion's message, where a daemon that died says why. */
export function daemonLog(sandbox: GoaldSandbox): string {
  try {
    return readFileSync(path.join(sandbox.home, 'daemon.log'), 'utf8');
  } catch {
    return '';
  }
}

/** Waits until the stored goal satisfies `predicate`; returns the record. */
export function waitForGoal(
  sandbox: GoaldSandbox,
  id: string,
  what: string,
  predicate: (goal: GoalRecord) => boolean,
  timeoutMs = 15_000,
): Promise<GoalRecord> {
  return waitUntil(`goal ${id} ${what}`, () => {
    const goal = readGoal(sandbox, id);
    return predicate(goal) ? goal : undefined;
  }, timeoutMs);
}

/** Waits until the goal has finished; returns the record. */
export function waitForFinished(sandbox: GoaldSandbox, id: string, timeoutMs = 20_000): Promise<GoalRecord> {
  return waitForGoal(sandbox, id, 'to finish', (goal) => goal.status === 'achieved' || goal.status === 'failed', timeoutMs);
}

/** The goal's turn records (goals/<id>/turns.jsonl). */
export async function readTurns(sandbox: GoaldSandbox, id: string): Promise<TurnRecord[]> {
  return readTurnRecords(path.join(sandbox.home, 'goals', id));
}

/** Runs `goald start ... --json` (daemon mode) and returns the submitted goal's id. */
export async function submitGoal(sandbox: GoaldSandbox, args: string[], options: { cwd?: string } = {}): Promise<{ id: string; queued: boolean; run: GoaldRun }> {
  const run = await sandbox.run(['start', ...args, '--json'], options);
  expect(run.stderr, run.stderr).toBe('');
  expect(run.code).toBe(0);
  const submitted = parseJsonLines(run.stdout).find((event) => event.type === 'goal.submitted');
  expect(submitted).toBeDefined();
  return { id: String(submitted?.id), queued: submitted?.queued === true, run };
}

/** Waits for a pid file an agent writes (`echo $$ > file`) and returns the pid. */
export function waitForPidFile(file: string, timeoutMs = 15_000): Promise<number> {
  return waitUntil(`pid file ${path.basename(file)}`, () => {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }, timeoutMs);
}

/** The one-letter scheduler state of a process (`S`, `R`, `T`, `Z`, ...), or null when it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: unknown;
}

/** A whole HTTP reply, its body also parsed as JSON when it is (null when not: the test says what it expected). */
export function readReply(res: IncomingMessage): Promise<RawReply> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const finish = (): void => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON
      }
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json });
    };
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', finish);
    res.on('close', finish); // resolving twice is a no-op
    res.on('error', () => undefined);
  });
}

/** One raw HTTP request over the control socket (no client library, so anything can be sent). */
export function rawRequest(
  socketPath: string,
  method: string,
  urlPath: string,
  body?: string | Buffer,
  headers: Record<string, string | number> = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ socketPath, method, path: urlPath, headers, agent: false, timeout: 10_000 }, (res) => {
      answered = true;
      void readReply(res).then(resolve);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer within 10 s`)));
    // A server that answers early (413) and closes resets the rest of the upload (EPIPE): the answer counts.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/**
 * A POST that declares a `declaredBytes` body but sends only its first 64 KiB, then waits for the answer:
 * a server that refuses oversized bodies answers from the header alone (sending the whole body would race
 * the server's close against our writes, EPIPE).
 */
export function rawOversizedRequest(socketPath: string, urlPath: string, declaredBytes: number): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method: 'POST',
        path: urlPath,
        headers: { 'Content-Type': 'application/json', 'Content-Length': declaredBytes },
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: JSON.parse(body) as unknown });
          req.destroy();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${urlPath}: no answer within 10 s`)));
    req.on('error', reject);
    req.write(Buffer.alloc(64 * 1024, 'a'));
  });
}

/** Asserts a 4xx error envelope `{ error: { code, message, hint } }` and returns its code. */
export function expectErrorEnvelope(reply: RawReply, status: number): string {
  expect(reply.status, reply.body).toBe(status);
  const envelope = reply.json as { error?: { code?: unknown; message?: unknown; hint?: unknown } } | null;
  expect(typeof envelope?.error?.code).toBe('string');
  expect(typeof envelope?.error?.message).toBe('string');
  expect(typeof envelope?.error?.hint).toBe('string');
  return String(envelope?.error?.code);
}

/** Checks `predicate` throughout `durationMs` (a window in which something must NOT happen); fails at the first false. */
export async function expectToHold(what: string, durationMs: number, predicate: () => boolean): Promise<void> {
  const end = Date.now() + durationMs;
  while (Date.now() < end) {
    if (!predicate()) throw new Error(`expected ${what} to hold for ${durationMs} ms, but it stopped holding`);
    await new Promise((resolve) => setTimeout(resolve, HOLD_CHECK_MS));
  }
}

/**
 * A shell agent whose turn N writes its pid to `<dir>/agent-N.pid`, starts a grandchild (`sleep 60`, pid in
 * `<dir>/child-N.pid`), then waits until the test creates `<dir>/go-N`; it then appends N to steps.txt in
 * the workspace. The test decides when each turn ends.
 */
export function gatedAgent(dir: string): {
  command: string;
  agentPidFile(turn: number): string;
  childPidFile(turn: number): string;
  open(turn: number): Promise<void>;
} {
  const at = (name: string): string => path.join(dir, name);
  return {
    command:
      `echo $$ > ${at('agent-$GOALD_TURN.pid')}; sleep 60 & echo $! > ${at('child-$GOALD_TURN.pid')}; ` +
      `while [ ! -f ${at('go-$GOALD_TURN')} ]; do sleep 0.05; done; kill $!; echo "$GOALD_TURN" >> steps.txt`,
    agentPidFile: (turn) => at(`agent-${turn}.pid`),
    childPidFile: (turn) => at(`child-${turn}.pid`),
    open: (turn) => writeFile(at(`go-${turn}`), ''),
  };
}

/** A check that passes once steps.txt has `count` lines. */
export function stepsCheck(count: number): string {
  return `test "$(cat steps.txt 2>/dev/null | wc -l)" -ge ${count}`;
}
