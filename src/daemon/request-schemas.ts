// What the control plane accepts from a client: request bodies, query strings and path ids, each checked
// before the goal host sees it. Problems become one `bad-request` GoaldError naming every field at fault
// (`flags.maxTurns: expected string, received number`); values are never echoed, since a body may hold
// text the user would not want repeated (and must not hold secrets, which are refused by name).

import { isAbsolute } from 'node:path';

import { z } from '../zod.js';

import type { GoalStatus } from '../../machines/goal.machine.js';
import { EDIT_OPTIONS, type EditFlags } from '../config/edit-options.js';
import { readStartFlags, SETTING_OPTIONS, type SettingOption } from '../config/start-options.js';
import { GoaldError } from '../errors.js';
import { MAX_GUIDANCE_CHARS } from '../prompt/guidance-block.js';
import type { GoalFilter } from './resolve-goal.js';
import type { CreateLoopRequest, EditGoalRequest, PruneRequest, StartGoalRequest, StartRaceRequest } from './types.js';

/** Environment names a client may forward: what config precedence reads, and nothing that authenticates. */
export const FORWARDED_ENV_PATTERN = /^(GOALD_[A-Z0-9_]+|OPENAI_BASE_URL|ANTHROPIC_BASE_URL)$/;

/**
 * GOALD_ names that are the daemon's own and never a request's: where its cluster is (a Redis URL holds its
 * password; a remote URL may hold a token). A client does not send them, and a request's are dropped, so
 * they never reach a stored request.
 */
export const DAEMON_ONLY_ENV_PATTERN = /^GOALD_(REDIS_URL|CLUSTER_REMOTE)$/;

// Names that hold credentials even inside the GOALD_ namespace (`GOALD_OPENAI_API_KEY`). Narrow on purpose:
// GOALD_TOKEN_BUDGET is a count, so a bare TOKEN is not on the list.
const SECRET_NAME_PATTERN = /(API_?KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|ACCESS_TOKEN|AUTH_TOKEN|BEARER)/i;

const GOAL_STATUSES: readonly GoalStatus[] = ['active', 'paused', 'achieved', 'failed'];

// Same shape as state's ids (safe as a directory name); prefixes of ids match it too.
const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

// Error messages stay one readable line even when a client sends thousands of unknown keys.
const MAX_MESSAGE_CHARS = 600;

/** A string that can safely reach a child's argv or environment (NUL would make spawn throw later). */
function stringWithoutNul(): z.ZodString {
  return z.string().refine((value) => !value.includes('\0'), 'must not contain NUL bytes');
}

/** How a start option's value travels in the request's `flags`: as the CLI received it, unparsed. */
function flagValueSchema(option: SettingOption): z.ZodOptional {
  if (option.kind === 'list') return z.array(stringWithoutNul()).optional();
  if (option.kind === 'switch') return z.boolean().optional();
  return stringWithoutNul().optional();
}

// The start options' table (config/start-options.ts) decides which keys `flags` has; values are parsed
// later, by the same code as the CLI's flags, so errors name the flag.
const flagsSchema = z
  .strictObject(Object.fromEntries(SETTING_OPTIONS.map((option) => [option.key, flagValueSchema(option)])))
  .transform(readStartFlags);

const startGoalShape = {
  condition: stringWithoutNul().optional(),
  dir: stringWithoutNul().refine((value) => isAbsolute(value), 'must be an absolute path'),
  flags: flagsSchema.default({}),
  // Key names are checked before zod runs (see refuseForeignEnv) so secrets get their own message.
  env: z
    .record(z.string(), stringWithoutNul())
    .default({})
    .transform((env) => Object.fromEntries(Object.entries(env).filter(([name]) => !DAEMON_ONLY_ENV_PATTERN.test(name)))),
  queue: z.boolean().default(true),
};

const startGoalSchema = z.strictObject(startGoalShape);

const { queue: _queue, ...raceShape } = startGoalShape;
const startRaceSchema = z.strictObject({
  ...raceShape,
  agents: z.array(stringWithoutNul().min(1, 'must not be empty')).min(1, 'name at least one agent').max(32),
  n: z.number().int().min(1).max(32).optional(),
  pick: z.enum(['first', 'best']).default('first'),
});

const createLoopSchema = z.strictObject({
  ...startGoalShape,
  every: stringWithoutNul().min(1, 'must not be empty'),
  catchUp: z.enum(['once', 'skip']).optional(),
});

