// The defaults of every setting (DESIGN.md § Breakers, § Evaluator), in one place so the docs, the JSON
// Schema descriptions and the resolver agree.

import type { AdapterName, EvaluatorSpec, GuardSettings, Limits, SandboxSettings } from './types.js';

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxTurns: 20,
  tokenBudget: 500_000,
  turnTokenLimit: 50_000,
  // 30 min: long enough for a real agent turn that runs a slow test suite, short enough that a hung
  // agent costs at most half an hour before the agent-failures breaker counts it.
  turnTimeoutMs: 30 * 60_000,
  costBudgetUsd: null,
  wallClockMs: null,
  // 2 s between turns prevents the tight re-spawn loops seen in other tools.
  cooldownMs: 2_000,
  repeatedDiff: Object.freeze({ count: 3, window: 5 }),
  oscillation: 3,
  stagnation: 5,
  evaluatorFailures: 3,
  agentFailures: 3,
  blockedVerdicts: 3,
  permissionDenials: 2,
  // DESIGN.md § Breakers: one tamper turn is a warning the next prompt explains; a second ends the goal.
  tamper: 2,
  // Issue 12: four turns of edits that leave as much remaining and as many tests failing is a loop.
  noProgress: 4,
});

export const DEFAULT_EVALUATOR: Readonly<EvaluatorSpec> = Object.freeze({
  // Nothing configured means checks alone decide (and then at least one check is required).
  provider: 'none',
  model: null,
  baseURL: null,
  maxInputChars: 24_000,
  // On: when a required check failed the goal cannot be achieved whatever the verdict says, so the call
  // would spend evaluator tokens without being able to change the outcome.
  skipWhenChecksFail: true,
  timeoutMs: 60_000,
  retries: 2,
});

// Generous: checks are test suites and builds; the turn timeout bounds the agent, this bounds each check.
export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60_000;

export const DEFAULT_ADAPTER: AdapterName = 'command';

/** The executable each structured adapter runs when none is configured. */
export const DEFAULT_AGENT_EXECUTABLES: Readonly<Record<Exclude<AdapterName, 'command'>, string>> = Object.freeze({
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  aider: 'aider',
  // The builtin agent is goald itself (`goald agent`); agent.command is not used.
  builtin: '',
});

/** The builtin agent's own limits (adapter `builtin`, src/agents/builtin/). */
export const DEFAULT_BUILTIN_AGENT = Object.freeze({
  // The hard cap: a ReAct loop that has not finished in 30 model calls is going in circles.
  maxIterations: 30,
  verificationRetries: 5,
  // Fits the 32k context of the local models the builtin agent is meant for (qwen2.5-coder, llama 3).
  maxContextTokens: 32_000,
});

/** In-turn recitation for agents with hooks: a reflection every N tool calls. */
export const DEFAULT_RECITATION_EVERY_TOOL_CALLS = 10;

/**
 * Paths whose changes alone are not meaningful progress (stagnation breaker): lockfiles move when an agent
 * merely runs an install; logs, caches and OS litter move on their own. Glob-ish (see breakers/noise.ts):
 * `*` stays inside a path segment, `**` crosses segments, a leading `/` anchors at the repository root,
 * any other pattern matches at any depth.
 */
export const DEFAULT_NOISE_PATHS: readonly string[] = Object.freeze([
  // Lockfiles, by ecosystem.
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  'Cargo.lock',
  'poetry.lock',
  'Pipfile.lock',
  'uv.lock',
  'pdm.lock',
  'Gemfile.lock',
  'composer.lock',
  'go.sum',
  'mix.lock',
  'pubspec.lock',
  'Podfile.lock',
  'packages.lock.json',
  // Logs, caches and OS litter.
  '*.log',
  '.DS_Store',
  'Thumbs.db',
  '*.pyc',
  '__pycache__/**',
  '.pytest_cache/**',
  'node_modules/**',
  '*.tsbuildinfo',
]);

/**
 * Test files, by ecosystem (glob-ish, as noise paths: unanchored patterns match at any depth). A deleted
 * test file or an added skip marker in one is tamper (src/guard/).
 */
export const DEFAULT_TEST_FILES: readonly string[] = Object.freeze([
  // JavaScript / TypeScript (jest, vitest, mocha, node:test, jasmine).
  '*.test.*',
  '*.spec.*',
  '__tests__/**',
  '__snapshots__/**',
  'test/**',
  'tests/**',
  'spec/**',
  // Python (pytest, unittest).
  'test_*.py',
  '*_test.py',
  'conftest.py',
  // Go.
  '*_test.go',
  // Java / Kotlin (Maven and Gradle layout, JUnit naming).
  'src/test/**',
  '*Test.java',
  '*Tests.java',
  '*Test.kt',
  // Ruby.
  '*_spec.rb',
  '*_test.rb',
]);

export const DEFAULT_GUARD: Readonly<GuardSettings> = Object.freeze({
  enabled: true,
  protect: [],
  testFiles: [...DEFAULT_TEST_FILES],
  deletedTests: true,
  skipMarkers: true,
  checkScripts: true,
});

// `auto`: on wherever bubblewrap works, so the boundary costs nothing to turn on; the network stays on
// because agents call their model APIs.
export const DEFAULT_SANDBOX: Readonly<SandboxSettings> = Object.freeze({
  mode: 'auto',
  network: true,
  writable: [],
  readable: [],
  hidden: [],
  bwrap: null,
});
