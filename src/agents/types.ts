// The agent contract. An adapter runs one turn of a coding agent as a child process in its own process
// group and reports what happened as a value: agent failure is a TurnResult, never a thrown error.

export type TurnOutcome =
  | 'completed' // exited 0
  | 'failed' // exited non-zero or by a signal it did not get from us
  | 'timed-out' // turn timeout: the group was killed
  | 'token-limit' // per-turn token limit: the group was killed live
  | 'aborted' // the caller's signal aborted (stop, shutdown)
  | 'spawn-failed'; // the executable could not be started (missing, not executable)

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Usually input + output; adapters may add cached/reasoning tokens the CLI reports. */
  totalTokens: number;
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
  /** Called once the child is running, with its pid (= its process group id). */
  onSpawn?: (pid: number) => void;
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
}

export interface AgentAdapter {
  readonly name: string;
  /** The model the agent uses, when known (same-model refusal). */
  readonly model: string | null;
  /**
   * Runs one turn. Must kill the whole process group when `signal` aborts, on timeout and on the token
   * limit (SIGTERM, then SIGKILL after a grace period), and must resolve — never reject — for any agent
   * failure.
   */
  runTurn(input: TurnInput, signal: AbortSignal): Promise<TurnResult>;
  /** Suspends (SIGSTOP) or continues (SIGCONT) the running turn's process group, if any. */
  suspend?(): void;
  resume?(): void;
}
