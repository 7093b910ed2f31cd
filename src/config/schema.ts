// The schema of a config FILE: the workspace's goal.config.json and the user's
// `$XDG_CONFIG_HOME/goald/config.json`. Every field is optional (layers are merged by resolve-settings)
// and every object is strict, so a misspelt key is an error with its path instead of a silent no-op.
// The JSON Schema in schema/goal.config.schema.json is generated from this (json-schema.ts).

import { z } from '../zod.js';
import {
  DEFAULT_BUILTIN_AGENT,
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_EVALUATOR,
  DEFAULT_LIMITS,
  DEFAULT_RECITATION_EVERY_TOOL_CALLS,
} from './defaults.js';
import { guardSchema } from './guard-schema.js';
import { sandboxSchema } from './sandbox-schema.js';
import { clusterSchema } from './cluster-schema.js';
import { notifySchema } from './notify-schema.js';
import { isolationSchema, worktreeSchema } from './isolation-schema.js';
import { raceSchema } from './race-schema.js';
import { DURATION_PATTERN, toDurationText } from './duration.js';

const ADAPTER_NAMES = ['command', 'claude-code', 'codex', 'gemini', 'aider', 'builtin'] as const;
const PROVIDERS = ['openai', 'anthropic', 'none'] as const;

const DURATION = { error: 'expected a duration such as "90s" or "30m" (ms, s, m, h or d), or whole milliseconds' };

/** A duration: `"90s"`, `"30m"`, `"1.5h"`, `"0"`, or whole milliseconds. */
function duration(description: string) {
  return z
    .union([z.string().regex(DURATION_PATTERN, DURATION), z.number().int(DURATION).nonnegative(DURATION)], DURATION)
    .meta({ description });
}

/** A required string: "is required" when absent, `expected` when present but wrong. */
function requiredText(expected: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : expected) })
    .trim()
    .min(1, { error: expected });
}

const POSITIVE_INT = {
  error: (issue: { input?: unknown }) =>
    issue.input === undefined ? 'is required' : 'expected a whole number of 1 or more',
};

function positiveInt(description: string) {
  return z.number(POSITIVE_INT).int(POSITIVE_INT).min(1, POSITIVE_INT).meta({ description });
}

function text(description: string) {
  return z.string({ error: 'expected a string' }).meta({ description });
}

const checkSchema = z
  .strictObject({
    name: text('Short label shown in progress lines. Default: the command, truncated.').optional(),
    run: requiredText('expected a shell command').meta({
      description: 'Shell command run with `sh -c` in the workspace; exit status 0 means the check passes.',
    }),
    timeout: duration(`How long the check may run. Default: "${toDurationText(DEFAULT_CHECK_TIMEOUT_MS)}".`).optional(),
  })
  .meta({ id: 'Check', description: 'A check: a shell command whose exit status is ground truth.' });

const agentSchema = z
  .strictObject({
    adapter: z
      .enum(ADAPTER_NAMES)
      .meta({
        description:
          'How goald runs and reads the agent. `command`: any shell command (prompt on stdin, in $GOALD_PROMPT_FILE, $GOALD_PROMPT and `{prompt}`); the others parse that CLI\'s own event stream; `builtin` is goald\'s own ReAct agent on an OpenAI-compatible or Anthropic model (agent.model `openai:<model>` or `anthropic:<model>`). Default: command.',
      })
      .optional(),
    command: text(
      'For `command`: the shell command, e.g. "claude -p {prompt}". For the other adapters: the executable (default: claude, codex, gemini or aider).',
    ).optional(),
    args: z.array(z.string()).meta({ description: 'Extra arguments for structured adapters.' }).optional(),
    session: z
      .enum(['fresh', 'resume'])
      .meta({
        description:
          '`fresh` starts a new agent session every turn (the recitation carries the state); `resume` reuses one explicit session id. Default: fresh.',
      })
      .optional(),
    model: text("The agent's model, when known; goald refuses an evaluator of the same model.").optional(),
    prices: z
      .record(
        z.string(),
        z.strictObject({
          input: z.number().nonnegative(),
          cachedInput: z.number().nonnegative(),
          output: z.number().nonnegative(),
          cacheWrite: z.number().nonnegative().optional(),
        }),
      )
      .meta({
        description:
          'USD per million tokens by model name or name prefix (the longest matching key wins), for agents whose CLI reports tokens but no cost (Codex). Extends and overrides the built-in table.',
      })
      .optional(),
    passEnv: z
      .array(z.string().regex(/^[A-Za-z_*][A-Za-z0-9_*]*$/, 'expected a variable name or a glob such as "OPENAI_*"'))
      .meta({
        description:
          "Variables (names or * globs) the agent and the checks keep although they are a model vendor's credentials (OPENAI_*, ANTHROPIC_*, GEMINI_*, GOOGLE_*), which goald otherwise removes unless the adapter uses that vendor. Read from the user's config file only.",
      })
      .optional(),
    maxIterations: positiveInt(
      `The builtin agent: model calls per loop; reaching it ends the turn ("max iterations"). Default: ${DEFAULT_BUILTIN_AGENT.maxIterations}.`,
    ).optional(),
    verificationRetries: z
      .number()
      .int()
      .nonnegative()
      .meta({
        description: `The builtin agent: when the goal's checks fail at the end of its loop, it re-enters the loop with their output this many times. Default: ${DEFAULT_BUILTIN_AGENT.verificationRetries}.`,
      })
      .optional(),
    maxContextTokens: positiveInt(
      `The builtin agent: old tool results are elided (marked as such) before the conversation passes this many tokens. Default: ${DEFAULT_BUILTIN_AGENT.maxContextTokens}.`,
    ).optional(),
    commands: z
      .strictObject({
        allow: z.array(z.string()).meta({ description: 'When non-empty, run_command runs only command lines matching one of these `*` globs.' }).optional(),
        deny: z.array(z.string()).meta({ description: 'run_command refuses command lines matching any of these `*` globs (deny wins).' }).optional(),
      })
      .meta({ description: "The builtin agent's run_command policy." })
      .optional(),
  })
  .meta({ id: 'Agent', description: 'The coding agent goald runs each turn.' });

