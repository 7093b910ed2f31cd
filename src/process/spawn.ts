// Runs one agent child process in its own process group: output streams to the transcript on disk with
// only a bounded tail in memory, and every way the turn can end (timeout, token limit, stop) kills the
// whole group — SIGTERM, then SIGKILL after a grace period. Agents start their processes only through it.
// Over 400 lines because every way a turn's process can end (exit, timeout with paused time excluded,
// token limit, abort, stray and escaped processes, pipes held open) is settled in this one place.

import { spawn, type ChildProcess, type ChildProcessByStdio, type IOType } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { monotonicMs } from '../clock.js';
import { errnoCodeOf } from '../errno.js';
import { BWRAP_INFO_FD, bwrapInfoArgs, readSandboxInitPid, waitForSandboxEnd } from '../sandbox/sandbox-end.js';
import type { SandboxWrap } from '../sandbox/types.js';
import type { ReadyLeader } from './ready-leader.js';
import { createBoundedTail } from './bounded-tail.js';
import { findOnPath, executableProblem } from './find-on-path.js';
import { findTool } from './goald-tools.js';
import { killMarkedProcesses, markEnvironment, newProcessToken, readForkCount } from './escaped-processes.js';
import { createLineSplitter, type LineSplitter } from './line-splitter.js';
import { isGroupAlive, signalGroup } from './process-group.js';
import { SIGKILL_GRACE_MS, terminateGroup, type TerminationOutcome } from './terminate-group.js';
import { openTranscript } from './transcript.js';

/** Output kept in memory per process (the transcript on disk has all of it). */
export const OUTPUT_TAIL_BYTES = 16 * 1024;
// Once the group is gone, how long the pipes may stay open: a process that left the group (setsid) can
// still hold them, and must not keep the turn open forever.
const STDIO_CLOSE_WAIT_MS = 1_000;
// The transcript header shows at most this much of the command.
const HEADER_COMMAND_CHARS = 500;

/** Why goald killed the group; the first reason wins. */
export type KillReason = 'timeout' | 'token-limit' | 'aborted';
export type OutputStream = 'stdout' | 'stderr';

export interface SpawnAgentOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed; null gives the child no stdin (/dev/null). */
  stdin: string | null;
  /** Output is appended here after a header line (the directory is created). */
  transcriptPath: string;
  /** Shown in the transcript header instead of command + args (e.g. without a substituted prompt). */
  label?: string;
  /** Kill the group after it has run this long (0 = never). Time suspended does not count. */
  timeoutMs: number;
  /** Time between SIGTERM and SIGKILL; SIGKILL_GRACE_MS unless a test needs it shorter. */
  killGraceMs?: number;
  /** Aborting kills the group with reason `aborted`. */
  signal?: AbortSignal;
  /**
   * Called once the child runs, with its pid (= its process group id) and the token in its environment
   * (GOALD_TURN_TOKEN) that marks every process it starts, also those that leave the group.
   */
  onSpawn?(pid: number, token: string): void;
  /** Each decoded chunk of output as it arrives, for live counting. */
  onOutput?(text: string, stream: OutputStream): void;
  /** Each complete line, per stream; lines longer than `maxLineChars` arrive cut. */
  onLine?(line: string, stream: OutputStream): void;
  /** The longest line onLine receives whole (default MAX_LINE_CHARS); JSON event streams need more. */
  maxLineChars?: number;
  /** Run inside this sandbox (src/sandbox/); null or absent: as is. */
  sandbox?: SandboxWrap | null;
  /** The process started ahead for this turn (process/ready-leader.ts, in the same sandbox and cwd): claimed instead of a spawn. */
  ready?: ReadyLeader | undefined;
}

