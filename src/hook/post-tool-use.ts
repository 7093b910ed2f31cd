// `goald hook post-tool-use`: Claude Code runs it after every tool call with a JSON payload on stdin. It
// records the call in the turn's state directory and, every N calls, scores drift and answers with the
// reflection as `hookSpecificOutput.additionalContext`, which Claude Code adds to the model's context.
//
// It runs on every tool call, so its code path imports only node built-ins and small pure modules (no zod,
// no SDKs, no commander), and its file I/O is synchronous: in a process that lives for one call, the first
// async fs call pays for starting libuv's thread pool (measured: 1–6 ms against 0.2 ms for the same three
// sync calls). It must never fail the agent's tool call: any problem is logged to `<dir>/hook-errors.log`
// and the hook exits 0 printing nothing.
//
// Files in the state directory (GOALD_HOOK_STATE_DIR, one per turn, created by the adapter):
//   tool-calls.jsonl  one ToolCallRecord per tool call, in order
//   drift.jsonl       one DriftCheckRecord per check (every N calls)
//   drift-pause       written (a DriftCheckRecord) once DRIFT_PAUSE_CHECKS high checks came in a row
//   hook-errors.log   one line per internal error

import type { ToolCall } from '../agents/types.js';
import { isErrnoCode } from '../errno.js';
import {
  DRIFT_WINDOW,
  INITIAL_DRIFT_STATE,
  nextDriftState,
  scoreDrift,
  type DriftResult,
  type DriftState,
  type RepeatedAction,
} from '../prompt/drift.js';
import { renderReflection } from '../prompt/reflection.js';
import { redactSecrets } from '../secrets/redact.js';
import { readClaudeToolCall } from './claude-tool-call.js';

// Built-ins through process.getBuiltinModule rather than `import`: an ESM import of a built-in builds a
// module namespace over all of its exports, about 2 ms of start-up paid on every tool call (node 20).
const { appendFileSync, mkdirSync, readFileSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** The environment the adapter gives Claude Code, which passes it on to its hooks. */
export const HOOK_ENV = {
  stateDir: 'GOALD_HOOK_STATE_DIR',
  condition: 'GOALD_CONDITION',
  reciteEvery: 'GOALD_RECITE_EVERY',
} as const;

/** File names inside the state directory; the supervisor reads them after the turn. */
export const HOOK_FILES = {
  toolCalls: 'tool-calls.jsonl',
  drift: 'drift.jsonl',
  driftPause: 'drift-pause',
  errors: 'hook-errors.log',
} as const;

/** Default cadence when GOALD_RECITE_EVERY is unset or invalid (DESIGN.md § Prompt: every 10 tool calls). */
const DEFAULT_RECITE_EVERY = 10;

/** One line of tool-calls.jsonl. */
export interface ToolCallRecord extends ToolCall {
  /** Unique per hook run: how a run finds its own position when hooks run concurrently. */
  id: string;
}

/** One line of drift.jsonl, and the content of drift-pause. */
export interface DriftCheckRecord extends DriftResult, DriftState {
  /** ISO time of the check. */
  at: string;
  /** Tool calls of the turn so far, this one included. */
  toolCalls: number;
}

export interface HookOutcome {
  /** What to print on stdout: empty, or one JSON line for Claude Code. */
  stdout: string;
  /** Always 0: a hook problem must never fail the agent's tool call. */
  exitCode: number;
}

const SILENT: HookOutcome = Object.freeze({ stdout: '', exitCode: 0 });

/** Handles one PostToolUse call: records it, and every N calls returns the reflection for Claude Code. */
export function runPostToolUseHook(input: { stdin: string; env: NodeJS.ProcessEnv }): HookOutcome {
  const dir = input.env[HOOK_ENV.stateDir];
  // Not started by goald (or an adapter bug): nothing to record into, and nothing to say.
  if (dir === undefined || dir.trim() === '') return SILENT;
  try {
    return handleToolCall(dir, input.stdin, input.env);
  } catch (error) {
    logError(dir, error);
    return SILENT;
  }
}

function handleToolCall(dir: string, stdin: string, env: NodeJS.ProcessEnv): HookOutcome {
  const call = parsePayload(stdin);
  // A command the agent typed may hold a key it read somewhere; the state files must not.
  if (call.command !== undefined) call.command = redactSecrets(call.command, env);
  if (call.filePath !== undefined) call.filePath = redactSecrets(call.filePath, env);
  const record: ToolCallRecord = { id: makeRunId(), ...call };
  const toolCallsPath = join(dir, HOOK_FILES.toolCalls);
  // One short append per call: O_APPEND writes of one line do not interleave, so concurrent hooks (Claude
  // Code may run tools in parallel) each add exactly one whole line.
  appendCreatingDir(dir, toolCallsPath, `${JSON.stringify(record)}\n`);

  const every = readReciteEvery(env[HOOK_ENV.reciteEvery]);
  // This call's position is where its own line landed, not the line count: two hooks racing would both
  // see the same count, one cadence point would be missed and another hit twice.
  const lines = readFileSync(toolCallsPath, 'utf8').split('\n').filter((line) => line !== '');
  const position = lines.findIndex((line) => line.startsWith(`{"id":"${record.id}"`)) + 1;
  if (position === 0) throw new Error(`the line of tool call ${record.id} is missing from ${toolCallsPath}`);
  if (position % every !== 0) return SILENT;

  const task = env[HOOK_ENV.condition] ?? null;
  const recentCalls = lines.slice(0, position).slice(-DRIFT_WINDOW).flatMap(parseRecordLine);
  const drift = scoreDrift({ goal: task ?? '', recentCalls });
  const check = recordDriftCheck(dir, drift, position);
  if (check.shouldPause) writeFileSync(join(dir, HOOK_FILES.driftPause), `${JSON.stringify(check)}\n`, { mode: 0o600 });

  const reflection = renderReflection({ task, toolCallsSinceLastCheck: every, drift });
  const output = { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: reflection } };
  return { stdout: `${JSON.stringify(output)}\n`, exitCode: 0 };
}