const evaluatorSchema = z
  .strictObject({
    provider: z
      .enum(PROVIDERS)
      .meta({
        description:
          '`openai` (Chat Completions: any OpenAI-compatible server; OPENAI_API_KEY), `anthropic` (ANTHROPIC_API_KEY), or `none` (checks alone decide). Default: none.',
      })
      .optional(),
    model: text('The evaluator model; required for openai and anthropic. Must differ from the agent\'s.').optional(),
    baseURL: z
      .url({ error: 'expected a URL such as http://127.0.0.1:8080/v1' })
      .meta({
        description:
          "Overrides OPENAI_BASE_URL / ANTHROPIC_BASE_URL, e.g. a local server. From a workspace file it is used only when the user's config lists it in allowedBaseURLs (the API key goes there).",
      })
      .optional(),
    allowedBaseURLs: z
      .array(z.url({ error: 'expected a URL such as http://127.0.0.1:8080/v1' }))
      .meta({
        description:
          "Base URLs the API key may be sent to although a workspace file or a start request chose them (a URL without a path allows its whole origin). Read from the user's config file only.",
      })
      .optional(),
    maxInputChars: positiveInt(
      `Upper bound on the characters of evidence sent per call. Default: ${DEFAULT_EVALUATOR.maxInputChars}.`,
    ).optional(),
    skipWhenChecksFail: z
      .boolean()
      .meta({
        description:
          'Skip the evaluator when a check failed: the goal cannot be achieved then, whatever the verdict says. Default: true.',
      })
      .optional(),
    timeout: duration(
      `Timeout of one evaluator call. Default: "${toDurationText(DEFAULT_EVALUATOR.timeoutMs)}".`,
    ).optional(),
    retries: z
      .number()
      .int()
      .min(0)
      .meta({ description: `Retries after HTTP errors, honouring retry-after. Default: ${DEFAULT_EVALUATOR.retries}.` })
      .optional(),
  })
  .meta({
    id: 'Evaluator',
    description: 'The model that judges whether the goal is met; a different model from the agent.',
  });

const limitsSchema = z
  .strictObject({
    maxTurns: positiveInt(`Turns before the max-turns breaker. Default: ${DEFAULT_LIMITS.maxTurns}.`).optional(),
    tokenBudget: positiveInt(
      `Tokens of all turns and evaluator calls before the token-budget breaker. Default: ${DEFAULT_LIMITS.tokenBudget}.`,
    ).optional(),
    turnTokenLimit: positiveInt(
      `Tokens one turn may use before it is killed. Default: ${DEFAULT_LIMITS.turnTokenLimit}.`,
    ).optional(),
    turnTimeout: duration(
      `How long one turn may run. Default: "${toDurationText(DEFAULT_LIMITS.turnTimeoutMs)}".`,
    ).optional(),
    costBudget: z
      .number()
      .min(0)
      .nullable()
      .meta({ description: 'US dollars before the cost-budget breaker; null turns it off. Default: off.' })
      .optional(),
    wallClock: duration(
      'Time since start (paused time excluded) before the wall-clock breaker; null turns it off. Default: off.',
    )
      .nullable()
      .optional(),
    cooldown: duration(`Pause between turns. Default: "${toDurationText(DEFAULT_LIMITS.cooldownMs)}".`).optional(),
    repeatedDiff: z
      .strictObject({
        count: positiveInt('Trips when the same non-empty change (patch id) appears this many times...'),
        window: positiveInt('...among this many most recent turns.'),
      })
      .meta({
        description: `The repeated-diff breaker. Default: ${DEFAULT_LIMITS.repeatedDiff.count} of ${DEFAULT_LIMITS.repeatedDiff.window}.`,
      })
      .optional(),
    oscillation: positiveInt(
      `Times the tree may return to a state it had 2+ turns ago. Default: ${DEFAULT_LIMITS.oscillation}.`,
    ).optional(),
    stagnation: positiveInt(
      `Consecutive turns without meaningful change. Default: ${DEFAULT_LIMITS.stagnation}.`,
    ).optional(),
    evaluatorFailures: positiveInt(
      `Consecutive evaluator errors. Default: ${DEFAULT_LIMITS.evaluatorFailures}.`,
    ).optional(),
    agentFailures: positiveInt(
      `Consecutive turns whose agent failed, crashed or timed out. Default: ${DEFAULT_LIMITS.agentFailures}.`,
    ).optional(),
    blockedVerdicts: positiveInt(
      `Consecutive "blocked" verdicts that pause the goal for a human. Default: ${DEFAULT_LIMITS.blockedVerdicts}.`,
    ).optional(),
    permissionDenials: positiveInt(
      `Consecutive turns whose tool calls the agent's CLI denied (missing permission flags) before goald stops. Default: ${DEFAULT_LIMITS.permissionDenials}.`,
    ).optional(),
    tamper: positiveInt(
      `Turns with tamper findings (a protected path changed, a test deleted or skipped, a check's script changed) before goald stops. Default: ${DEFAULT_LIMITS.tamper}.`,
    ).optional(),
    noProgress: positiveInt(
      `Turns that change files while neither the evaluator's remaining items nor the failing tests go below their fewest before the no-progress breaker. Default: ${DEFAULT_LIMITS.noProgress}.`,
    ).optional(),
  })
  .meta({
    id: 'Limits',
    description: 'Circuit breakers and timeouts. At least max-turns and token-budget are always on.',
  });