export interface ProcessResult {
  /** Null when the process never started. */
  pid: number | null;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The first reason goald killed the group; null when the process ended on its own. */
  terminationReason: KillReason | null;
  /** Why the process could not be started, in one line; null when it started. */
  spawnError: string | null;
  /** From spawn until the group was gone and the output read, including time suspended. */
  durationMs: number;
  /** Time spent suspended (SIGSTOP). */
  pausedMs: number;
  /** The last OUTPUT_TAIL_BYTES of stdout and stderr, interleaved as they arrived. */
  outputTail: string;
  outputBytes: number;
  /** Members of the group were still running when the leader exited; they were killed. */
  strayProcessesKilled: boolean;
  /** Processes started by the agent that had left its group (setsid, double fork), killed once it was gone. */
  escapedProcessesKilled: number;
  /** Set when the transcript could not be written. */
  transcriptError: string | null;
}

export interface AgentProcess {
  /** The child's pid and process group id; null when it never started. */
  readonly pid: number | null;
  /** Resolves once the whole group is gone and the transcript is closed; never rejects. */
  readonly done: Promise<ProcessResult>;
  /** Kills the group (SIGTERM, SIGKILL after the grace); records `reason` unless one was recorded. */
  kill(reason: KillReason): void;
  /** Stops the whole group (SIGSTOP) and pauses the timeout clock. */
  suspend(): void;
  /** Continues the group (SIGCONT) and re-arms the timeout for the time that was left. */
  resume(): void;
}

export interface GroupLeaderOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Marks the child's environment (GOALD_TURN_TOKEN), so killMarkedProcesses finds what it leaves. */
  token?: string;
  /** `pipe` to write the child's stdin; `ignore` gives it /dev/null. */
  stdin: 'pipe' | 'ignore';
  /** Run inside this sandbox: the sandbox's process leads the group, the command runs inside it. */
  sandbox?: SandboxWrap | null;
}

/** A group leader's child process, with stdout and stderr piped. */
export type GroupLeader = ChildProcessByStdio<Writable | null, Readable, Readable> & {
  /** Sandboxed: the host pid of the sandbox's init (null when bwrap named none); unsandboxed: null. */
  readonly sandboxInit: Promise<number | null> | null;
};

// `setpriv`, once childrenDieWithThisProcess() found it: every group leader then runs under it.
let deathSignalWrapper: string | null = null;

/**
 * From now on, every group leader this process starts (agents, checks) is killed by the kernel when this
 * process dies, however it dies (PR_SET_PDEATHSIG, through util-linux's `setpriv --pdeathsig KILL`): a
 * cluster worker SIGKILLed mid-turn leaves no agent editing a worktree or pushing. In the sandbox (the
 * default) the whole turn goes with it, bwrap's pid namespace ending with its init; unsandboxed, the
 * leader does. False, and nothing changes, where `setpriv` is not installed.
 */
export function childrenDieWithThisProcess(env: NodeJS.ProcessEnv = process.env): boolean {
  deathSignalWrapper = findTool('setpriv', { env });
  return deathSignalWrapper !== null;
}

/**
 * Starts a child that leads a new process group (so one signal to -pid reaches it and everything it
 * starts), with stdout and stderr piped. May throw synchronously (a NUL byte in an argument); other start
 * failures arrive on its 'error' event, with `pid` undefined.
 */
export function spawnGroupLeader(command: string, args: readonly string[], options: GroupLeaderOptions): GroupLeader {
  const env = options.token === undefined ? options.env : markEnvironment(options.env, options.token);
  const { sandbox } = options;
  const [wrapped, wrappedArgs] = sandbox == null ? [command, args] : [sandbox.executable, [...sandbox.args, ...bwrapInfoArgs(), '--', command, ...args]];
  // setpriv sets the signal and execs the command: same pid, same group, same descriptors.
  const [file, argv] = deathSignalWrapper === null ? [wrapped, wrappedArgs] : [deathSignalWrapper, ['--pdeathsig', 'KILL', '--', wrapped, ...wrappedArgs]];
  // A sandboxed leader (bwrap) also gets its info descriptor: a pipe goald reads the init's pid from.
  const stdio: IOType[] = [options.stdin, 'pipe', 'pipe', ...(sandbox == null ? [] : ['pipe' as const])];
  const child: ChildProcess = spawn(file, argv, { cwd: options.cwd, env, detached: true, stdio });
  if (!hasOutputPipes(child)) throw new Error(`spawning ${file} gave no output pipes`);
  const info = child.stdio[BWRAP_INFO_FD];
  return Object.assign(child, { sandboxInit: sandbox != null && info instanceof Readable ? readSandboxInitPid(info) : null });
}

