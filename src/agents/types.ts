// The agent contract. An adapter runs one turn of a coding agent as a child process in its own process
// group and reports what happened as a value: agent failure is a TurnResult, never a thrown error.

import type { ReadyLeader } from '../process/ready-leader.js';
import type { SandboxWrap } from '../sandbox/types.js';

export type TurnOutcome =
  | 'completed' // exited 0
  | 'failed' // exited non-zero or by a signal it did not get from us
  | 'timed-out' // turn timeout: the group was killed
  | 'token-limit' // per-turn token limit: the group was killed live
  | 'aborted' // the caller's signal aborted (stop, shutdown)
  | 'usage-limited' // the agent's provider refused for a usage/rate limit (not a failure: the goal pauses)
  | 'spawn-failed'; // the executable could not be started (missing, not executable)

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Usually input + output; adapters may add cached/reasoning tokens the CLI reports. */
  totalTokens: number;
  /**
   * Input tokens served from the provider's prompt cache, when the CLI reports them (Claude Code's cache
   * reads, Codex's cached input). Not part of inputTokens nor totalTokens: every model request re-reads the
   * whole conversation from the cache, so counting them would trip the token limits on ordinary turns.
   */
  cachedInputTokens?: number;
  /** USD reported by the agent (or priced); null when unknown. */
  costUsd: number | null;
  /** True when tokens were estimated (chars / 4) rather than reported. */
  estimated: boolean;
}

export interface TurnInput {
  goalId: string;
  turn: number;
  condition: string;
  prompt: string;
  workspace: string;
  /** File the prompt was saved to; also given to the agent as GOALD_PROMPT_FILE. */
  promptPath: string;
  /** Where the full stdout+stderr of the agent is streamed. */
  transcriptPath: string;
  /** Kill the group after this long (0 = no timeout). Paused time (SIGSTOP) is not counted. */
  timeoutMs: number;
  /** Kill the group when the turn's tokens pass this (0 = no limit). */
  turnTokenLimit: number;
  /**
   * A per-turn directory (already created) for the adapter's own files, e.g. the state Claude Code's
   * PostToolUse hook keeps (GOALD_HOOK_STATE_DIR); the supervisor reads `drift-pause` there after the turn.
   * Given only to an adapter whose `keepsTurnState` is true.
   */
  stateDir?: string;
  /** In-turn recitation cadence for adapters with hooks (tool calls between reflections). */
  reciteEveryToolCalls?: number;
  /** The goal's checks as they stand this turn, for adapters that verify their own work (builtin). */
  checks?: ReadonlyArray<{ name: string; run: string; timeoutMs: number }>;
  /** Called once the child is running, with its pid (= its process group id) and its GOALD_TURN_TOKEN. */
  onSpawn?: (pid: number, token: string) => void;
  /** The sandbox the agent's process runs in (src/sandbox/); null or absent: unsandboxed. */
  sandbox?: SandboxWrap | null;
  /** The turn's process, started ahead in that sandbox and the workspace: the adapter's spawn claims it. */
  ready?: ReadyLeader;
}

export interface TurnResult {
  outcome: TurnOutcome;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  usage: Usage;
  /** The agent's last message (last non-empty output line for plain commands), bounded. */
  finalMessage: string;
  /** The last few KiB of output. */
  outputTail: string;
  /** A one-line explanation when outcome is not `completed`. */
  error?: string;
  sessionId?: string;
  model?: string;
  /** Tool calls the agent made, in order, when the adapter can parse them (drift detection). */
  toolCalls?: ToolCall[];
  /** Tool calls the agent's CLI denied for lack of permission (Claude Code's permission_denials). */
  permissionDenials?: number;
  /** Set with outcome `usage-limited`: when the limit resets (ms since epoch), if known. */
  usageLimit?: { resetAt: number | null; message: string };
  /** True when costUsd was computed from a price table rather than reported by the CLI. */
  costComputed?: boolean;
  /** Why the transcript could not be written (disk full); its output is then only in `outputTail`. */
  transcriptError?: string;
  /** When the agent ran, in epoch milliseconds: set by the supervisor, not the adapter (supervisor/agent-windows.ts). */
  window?: { from: number; to: number };
}

/** One tool call as the drift detector sees it. */
export interface ToolCall {
  /** The tool's name as the CLI reports it (`Write`, `Bash`, `apply_patch`, `exec_command`, ...). */
  name: string;
  /** The file written or edited, when the tool writes one. */
  filePath?: string;
  /** The shell command run, when the tool runs one. */
  command?: string;
}

export interface AgentAdapter {
  readonly name: string;
  /** The model the agent uses, when known (same-model refusal). */
  readonly model: string | null;
  /**
   * True when the adapter's turns write to `TurnInput.stateDir` (Claude Code's PostToolUse hook, the builtin
   * agent): only then is the directory made, passed and, in the sandbox, writable. A turn's path pays for
   * each directory made (~0.3–0.9 ms on a busy journal), so others get none.
   */
  readonly keepsTurnState?: boolean;
  /**
   * The environment its turns start from, before each turn's own variables (the GOALD_* ones, a vendor's
   * setting): a process started ahead of a turn is given it, so only what the turn changes crosses its
   * gate (process/ready-leader.ts). Only speed: any environment is right, the turn's own is what runs.
   */
  readonly environment?: NodeJS.ProcessEnv;
  /**
   * Runs one turn. Must kill the whole process group when `signal` aborts, on timeout and on the token
   * limit (SIGTERM, then SIGKILL after a grace period), and must resolve — never reject — for any agent
   * failure.
   */
  runTurn(input: TurnInput, signal: AbortSignal): Promise<TurnResult>;
  /**
   * Checks, before turn 1, what the adapter can only learn by asking (the builtin agent's model server
   * answers and knows its model); throws a GoaldError for bad input, so `goald start` exits 2 at once.
   */
  preflight?(): Promise<void>;
  /** Suspends (SIGSTOP) or continues (SIGCONT) the running turn's process group, if any. */
  suspend?(): void;
  resume?(): void;
}
