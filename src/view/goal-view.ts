// The view state of one goal: everything `goald watch` and the web dashboard show, derived in one pure
// function from the goal's record, its progress events and its loop. Nothing in a view is decided anywhere
// else. Text from the agent or the evaluator stays as it came (data): the terminal escapes it
// (`terminalView`), the web page sets it as textContent.

import type { BreakerName, GoalStatus } from '../../machines/goal.machine.js';
import { isPausePendingIn } from '../../state/machine-snapshot.js';
import { notRecoveredWhy } from '../../state/not-recovered.js';
import type { GoalRecord, Json, LoopRecord } from '../../state/types.js';
import type { ProgressEvent } from '../supervisor/types.js';

/** One point of the per-turn series (charts, sparklines). */
export interface TurnPoint {
  turn: number;
  tokens: number;
  /** Tokens of every turn up to and including this one. */
  cumulativeTokens: number;
  /** USD of the turn, null when the agent reported none. */
  costUsd: number | null;
  filesChanged: number;
  checksPassing: number;
  checksTotal: number;
  /** The evaluator's remaining items after the turn; null when it gave no verdict. */
  remaining: number | null;
  outcome: string;
  /** met / not met / null (no verdict). */
  achieved: boolean | null;
  tampered: boolean;
}

/** How near one breaker is to ending the goal. */
export interface BreakerGauge {
  name: BreakerName;
  value: number;
  limit: number;
  /** "stagnation 2 of 5". */
  text: string;
}

/** A provider's or agent's error, apart from "no progress". */
export interface ProviderError {
  turn: number;
  source: 'agent' | 'evaluator';
  message: string;
}

export type Tone = 'running' | 'waiting' | 'paused' | 'achieved' | 'failed';

export interface GoalView {
  id: string;
  condition: string;
  workspace: string;
  status: GoalStatus;
  phase: string;
  /** One character for the status, and the colour family the views give it. */
  glyph: string;
  tone: Tone;
  /** "running", "paused (drift)", "failed (stagnation)". */
  statusText: string;
  turn: number;
  maxTurns: number | null;
  /** "3/20", or "3" without a turn limit. */
  turnText: string;
  activeMs: number;
  tokens: { used: number; budget: number | null };
  cost: { usd: number; budget: number | null };
  series: TurnPoint[];
  /** The counting breakers with a limit, nearest to tripping first. */
  breakers: BreakerGauge[];
  evaluator: { reason: string | null; remaining: string[] };
  /** What the latest turn changed. */
  lastTurnFiles: { turn: number; count: number; paths: string[] } | null;
  /** The most recent errors (newest last, at most 5). */
  providerErrors: ProviderError[];
  /** ISO time of the goal's loop's next run, when it belongs to a loop that still runs. */
  nextLoopRun: string | null;
  pauseReason: string | null;
  /** On a finished goal, or a live one the daemon could not recover: why it stopped and what the user can do next. */
  stop: { reason: string; message: string | null; nextAction: string } | null;
}

export interface GoalViewInput {
  goal: GoalRecord;
  /** The goal's progress events, oldest first (what the daemon streams). */
  events: readonly ProgressEvent[];
  /** The goal's loop, when it has one. */
  loop?: LoopRecord | null;
  now: number;
}

const MAX_ERRORS = 5;

// The counting breakers in the order a view lists them when equally near, with the limit each reads.
const COUNTED: readonly { name: BreakerName; label: string; limit: (limits: JsonObject) => number | null }[] = [
  { name: 'stagnation', label: 'stagnation', limit: (l) => numberAt(l, 'stagnation') },
  { name: 'repeated-diff', label: 'repeated diff', limit: (l) => numberAt(objectAt(l, 'repeatedDiff'), 'count') },
  { name: 'oscillation', label: 'oscillation', limit: (l) => numberAt(l, 'oscillation') },
  { name: 'agent-failures', label: 'agent failures', limit: (l) => numberAt(l, 'agentFailures') },
  { name: 'evaluator-failures', label: 'evaluator failures', limit: (l) => numberAt(l, 'evaluatorFailures') },
  { name: 'permission-denied', label: 'permission denied', limit: (l) => numberAt(l, 'permissionDenials') },
  { name: 'tamper', label: 'tamper', limit: (l) => numberAt(l, 'tamper') },
  { name: 'no-progress', label: 'no progress', limit: (l) => numberAt(l, 'noProgress') },
];