/**
 * Resolves true once nothing of a sandboxed leader runs: bwrap exits with its command, while what the
 * command left running lives on in the namespace for a moment (src/sandbox/sandbox-end.ts). False when
 * that cannot be told (no sandbox, bwrap named no init, or the init is stuck): the caller ends the group.
 */
export async function sandboxEnded(leader: GroupLeader): Promise<boolean> {
  const initPid = await leader.sandboxInit;
  if (initPid === null || leader.pid === undefined) return false;
  return waitForSandboxEnd(initPid, leader.pid);
}

function hasOutputPipes(child: ChildProcess): child is ChildProcessByStdio<Writable | null, Readable, Readable> {
  return child.stdout !== null && child.stderr !== null;
}

/** Starts an agent process in its own process group and supervises it until the whole group is gone. */
export function spawnAgentProcess(options: SpawnAgentOptions): AgentProcess {
  const startedAt = monotonicMs();
  const label = options.label ?? [options.command, ...options.args].join(' ');
  const transcript = openTranscript(
    options.transcriptPath,
    `# goald agent transcript · started ${new Date().toISOString()} · ${truncate(label, HEADER_COMMAND_CHARS)}`,
  );
  const tail = createBoundedTail(OUTPUT_TAIL_BYTES);

  const notStarted = (spawnError: string | null, terminationReason: KillReason | null): AgentProcess => {
    const result: ProcessResult = {
      pid: null,
      exitCode: null,
      signal: null,
      terminationReason,
      spawnError,
      durationMs: monotonicMs() - startedAt,
      pausedMs: 0,
      outputTail: '',
      outputBytes: 0,
      strayProcessesKilled: false,
      escapedProcessesKilled: 0,
      transcriptError: null,
    };
    const footer = spawnError === null ? '# not started: aborted before spawn' : `# spawn failed: ${spawnError}`;
    transcript.close(footer);
    const done = Promise.resolve({ ...result, transcriptError: transcript.error });
    return { pid: null, done, kill() {}, suspend() {}, resume() {} };
  };

  if (options.signal?.aborted === true) return notStarted(null, 'aborted');

  // Inside a sandbox, bwrap runs the command (setpriv too, for a worker's children): one it cannot find
  // would look like the agent failing.
  if ((options.sandbox != null || deathSignalWrapper !== null) && !canExec(options.command, options.cwd, options.env)) {
    return notStarted(`cannot start ${options.command}: ${options.command.includes('/') ? 'no such file' : 'not found on PATH'}`, null);
  }
  const stdin = options.stdin === null ? 'ignore' : 'pipe';
  // Started ahead (process/ready-leader.ts): handed its command now, its token kept.
  const claimed = options.ready?.claim(options.command, options.args, options.env, stdin, options.cwd) ?? null;
  const token = claimed === null ? newProcessToken() : claimed.token;
  const forksBefore = claimed === null ? readForkCount() : claimed.forksBefore;
  let child: GroupLeader;
  try {
    child =
      claimed?.leader ??
      spawnGroupLeader(options.command, options.args, {
        cwd: options.cwd,
        env: options.env,
        token,
        stdin,
        sandbox: options.sandbox,
      });
  } catch (error) {
    // Synchronous refusals: arguments or environment holding a NUL byte, and the like.
    return notStarted(`cannot start ${options.command}: ${errorMessage(error)}`, null);
  }
  const pid = child.pid;
  if (pid === undefined) {
    // ENOENT, EACCES, E2BIG, a missing cwd: Node reports them on the 'error' event right after spawn().
    const failed = new Promise<AgentProcess>((resolve) => {
      child.once('error', (error) => {
        void describeSpawnError(error, options).then((message) => resolve(notStarted(message, null)));
      });
    });
    return {
      pid: null,
      done: failed.then((unstarted) => unstarted.done),
      kill() {},
      suspend() {},
      resume() {},
    };
  }
  const groupId: number = pid;

  const killGraceMs = options.killGraceMs ?? SIGKILL_GRACE_MS;
  let terminationReason: KillReason | null = null;
  let exitCode: number | null = null;
  let exitSignal: NodeJS.Signals | null = null;
  let leaderExited = false;
  // Set once the group is being terminated; settles when it is gone.
  let termination: Promise<TerminationOutcome> | null = null;

  // The timeout clock runs only while the group is not suspended.
  let timeoutTimer: NodeJS.Timeout | undefined;
  let remainingMs = options.timeoutMs;
  let runningSince = startedAt;
  let suspendedSince: number | null = null;
  let pausedMs = 0;

  const armTimeout = (): void => {
    if (options.timeoutMs <= 0 || leaderExited || termination !== null) return;
    runningSince = monotonicMs();
    timeoutTimer = setTimeout(() => kill('timeout'), Math.max(0, remainingMs));
  };
  const disarmTimeout = (): void => {
    if (timeoutTimer === undefined) return;
    clearTimeout(timeoutTimer);
    timeoutTimer = undefined;
    remainingMs -= monotonicMs() - runningSince;
  };
  const endSuspension = (): void => {
    if (suspendedSince === null) return;
    pausedMs += monotonicMs() - suspendedSince;
    suspendedSince = null;
  };

  const terminate = (): Promise<TerminationOutcome> => {
    if (termination !== null) return termination;
    disarmTimeout();
    // terminateGroup continues a suspended group, so suspended time ends here.
    endSuspension();
    termination = terminateGroup(groupId, { graceMs: killGraceMs });
    return termination;
  };

  function kill(reason: KillReason): void {
    // Once the leader exited, its exit decides the outcome; leftovers are being killed already.
    if (leaderExited) return;
    terminationReason ??= reason;
    void terminate();
  }

  const suspend = (): void => {
    if (leaderExited || termination !== null || suspendedSince !== null) return;
    signalGroup(groupId, 'SIGSTOP');
    suspendedSince = monotonicMs();
    disarmTimeout();
  };

  const resume = (): void => {
    if (suspendedSince === null || leaderExited || termination !== null) return;
    signalGroup(groupId, 'SIGCONT');
    endSuspension();
    armTimeout();
  };

  const onAbort = (): void => kill('aborted');
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const decoders: Array<{ decoder: StringDecoder; stream: OutputStream; splitter: LineSplitter | null }> = [];
  const readables = [
    { readable: child.stdout, stream: 'stdout' as const },
    { readable: child.stderr, stream: 'stderr' as const },
  ];
  for (const { readable, stream } of readables) {
    if (readable === null) continue;
    const onLine = options.onLine;
    const splitter = onLine === undefined ? null : createLineSplitter((line) => onLine(line, stream), options.maxLineChars);
    const decoder = new StringDecoder('utf8');
    decoders.push({ decoder, stream, splitter });
    readable.on('data', (chunk: Buffer) => {
      tail.append(chunk);
      // Written before the next chunk is read: an agent printing faster than the disk takes it waits.
      transcript.write(chunk);
      if (options.onOutput === undefined && splitter === null) return;
      const text = decoder.write(chunk);
      options.onOutput?.(text, stream);
      splitter?.push(text);
    });
  }

  if (typeof options.stdin === 'string' && child.stdin !== null) {
    // EPIPE when the agent exits without reading its stdin: not our failure, nor the agent's.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin);
  }
  // After a successful spawn, 'error' only reports a failed kill(); signals go to the group directly.
  child.on('error', () => {});

  const stdioClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  // Waits until no member of the group runs; members that outlived the leader are killed.
  const reapGroup = async (): Promise<boolean> => {
    if (!(await isGroupAlive(groupId))) return false;
    await terminate();
    return true;
  };

  const settle = async (): Promise<ProcessResult> => {
    // A sandboxed leader is bwrap: once its namespace has ended, nothing of the turn is left (none can leave
    // the namespace), and scanning /proc while the kernel tears the namespace down costs 10–30 ms a turn.
    const nothingLeft = options.sandbox != null && termination === null && (await sandboxEnded(child));
    const strayProcessesKilled = nothingLeft ? false : await reapGroup();
    // Before waiting for the pipes: an escaped process usually still holds them.
    const escapedProcessesKilled = nothingLeft ? 0 : await killMarkedProcesses(token, { bornAfter: { pid: groupId, forksBefore } });
    await waitAtMost(stdioClosed, STDIO_CLOSE_WAIT_MS);
    child.stdout?.destroy();
    child.stderr?.destroy();
    for (const { decoder, stream, splitter } of decoders) {
      const rest = decoder.end();
      if (rest.length > 0) {
        options.onOutput?.(rest, stream);
        splitter?.push(rest);
      }
      splitter?.flush();
    }
    options.signal?.removeEventListener('abort', onAbort);
    const durationMs = monotonicMs() - startedAt;
    transcript.close(
      `# goald: ${describeEnd(exitCode, exitSignal, terminationReason)} after ${Math.round(durationMs)} ms` +
        (strayProcessesKilled ? ' (killed processes the agent left running)' : '') +
        (escapedProcessesKilled > 0 ? ` (killed ${escapedProcessesKilled} processes that had left the agent's process group)` : ''),
    );
    return {
      pid: groupId,
      exitCode,
      signal: exitSignal,
      terminationReason,
      spawnError: null,
      durationMs,
      pausedMs,
      outputTail: tail.text(),
      outputBytes: tail.totalBytes,
      strayProcessesKilled,
      escapedProcessesKilled,
      transcriptError: transcript.error,
    };
  };

  const done = new Promise<ProcessResult>((resolve) => {
    child.once('exit', (code, signal) => {
      leaderExited = true;
      exitCode = code;
      exitSignal = signal;
      disarmTimeout();
      endSuspension();
      void settle().then(resolve);
    });
  });

  armTimeout();
  options.onSpawn?.(groupId, token);

  return { pid: groupId, done, kill, suspend, resume };
}