// The tool call in a PostToolUse payload: `tool_name`, `tool_input` (file_path, command, ...), `cwd`.
function parsePayload(stdin: string): ToolCall {
  let payload: unknown;
  try {
    payload = JSON.parse(stdin);
  } catch {
    throw new Error(`stdin is not JSON: ${describeText(stdin)}`);
  }
  if (!isRecord(payload)) {
    throw new Error(`stdin is not a JSON object: ${describeText(stdin)}`);
  }
  const fields = payload;
  const event = fields.hook_event_name;
  if (event !== undefined && event !== 'PostToolUse') {
    throw new Error(`expected a PostToolUse payload, got hook_event_name ${JSON.stringify(event).slice(0, 40)}`);
  }
  const name = fields.tool_name;
  if (typeof name !== 'string' || name === '') throw new Error('the payload has no tool_name');
  const cwd = typeof fields.cwd === 'string' ? fields.cwd : undefined;
  return readClaudeToolCall(name, fields.tool_input, cwd);
}

// The adapter creates the directory before the turn; create it only if it is missing after all.
function appendCreatingDir(dir: string, path: string, text: string): void {
  try {
    appendFileSync(path, text, { mode: 0o600 });
  } catch (error) {
    if (!isErrnoCode(error, 'ENOENT')) throw error;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(path, text, { mode: 0o600 });
  }
}

// Appends this check to drift.jsonl, with the tracker state folded over all earlier checks of the turn.
function recordDriftCheck(dir: string, drift: DriftResult, toolCalls: number): DriftCheckRecord {
  const driftPath = join(dir, HOOK_FILES.drift);
  let earlier: DriftResult[] = [];
  try {
    earlier = readFileSync(driftPath, 'utf8').split('\n').flatMap(parseDriftLine);
  } catch (error) {
    if (!isErrnoCode(error, 'ENOENT')) throw error;
  }
  const state = [...earlier, drift].reduce(nextDriftState, INITIAL_DRIFT_STATE);
  const check: DriftCheckRecord = { at: new Date().toISOString(), toolCalls, ...drift, ...state };
  appendFileSync(driftPath, `${JSON.stringify(check)}\n`, { mode: 0o600 });
  return check;
}

// The tool call of one tool-calls.jsonl line; none for a torn or foreign line.
function parseRecordLine(line: string): ToolCall[] {
  const value = parseObjectLine(line);
  if (value === null || typeof value.name !== 'string') return [];
  const call: ToolCall = { name: value.name };
  if (typeof value.filePath === 'string') call.filePath = value.filePath;
  if (typeof value.command === 'string') call.command = value.command;
  return [call];
}

// The drift result of one drift.jsonl line; none for a torn or foreign line.
function parseDriftLine(line: string): DriftResult[] {
  const value = parseObjectLine(line);
  if (value === null || typeof value.score !== 'number') return [];
  const circular = typeof value.circular === 'number' ? value.circular : 0;
  const objective = typeof value.objective === 'number' ? value.objective : 0;
  return [{ score: value.score, circular, objective, repeated: repeatedActionOf(value.repeated) }];
}

function repeatedActionOf(value: unknown): RepeatedAction | null {
  if (!isRecord(value)) return null;
  const { kind, value: text, count } = value;
  return (kind === 'file' || kind === 'command') && typeof text === 'string' && typeof count === 'number'
    ? { kind, value: text, count }
    : null;
}

// The fields of a JSON object line; null for a blank or torn line or a value that is not an object.
function parseObjectLine(line: string): Record<string, unknown> | null {
  if (line.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  return isRecord(value) ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The cadence from GOALD_RECITE_EVERY: a positive integer, else DEFAULT_RECITE_EVERY. */
export function readReciteEvery(value: string | undefined): number {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return DEFAULT_RECITE_EVERY;
  const every = Number(value);
  return Number.isSafeInteger(every) && every > 0 ? every : DEFAULT_RECITE_EVERY;
}

function makeRunId(): string {
  return `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

function logError(dir: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(join(dir, HOOK_FILES.errors), `${new Date().toISOString()} ${message.replace(/\s+/g, ' ')}\n`, { mode: 0o600 });
  } catch {
    // Nowhere to log: stay silent rather than fail the agent's tool call.
  }
}

// Untrusted input described by its size only: a payload can carry file contents (secrets included), which
// must not reach the log.
function describeText(text: string): string {
  return text.trim() === '' ? '(empty)' : `(${Buffer.byteLength(text)} bytes)`;
}