const syncLoopsSchema = z.strictObject({ dir: startGoalShape.dir });
const goalBranchSchema = z.strictObject({ dir: startGoalShape.dir });

// `goald edit`: only the edit options' keys (a start-only option such as --agent is an unknown key).
const editFlagsSchema = z
  .strictObject(Object.fromEntries(EDIT_OPTIONS.map((option) => [option.key, flagValueSchema(option)])))
  .transform((raw): EditFlags => readStartFlags(raw));

const editGoalSchema = z.strictObject({
  flags: editFlagsSchema.default({}),
  applyConfig: z.boolean().default(false),
  resume: z.boolean().default(false),
});

const pauseSchema = z.strictObject({ now: z.boolean().default(false) });
const uiSchema = z.strictObject({ port: z.number().int().min(0).max(65_535).default(0) });
const rollbackSchema = z.strictObject({ toTurn: z.number().int().min(0) });

const emptySchema = z.strictObject({});

const pruneSchema = z.strictObject({
  olderThanMs: z.number().int().min(0),
  keep: z.number().int().min(0),
  dryRun: z.boolean().default(false),
});

/** One line naming each issue by its dot path, values left out. */
function describeIssues(what: string, issues: readonly z.core.$ZodIssue[]): string {
  const parts = issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((key) => (path === '' ? key : `${path}.${key}`)).join(', ');
      return `unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${keys}`;
    }
    return `${path === '' ? '(body)' : path}: ${issue.message.replace(/^Invalid input: /, '')}`;
  });
  const message = `invalid ${what}: ${parts.join('; ')}`;
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 3)}...` : message;
}

/** Refuses environment names a client must not forward: credentials by name, then anything unlisted. */
function refuseForeignEnv(body: unknown): void {
  if (body === null || typeof body !== 'object' || !('env' in body)) return;
  const env: unknown = body.env;
  if (env === null || typeof env !== 'object' || Array.isArray(env)) return;
  const names = Object.keys(env);
  const secrets = names.filter((name) => SECRET_NAME_PATTERN.test(name));
  if (secrets.length > 0) {
    throw new GoaldError(
      'bad-request',
      truncate(`env.${secrets.join(', env.')}: secrets are not accepted over the socket`),
      'the daemon reads API keys from its own environment: export them where `goald daemon` starts (or use --foreground)',
    );
  }
  const foreign = names.filter((name) => !FORWARDED_ENV_PATTERN.test(name));
  if (foreign.length > 0) {
    throw new GoaldError(
      'bad-request',
      truncate(`env.${foreign.join(', env.')}: not accepted over the socket`),
      'only GOALD_*, OPENAI_BASE_URL and ANTHROPIC_BASE_URL are forwarded to the daemon; secrets are not accepted over the socket',
    );
  }
}

function truncate(message: string): string {
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 3)}...` : message;
}

/** Parses `body` with `schema`, or throws a `bad-request` GoaldError naming every field at fault. */
function parseWith<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new GoaldError('bad-request', describeIssues(what, parsed.error.issues), 'see DESIGN.md § Daemon and control plane for the request shapes');
}

/** Validates a POST /v1/goals body. */
export function parseStartGoalRequest(body: unknown): StartGoalRequest {
  refuseForeignEnv(body);
  return parseWith(startGoalSchema, body, 'start request');
}

/** Validates a POST /v1/races body (`goald race`). */
export function parseStartRaceRequest(body: unknown): StartRaceRequest {
  refuseForeignEnv(body);
  return parseWith(startRaceSchema, body, 'race request');
}

/** Validates a POST /v1/loops body. */
export function parseCreateLoopRequest(body: unknown): CreateLoopRequest {
  refuseForeignEnv(body);
  return parseWith(createLoopSchema, body, 'loop request');
}

/** Validates a POST /v1/goals/:id/edit body: `{ flags?, applyConfig?, resume? }`. */
export function parseEditGoalRequest(body: unknown): EditGoalRequest {
  return parseWith(editGoalSchema, body === undefined ? {} : body, 'edit request');
}

/** Validates a POST /v1/loops/sync body: `{ dir }`, an absolute path. */
export function parseSyncLoopsRequest(body: unknown): { dir: string } {
  return parseWith(syncLoopsSchema, body, 'loop sync request');
}