type JsonObject = { [key: string]: Json };

function objectAt(value: Json | undefined, key: string): JsonObject | null {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return null;
  const child = value[key];
  return child !== null && child !== undefined && typeof child === 'object' && !Array.isArray(child) ? child : null;
}

function numberAt(value: JsonObject | null, key: string): number | null {
  const child = value?.[key];
  return typeof child === 'number' ? child : null;
}

/** The status glyph, tone and words of a goal (its row, and a loop's runs). */
export function goalStatusOf(goal: Pick<GoalRecord, 'status' | 'phase' | 'pauseReason' | 'reason'> & Partial<Pick<GoalRecord, 'machine' | 'notRecovered'>>): { glyph: string; tone: Tone; text: string } {
  // Live in the record, but the daemon could not pick it up again: nothing of it runs (`goald stop` ends it).
  if (notRecoveredWhy(goal) !== null) {
    return { glyph: '!', tone: 'failed', text: 'not running: could not be recovered' };
  }
  switch (goal.status) {
    case 'active':
      if (goal.phase === 'queued') return { glyph: '…', tone: 'waiting', text: 'queued' };
      if (goal.phase === 'coolingDown' || goal.phase === 'preparing') return { glyph: '◌', tone: 'waiting', text: goal.phase === 'preparing' ? 'preparing' : 'cooling down' };
      return { glyph: '▶', tone: 'running', text: isPausePendingIn(goal.machine ?? null) ? `${goal.phase} · pausing after this turn` : goal.phase };
    case 'paused':
      return { glyph: '‖', tone: 'paused', text: `paused (${goal.pauseReason ?? 'requested'})` };
    case 'achieved':
      return { glyph: '✔', tone: 'achieved', text: 'achieved' };
    case 'failed':
      return { glyph: '✖', tone: 'failed', text: `failed (${goal.reason ?? 'unknown'})` };
  }
}

// Active time: the summary's while the goal is not running, else the time since it started (as `status`).
function activeMsOf(goal: GoalRecord, now: number): number {
  if (goal.status !== 'active') return goal.summary.activeMs;
  const start = Date.parse(goal.startedAt ?? goal.createdAt);
  return Math.max(goal.summary.activeMs, Number.isNaN(start) ? 0 : now - start);
}

/** What to do about a goal that stopped, as one command line or sentence. */
function nextActionOf(goal: GoalRecord, maxTurns: number | null): string {
  const id = goal.id;
  switch (goal.reason) {
    case null:
      return goal.status === 'achieved' ? `review the changes in ${goal.workspace} (goald show ${id})` : `goald show ${id}`;
    case 'max-turns':
      return `goald edit ${id} --max-turns ${maxTurns === null ? 'N' : maxTurns * 2} --resume`;
    case 'token-budget':
      return `goald edit ${id} --token-budget <more> --resume`;
    case 'cost-budget':
      return `goald edit ${id} --cost-budget <more> --resume`;
    case 'wall-clock':
      return `goald edit ${id} --wall-clock <longer> --resume`;
    case 'stopped':
      return `start it again when ready: goald start "${goal.condition.length > 40 ? `${goal.condition.slice(0, 40)}…` : goal.condition}"`;
    case 'agent-missing':
      return 'install the agent or fix --agent, then start the goal again';
    case 'workspace-gone':
      return `restore ${goal.workspace}, then start the goal again`;
    case 'storage':
      return 'free disk space under GOALD_HOME, then start the goal again';
    case 'tamper':
      return `revert the changes to tests and checks (goald show ${id}), then start again`;
    default:
      return `read the turns (goald show ${id}), change the approach or the condition, then start again`;
  }
}