const noisePathsSchema = z.array(z.string().min(1)).meta({
  description:
    'Paths whose changes alone are not progress (stagnation). Replaces the default list (lockfiles, *.log, .DS_Store, caches). `*` stays in a segment, `**` crosses segments, a leading `/` anchors at the root.',
});

const loopSchema = z
  .strictObject({
    name: text('A label for `goald loop list`.').optional(),
    every: requiredText('expected a duration ("30m") or a 5-field cron expression').meta({
      description: 'A duration ("30m", "2h": an exact cadence) or a 5-field cron expression ("0 9 * * 1-5").',
    }),
    goal: text('The condition of each run. Default: the file\'s `goal`.').optional(),
    catchUp: z
      .enum(['once', 'skip'])
      .meta({ description: 'After downtime, run a missed slot once on start, or skip it. Default: once.' })
      .optional(),
    checks: z.array(checkSchema).optional(),
    agent: agentSchema.optional(),
    evaluator: evaluatorSchema.optional(),
    limits: limitsSchema.optional(),
  })
  .meta({ id: 'Loop', description: 'A schedule that starts a fresh goal run each time it fires.' });

export const configFileSchema = z
  .strictObject(
    {
    $schema: text('The JSON Schema of this file, for editors.').optional(),
    goal: text('The default goal condition, in plain words, for `goald start` without one.').optional(),
    mission: text('Why the project exists; one line in every prompt.').optional(),
    project: text('What this project is; one line in every prompt.').optional(),
    checks: z
      .array(checkSchema)
      .meta({ description: 'All must pass for the goal to be achieved; no model can overrule a failing check.' })
      .optional(),
    agent: agentSchema.optional(),
    evaluator: evaluatorSchema.optional(),
    limits: limitsSchema.optional(),
    noisePaths: noisePathsSchema.optional(),
    recitation: z
      .strictObject({
        everyToolCalls: positiveInt(
          `For agents with hooks: a short reflection every N tool calls. Default: ${DEFAULT_RECITATION_EVERY_TOOL_CALLS}.`,
        ).optional(),
      })
      .meta({ description: 'In-turn recitation.' })
      .optional(),
    loops: z.array(loopSchema).meta({ description: 'Schedules, read by the daemon.' }).optional(),
    guard: guardSchema.optional(),
    sandbox: sandboxSchema.optional(),
    notify: notifySchema.optional(),
    cluster: clusterSchema.optional(),
    isolation: isolationSchema.optional(),
    worktree: worktreeSchema.optional(),
    race: raceSchema.optional(),
    keepBest: z
      .boolean()
      .meta({
        description:
          "Regression guard: when a turn passes fewer tests than the best turn so far, goald restores the best turn's files before the next turn and tells the agent why. Default: false.",
      })
      .optional(),
    },
    { error: (issue) => (issue.code === 'invalid_type' ? 'expected a JSON object ({ ... })' : undefined) },
  )
  .meta({
    title: 'goald configuration',
    description:
      "goald's goal.config.json (in the workspace) or ~/.config/goald/config.json (per user). Precedence: flags > GOALD_* environment > workspace file > user file > defaults.",
  });

export type ConfigFile = z.infer<typeof configFileSchema>;
export type ConfigCheck = z.infer<typeof checkSchema>;
export type ConfigAgent = z.infer<typeof agentSchema>;
export type ConfigEvaluator = z.infer<typeof evaluatorSchema>;
export type ConfigLimits = z.infer<typeof limitsSchema>;
export type ConfigLoop = z.infer<typeof loopSchema>;
