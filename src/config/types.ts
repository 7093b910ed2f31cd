// The resolved settings of one goal: what every other module reads. Produced by loadGoalSettings from
// flags > environment > workspace goal.config.json > user config > defaults. Never holds secrets: API keys
// are read from the environment at the moment a client is built.

export interface CheckSpec {
  /** Short label shown in progress lines and the final box. */
  name: string;
  /** Shell command run with `sh -c` in the workspace; exit 0 means pass. */
  run: string;
  timeoutMs: number;
}

export type AdapterName = 'command' | 'claude-code' | 'codex' | 'gemini' | 'aider' | 'builtin';

export interface AgentSpec {
  adapter: AdapterName;
  /** For `command`: the shell command. For structured adapters: the executable (default: its usual name). */
  command: string;
  /** Extra arguments for structured adapters. */
  args: string[];
  /** `fresh` starts a new session each turn (the recitation carries the state); `resume` reuses one id. */
  session: 'fresh' | 'resume';
  /** The agent's model, when known; used for the same-model refusal. */
  model: string | null;
  /** USD per million tokens by model name (or name prefix), for CLIs that report no cost (Codex). */
  prices: Record<string, ModelPriceSpec>;
  /**
   * Variables (names or `*` globs) the agent and the checks keep although they are another vendor's
   * credentials (src/secrets/child-env.ts). Read from the user's config file only.
   */
  passEnv?: string[];
  /** The builtin agent (adapter `builtin`): model calls per loop before the turn ends (default 30). */
  maxIterations?: number;
  /** The builtin agent: times the loop is re-entered after the goal's checks failed at its end (default 5). */
  verificationRetries?: number;
  /** The builtin agent: old tool results are elided before the conversation passes this (default 32 000). */
  maxContextTokens?: number;
  /** The builtin agent's run_command: `*` globs over the command line; deny wins, a non-empty allow must match. */
  commands?: { allow: string[]; deny: string[] };
}

/** USD per million tokens. */
export interface ModelPriceSpec {
  input: number;
  /** Input served from the prompt cache. */
  cachedInput: number;
  output: number;
  /** Input written to the cache; priced as input when absent. */
  cacheWrite?: number;
}

export type EvaluatorProvider = 'openai' | 'anthropic' | 'none';

/** Where an evaluator base URL was set: the user's config file, a workspace (or loop) file, a socket request. */
export type BaseURLSource = 'user-config' | 'workspace-config' | 'request';

export interface EvaluatorSpec {
  provider: EvaluatorProvider;
  /** Required unless provider is `none`. */
  model: string | null;
  /** Overrides OPENAI_BASE_URL / ANTHROPIC_BASE_URL. */
  baseURL: string | null;
  /**
   * Where `baseURL` came from. The API key is sent only to a base URL from the user's config (or the
   * daemon's own environment, or the provider's default); absent counts as untrusted.
   */
  baseURLFrom?: BaseURLSource;
  /** The user config's `evaluator.allowedBaseURLs`: untrusted base URLs the user accepts anyway. */
  allowedBaseURLs?: string[];
  /** Upper bound on the characters of evidence sent per call. */
  maxInputChars: number;
  /** When a check failed, the verdict cannot change the outcome: skip the call to save its tokens. */
  skipWhenChecksFail: boolean;
  timeoutMs: number;
  /** Retries after the first try for HTTP errors (honouring retry-after). */
  retries: number;
}

export interface Limits {
  maxTurns: number;
  tokenBudget: number;
  turnTokenLimit: number;
  turnTimeoutMs: number;
  costBudgetUsd: number | null;
  wallClockMs: number | null;
  cooldownMs: number;
  /** Same non-empty patch id `count` times among the last `window` turns. */
  repeatedDiff: { count: number; window: number };
  /** Times the tree returns to a state it had 2+ turns ago. */
  oscillation: number;
  /** Consecutive turns without meaningful change. */
  stagnation: number;
  evaluatorFailures: number;
  agentFailures: number;
  /** Consecutive `blocked` verdicts that pause the goal. */
  blockedVerdicts: number;
  /** Consecutive turns whose tool calls the agent's CLI denied (permission flags missing). */
  permissionDenials: number;
  /** Turns with tamper findings (not necessarily in a row) before the tamper breaker fails the goal. */
  tamper: number;
  /** Turns that changed files without fewer remaining items or failing tests before no-progress fails the goal. */
  noProgress: number;
}

/** The tamper guard (src/guard/): what counts as a turn weakening its own grading. */
export interface GuardSettings {
  /** Off (`--no-guard`, `guard.enabled: false`): no findings at all. */
  enabled: boolean;
  /** Extra protected paths (glob-ish, as noisePaths): any change by a turn is tamper. */
  protect: string[];
  /** What counts as a test file (replaces the default globs). */
  testFiles: string[];
  /** A deleted test file (or one renamed to a path that is not a test file) is tamper. */
  deletedTests: boolean;
  /** A skip/only marker added to a test file is tamper. */
  skipMarkers: boolean;
  /** A change to a package.json script that a check runs is tamper. */
  checkScripts: boolean;
}

/** Where the goal comes from; one line each in the prompt's "# Why you're here" block. */
export interface Ancestry {
  mission?: string;
  project?: string;
  goal?: string;
  loop?: string;
}

/** The kernel boundary around agent turns and checks (src/sandbox/): `auto` uses bubblewrap when it works. */
export type SandboxMode = 'auto' | 'required' | 'off';

export interface SandboxSettings {
  mode: SandboxMode;
  /** Off: the turn gets its own empty network namespace (loopback only). */
  network: boolean;
  /** Extra paths the turn may write (user config only; inside the home or the workspace, never GOALD_HOME). */
  writable: string[];
  /** Paths the turn may read although hidden by default, or outside its view (user config only). */
  readable: string[];
  /** Extra paths hidden from the turn. */
  hidden: string[];
  /** The bwrap executable (user config only); null: `bwrap` on PATH. */
  bwrap: string | null;
}

/** Where a goal works (issue 12): in the user's checkout, or in its own git worktree on a `goald/<id>` branch. */
export type IsolationMode = 'in-place' | 'worktree';

export interface IsolationSettings {
  mode: IsolationMode;
  /** The turn commits' author, `Name <email>`; null: goald's own. */
  author: string | null;
  /** A failed worktree goal's branch is deleted too (else kept for inspection). */
  discardOnFail: boolean;
}

export interface GoalSettings {
  condition: string;
  /** Absolute path of the git work tree's top level. */
  workspace: string;
  checks: CheckSpec[];
  agent: AgentSpec;
  evaluator: EvaluatorSpec;
  limits: Limits;
  ancestry: Ancestry;
  /** Glob-ish path patterns whose changes alone are not "meaningful" (lockfiles, logs). */
  noisePaths: string[];
  allowSameModel: boolean;
  /** In-turn recitation for agents with hooks: a reflection every N tool calls. */
  recitation: { everyToolCalls: number };
  /** The tamper guard. */
  guard: GuardSettings;
  /** The sandbox, sealed at start; absent in settings stored before it existed (then the defaults). */
  sandbox?: SandboxSettings;
  /** Worktree isolation; absent in settings stored before it existed (then in place). */
  isolation?: IsolationSettings;
  /** The regression guard (`--keep-best`, src/checkpoints/); absent in settings stored before it existed (off). */
  keepBest?: boolean;
}