/** Validates an optional POST /v1/ui body: `{ port? }` (0 or absent: a free port). */
export function parseUiRequest(body: unknown): { port: number } {
  return parseWith(uiSchema, body === undefined ? {} : body, 'ui request');
}

/** Validates an optional POST /v1/goals/:id/pause body: `{ now?: boolean }`. */
export function parsePauseRequest(body: unknown): { now: boolean } {
  return parseWith(pauseSchema, body === undefined ? {} : body, 'pause request');
}

const saySchema = z.strictObject({
  text: stringWithoutNul()
    .refine((text) => text.trim() !== '', 'must not be empty')
    .refine((text) => text.length <= MAX_GUIDANCE_CHARS, `must be at most ${MAX_GUIDANCE_CHARS} characters`),
});

/** Validates a POST /v1/goals/:id/say body: `{ text }`, 1 to 2 000 characters. */
export function parseSayRequest(body: unknown): { text: string } {
  return parseWith(saySchema, body, 'say request');
}

/** Validates a POST /v1/goals/:id/rollback body: `{ toTurn }`, a whole number of 0 or more. */
/** Validates a POST /v1/goals/:id/branch body: `{ dir }`, the repository to read the branch in. */
export function parseGoalBranchRequest(body: unknown): { dir: string } {
  return parseWith(goalBranchSchema, body, 'branch request');
}

export function parseRollbackRequest(body: unknown): { toTurn: number } {
  return parseWith(rollbackSchema, body, 'rollback request');
}

/** Validates a POST /v1/prune body: `{ olderThanMs, keep, dryRun? }`, whole numbers of 0 or more. */
export function parsePruneRequest(body: unknown): PruneRequest {
  return parseWith(pruneSchema, body, 'prune request');
}

/** Validates a body that must be absent or `{}` (resume, stop, daemon stop). */
export function parseEmptyRequest(body: unknown, what: string): void {
  parseWith(emptySchema, body === undefined ? {} : body, what);
}

/** Validates a goal or loop id (or unique prefix) taken from the path. */
export function parseId(raw: string, kind: 'goal' | 'loop' | 'race'): string {
  if (ID_PATTERN.test(raw)) return raw;
  const shown = raw.length > 80 ? `${raw.slice(0, 77)}...` : raw;
  throw new GoaldError(
    'bad-request',
    `${JSON.stringify(shown)} is not a ${kind} id: ids are 1-64 letters, digits, - or _`,
    kind === 'goal' ? 'list goals with `goald status`' : kind === 'race' ? 'list races with `goald status`' : 'list loops with `goald loop list`',
  );
}

/**
 * Reads GET /v1/goals's query: `workspace` (a path), `status` (a comma list of goal statuses) and `idPrefix`
 * (goals whose id starts with it; any text, which then matches no goal when it cannot start an id).
 */
export function parseListGoalsQuery(query: URLSearchParams): GoalFilter {
  const filter: GoalFilter = {};
  const idPrefix = query.get('idPrefix');
  if (idPrefix !== null && idPrefix !== '') filter.idPrefix = idPrefix;
  const workspace = query.get('workspace');
  if (workspace !== null && workspace !== '') {
    if (!isAbsolute(workspace) || workspace.includes('\0')) {
      throw new GoaldError('bad-request', 'invalid query: workspace must be an absolute path', 'pass the workspace as ?workspace=/abs/path');
    }
    filter.workspace = workspace;
  }
  const status = query.get('status');
  if (status !== null && status !== '') {
    const statuses = status.split(',').map((item) => item.trim()).filter((item) => item !== '');
    const unknown = statuses.filter((item) => !(GOAL_STATUSES as readonly string[]).includes(item));
    if (unknown.length > 0) {
      throw new GoaldError(
        'bad-request',
        truncate(`invalid query: unknown status ${unknown.map((item) => JSON.stringify(item)).join(', ')}`),
        `statuses are ${GOAL_STATUSES.join(', ')} (comma-separated)`,
      );
    }
    filter.status = statuses;
  }
  return filter;
}

/** Reads the events route's `follow` query: absent, `1` or `true` follow live events; `0` or `false` do not. */
export function parseFollow(query: URLSearchParams): boolean {
  const follow = query.get('follow');
  if (follow === null || follow === '' || follow === '1' || follow === 'true') return true;
  if (follow === '0' || follow === 'false') return false;
  throw new GoaldError('bad-request', 'invalid query: follow must be 0 or 1', 'use ?follow=0 for past events only');
}