/** The view state of one goal from its record, its progress events and its loop (pure). */
export function deriveGoalView(input: GoalViewInput): GoalView {
  const { goal, events, now } = input;
  const limitsObject = objectAt(goal.settings, 'limits');
  const maxTurnsLimit = numberAt(limitsObject, 'maxTurns');
  const maxTurns = maxTurnsLimit !== null && maxTurnsLimit > 0 ? maxTurnsLimit : null;
  const tokenBudget = numberAt(limitsObject, 'tokenBudget');
  const costBudget = numberAt(limitsObject, 'costBudgetUsd');

  const series: TurnPoint[] = [];
  const providerErrors: ProviderError[] = [];
  let cumulative = 0;
  let counters: Partial<Record<BreakerName, number>> = {};
  let lastFiles: GoalView['lastTurnFiles'] = null;
  let lastReason: string | null = null;
  let lastRemaining: string[] | null = null;
  let startedTurn = 0;
  for (const event of events) {
    if (event.type === 'turn.started') startedTurn = Math.max(startedTurn, event.turn);
    if (event.type !== 'turn.finished') continue;
    startedTurn = Math.max(startedTurn, event.turn);
    cumulative += event.tokens;
    const passing = event.checks.filter((check) => check.passed).length;
    series.push({
      turn: event.turn,
      tokens: event.tokens,
      cumulativeTokens: cumulative,
      costUsd: event.view?.costUsd ?? null,
      filesChanged: event.filesChanged,
      checksPassing: passing,
      checksTotal: event.checks.length,
      remaining: event.verdict === null ? null : (event.view?.remaining.length ?? null),
      outcome: event.outcome,
      achieved: event.verdict === null ? null : event.verdict.achieved,
      tampered: event.tamper.length > 0,
    });
    if (event.view !== undefined) counters = event.view.breakers;
    lastFiles = { turn: event.turn, count: event.filesChanged, paths: event.view?.files ?? [] };
    if (event.verdict !== null) {
      lastReason = event.verdict.reason;
      lastRemaining = event.view?.remaining ?? null;
    }
    if (event.agentError !== null) providerErrors.push({ turn: event.turn, source: 'agent', message: event.agentError });
    if (event.evaluatorError !== null) providerErrors.push({ turn: event.turn, source: 'evaluator', message: event.evaluatorError });
  }

  const breakers: BreakerGauge[] = [];
  if (limitsObject !== null) {
    for (const counted of COUNTED) {
      const limit = counted.limit(limitsObject);
      const value = counters[counted.name];
      if (limit === null || limit <= 0 || value === undefined) continue;
      breakers.push({ name: counted.name, value, limit, text: `${counted.label} ${value} of ${limit}` });
    }
  }
  // Nearest first; a stable sort keeps the table's order among equals.
  breakers.sort((a, b) => b.value / b.limit - a.value / a.limit);

  const status = goalStatusOf(goal);
  const turn = Math.max(goal.summary.turns, startedTurn);
  const finished = goal.status === 'achieved' || goal.status === 'failed';
  const notRecovered = notRecoveredWhy(goal);
  const loop = input.loop ?? null;
  return {
    id: goal.id,
    condition: goal.condition,
    workspace: goal.workspace,
    status: goal.status,
    phase: goal.phase,
    glyph: status.glyph,
    tone: status.tone,
    statusText: status.text,
    turn,
    maxTurns,
    turnText: maxTurns === null ? String(turn) : `${turn}/${maxTurns}`,
    activeMs: activeMsOf(goal, now),
    tokens: { used: goal.summary.tokens, budget: tokenBudget !== null && tokenBudget > 0 ? tokenBudget : null },
    cost: { usd: goal.summary.costUsd, budget: costBudget },
    series,
    breakers,
    evaluator: {
      reason: lastReason ?? goal.summary.lastVerdictReason,
      remaining: lastRemaining ?? goal.summary.remaining,
    },
    lastTurnFiles: lastFiles,
    providerErrors: providerErrors.slice(-MAX_ERRORS),
    nextLoopRun: loop !== null && !loop.stopped ? loop.nextRunAt : null,
    pauseReason: goal.status === 'paused' ? (goal.pauseReason ?? 'requested') : null,
    stop: finished
      ? { reason: goal.reason ?? 'achieved', message: goal.reasonMessage, nextAction: nextActionOf(goal, maxTurns) }
      : notRecovered !== null
        ? { reason: 'not recovered', message: notRecovered, nextAction: `goald stop ${goal.id}` }
        : null,
  };
}