// One line for the transcript footer.
function describeEnd(code: number | null, signal: NodeJS.Signals | null, reason: KillReason | null): string {
  const how = signal !== null ? `ended by ${signal}` : `exited with code ${String(code)}`;
  return reason === null ? how : `killed (${reason}), ${how}`;
}

// Turns Node's terse spawn errors ("spawn foo ENOENT") into a line that says what to fix.
async function describeSpawnError(error: unknown, options: SpawnAgentOptions): Promise<string> {
  const prefix = `cannot start ${options.command}`;
  const code = errnoCodeOf(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    if (!(await isDirectory(options.cwd))) return `${prefix}: the working directory ${options.cwd} does not exist`;
    return options.command.includes('/') ? `${prefix}: no such file` : `${prefix}: not found on PATH`;
  }
  if (code === 'EACCES') return `${prefix}: permission denied (is it an executable file?)`;
  if (code === 'E2BIG') return `${prefix}: its arguments and environment are too large (E2BIG)`;
  return `${prefix}: ${errorMessage(error)}`;
}

// Whether `command` names an executable (by path from `cwd`, or on the environment's PATH).
function canExec(command: string, cwd: string, env: NodeJS.ProcessEnv): boolean {
  if (command.includes('/')) return executableProblem(resolve(cwd, command)) === null;
  return findOnPath(command, { pathVariable: env.PATH ?? '', cwd }) !== null;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function truncate(text: string, maxChars: number): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > maxChars ? `${oneLine.slice(0, maxChars)}…` : oneLine;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
