// The zod schema of resolved GoalSettings, for settings read back from state.json (daemon recovery): the
// store is a file on disk, so what comes back is validated like any other untrusted input.

import { z } from '../zod.js';
import { DEFAULT_GUARD, DEFAULT_LIMITS } from './defaults.js';
import type { GoalSettings } from './types.js';

const nonNegative = z.number().nonnegative();

const goalSettingsSchema = z.object({
  condition: z.string().min(1),
  workspace: z.string().min(1),
  checks: z.array(z.object({ name: z.string(), run: z.string(), timeoutMs: nonNegative })),
  agent: z.object({
    adapter: z.enum(['command', 'claude-code', 'codex', 'gemini', 'aider', 'builtin']),
    command: z.string(),
    args: z.array(z.string()),
    session: z.enum(['fresh', 'resume']),
    model: z.string().nullable(),
    prices: z
      .record(
        z.string(),
        z.object({ input: nonNegative, cachedInput: nonNegative, output: nonNegative, cacheWrite: nonNegative.optional() }),
      )
      .default({}),
    passEnv: z.array(z.string()).optional(),
    maxIterations: z.number().int().positive().optional(),
    verificationRetries: z.number().int().nonnegative().optional(),
    maxContextTokens: z.number().int().positive().optional(),
    commands: z.object({ allow: z.array(z.string()), deny: z.array(z.string()) }).optional(),
  }),
  evaluator: z.object({
    provider: z.enum(['openai', 'anthropic', 'none']),
    model: z.string().nullable(),
    baseURL: z.string().nullable(),
    baseURLFrom: z.enum(['user-config', 'workspace-config', 'request']).optional(),
    allowedBaseURLs: z.array(z.string()).optional(),
    maxInputChars: nonNegative,
    skipWhenChecksFail: z.boolean(),
    timeoutMs: nonNegative,
    retries: nonNegative,
  }),
  limits: z.object({
    maxTurns: nonNegative,
    tokenBudget: nonNegative,
    turnTokenLimit: nonNegative,
    turnTimeoutMs: nonNegative,
    costBudgetUsd: nonNegative.nullable(),
    wallClockMs: nonNegative.nullable(),
    cooldownMs: nonNegative,
    repeatedDiff: z.object({ count: nonNegative, window: nonNegative }),
    oscillation: nonNegative,
    stagnation: nonNegative,
    evaluatorFailures: nonNegative,
    agentFailures: nonNegative,
    blockedVerdicts: nonNegative,
    permissionDenials: nonNegative.default(2),
    tamper: nonNegative.default(DEFAULT_LIMITS.tamper),
    noProgress: nonNegative.default(DEFAULT_LIMITS.noProgress),
  }),
  ancestry: z.object({
    mission: z.string().optional(),
    project: z.string().optional(),
    goal: z.string().optional(),
    loop: z.string().optional(),
  }),
  noisePaths: z.array(z.string()),
  allowSameModel: z.boolean(),
  recitation: z.object({ everyToolCalls: z.number().int().positive() }).default({ everyToolCalls: 10 }),
  // Absent in settings stored before the guard existed: those goals get the defaults.
  guard: z
    .object({
      enabled: z.boolean(),
      protect: z.array(z.string()),
      testFiles: z.array(z.string()),
      deletedTests: z.boolean(),
      skipMarkers: z.boolean(),
      checkScripts: z.boolean(),
    })
    .default(() => ({ ...DEFAULT_GUARD, protect: [...DEFAULT_GUARD.protect], testFiles: [...DEFAULT_GUARD.testFiles] })),
  // Absent in settings stored before the sandbox existed: those goals run with the defaults (auto).
  sandbox: z
    .object({
      mode: z.enum(['auto', 'required', 'off']),
      network: z.boolean(),
      writable: z.array(z.string()),
      readable: z.array(z.string()),
      hidden: z.array(z.string()),
      bwrap: z.string().nullable(),
    })
    .optional(),
  // Absent in settings stored before worktree goals existed: those goals work in place.
  isolation: z
    .object({ mode: z.enum(['in-place', 'worktree']), author: z.string().nullable(), discardOnFail: z.boolean() })
    .optional(),
  keepBest: z.boolean().optional(),
}) satisfies z.ZodType<GoalSettings>;

/** Parses stored settings; the error message says which field is off. */
export function parseStoredSettings(value: unknown): { ok: true; settings: GoalSettings } | { ok: false; problem: string } {
  const parsed = goalSettingsSchema.safeParse(value);
  if (parsed.success) return { ok: true, settings: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, problem: issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid settings' };
}
