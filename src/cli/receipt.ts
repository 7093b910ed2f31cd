// `goald show <goal> --receipt`: what a goal did and spent, turn by turn, in a form stable enough to attach
// to a pull request. Pure: built from the stored goal record and turn records only (no clock, no
// machine-specific state), so the same goal always gives the same receipt.

import { computeCost } from '../agents/price-table.js';
import { formatUsd } from '../breakers/format-quantity.js';
import { parseStoredSettings } from '../config/settings-schema.js';
import { formatDuration } from '../config/duration.js';
import { oneLine, ellipsize } from '../cut-text.js';
import type { GoalRecord } from '../../state/types.js';
import type { TurnRecord } from '../../state/turn-record.js';

/** Bumped when a field of the JSON receipt changes meaning or goes away (new fields do not bump it). */
export const RECEIPT_VERSION = 1;

// Words from the agent or a model are cut to this many characters in a row.
const REASON_CHARS = 160;

export interface ReceiptTurn {
  turn: number;
  outcome: string;
  durationMs: number;
  tree: string;
  patchId: string | null;
  filesChanged: number;
  checks: { passed: number; total: number; failing: string[] };
  verdict: { kind: 'achieved' | 'not-achieved' | 'blocked' | 'error' | 'skipped'; reason: string };
  tokens: { input: number; cached: number; output: number; evaluator: number; estimated: boolean };
  /** USD the agent reported; null when it reported none (or goald priced it). */
  costReported: number | null;
  /** USD from goald's price table for the agent's model; null when the model has no price. */
  costComputed: number | null;
  tamper: { kind: string; path: string }[];
  /** What the user told the agent before this turn (`goald say`), as the prompt carried it. */
  guidance: string[];
  /** How far the goal still was after the turn: the evaluator's remaining items, the checks' failing tests. */
  distance: { remaining: number | null; failingTests: number | null } | null;
  /** The breaker that tripped on this turn, with its numbers. */
  trip: { breaker: string; value: number; limit: number; message: string } | null;
}

export interface Receipt {
  receipt: number;
  goal: {
    id: string;
    condition: string;
    workspace: string;
    status: string;
    createdAt: string;
    finishedAt: string | null;
    agent: string | null;
    evaluator: string | null;
    checks: string[];
  };
  turns: ReceiptTurn[];
  stop: { status: string; reason: string | null; message: string | null; trip: ReceiptTurn['trip'] };
  totals: {
    turns: number;
    tokens: number;
    inputTokens: number;
    cachedInputTokens: number;
    outputTokens: number;
    evaluatorTokens: number;
    costReported: number;
    costComputed: number;
    /** The goal's cost as its budget counted it. */
    costUsd: number;
    activeMs: number;
    tamperTurns: number;
    /** The cost of this goal when it was achieved; null when it was not (no achieved goal to divide by). */
    costPerAchievedGoal: number | null;
  };
}

/** The receipt of one goal from its record and its turn records (turn 0, the pre-check, included). */
export function buildReceipt(goal: GoalRecord, turns: readonly TurnRecord[]): Receipt {
  const parsed = parseStoredSettings(goal.settings);
  const settings = parsed.ok ? parsed.settings : null;
  const model = settings?.agent.model ?? null;
  const prices = settings?.agent.prices ?? {};
  const rows = turns.map((turn) => receiptTurn(turn, model, prices));
  const sum = (pick: (row: ReceiptTurn) => number | null): number => round(rows.reduce((total, row) => total + (pick(row) ?? 0), 0));
  const lastTrip = [...rows].reverse().find((row) => row.trip !== null)?.trip ?? null;
  const costUsd = goal.summary.costUsd;
  return {
    receipt: RECEIPT_VERSION,
    goal: {
      id: goal.id,
      condition: goal.condition,
      workspace: goal.workspace,
      status: goal.status,
      createdAt: goal.createdAt,
      finishedAt: goal.finishedAt,
      agent: settings === null ? null : `${settings.agent.adapter}${settings.agent.model === null ? '' : ` (${settings.agent.model})`}`,
      evaluator: settings === null ? null : settings.evaluator.provider === 'none' ? 'none' : `${settings.evaluator.provider}:${settings.evaluator.model ?? '?'}`,
      checks: settings?.checks.map((check) => check.run) ?? [],
    },
    turns: rows,
    stop: { status: goal.status, reason: goal.reason, message: goal.reasonMessage, trip: lastTrip },
    totals: {
      turns: goal.summary.turns,
      tokens: goal.summary.tokens,
      inputTokens: sum((row) => row.tokens.input),
      cachedInputTokens: sum((row) => row.tokens.cached),
      outputTokens: sum((row) => row.tokens.output),
      evaluatorTokens: sum((row) => row.tokens.evaluator),
      costReported: sum((row) => row.costReported),
      costComputed: sum((row) => row.costComputed),
      costUsd,
      activeMs: goal.summary.activeMs,
      tamperTurns: rows.filter((row) => row.tamper.length > 0).length,
      costPerAchievedGoal: goal.status === 'achieved' ? costUsd : null,
    },
  };
}

function receiptTurn(turn: TurnRecord, model: string | null, prices: Parameters<typeof computeCost>[2]): ReceiptTurn {
  const usage = turn.agent?.usage ?? null;
  const evaluation = turn.evaluation;
  const evaluatorTokens = evaluation.kind === 'skipped' ? 0 : evaluation.usage.inputTokens + evaluation.usage.outputTokens;
  const passed = turn.checks.filter((check) => check.passed);
  const tokens = {
    input: usage?.inputTokens ?? 0,
    cached: usage?.cachedInputTokens ?? 0,
    output: usage?.outputTokens ?? 0,
    evaluator: evaluatorTokens,
    estimated: usage?.estimated ?? false,
  };
  const reported = usage === null || turn.agent?.costComputed === true ? null : usage.costUsd;
  const computed = usage === null || usage.estimated ? null : computeCost(model, { inputTokens: tokens.input, cachedInputTokens: tokens.cached, outputTokens: tokens.output }, prices);
  return {
    turn: turn.turn,
    outcome: turn.agent?.outcome ?? 'pre-check',
    durationMs: Date.parse(turn.finishedAt) - Date.parse(turn.startedAt),
    tree: turn.tree,
    patchId: turn.patchId,
    filesChanged: turn.files.length,
    checks: { passed: passed.length, total: turn.checks.length, failing: turn.checks.filter((check) => !check.passed).map((check) => check.name) },
    verdict: verdictOf(turn),
    tokens,
    costReported: reported,
    costComputed: turn.agent?.costComputed === true ? usage?.costUsd ?? null : computed,
    tamper: (turn.tamper ?? []).map((finding) => ({ kind: finding.kind, path: finding.path })),
    guidance: turn.guidance ?? [],
    distance: turn.distance ?? null,
    trip: turn.trip === null ? null : { breaker: turn.trip.breaker, value: turn.trip.value, limit: turn.trip.limit, message: turn.trip.message },
  };
}

function verdictOf(turn: TurnRecord): ReceiptTurn['verdict'] {
  const evaluation = turn.evaluation;
  switch (evaluation.kind) {
    case 'verdict': {
      const { verdict } = evaluation;
      const kind = verdict.achieved ? 'achieved' : verdict.blocked ? 'blocked' : 'not-achieved';
      return { kind, reason: ellipsize(oneLine(verdict.reason), REASON_CHARS) };
    }
    case 'error':
      return { kind: 'error', reason: ellipsize(oneLine(evaluation.message), REASON_CHARS) };
    case 'skipped':
      return { kind: turn.achieved ? 'achieved' : 'skipped', reason: ellipsize(oneLine(evaluation.reason), REASON_CHARS) };
  }
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

// Markdown from words goald did not write: no HTML (GitHub renders some), no table breaks, no emphasis,
// links or code spans of the agent's making.
function mdText(text: string): string {
  return oneLine(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]|#!~])/g, '\\$1');
}

function usd(value: number | null): string {
  return value === null ? '–' : formatUsd(value);
}

function distanceCell(distance: ReceiptTurn['distance']): string {
  if (distance === null) return '–';
  const parts = [distance.remaining === null ? null : `${distance.remaining} remaining`, distance.failingTests === null ? null : `${distance.failingTests} failing`];
  const shown = parts.filter((part): part is string => part !== null);
  return shown.length === 0 ? '–' : shown.join(', ');
}

function tokensCell(tokens: ReceiptTurn['tokens']): string {
  const agent = `${tokens.input}/${tokens.cached}/${tokens.output}${tokens.estimated ? ' (est.)' : ''}`;
  return tokens.evaluator > 0 ? `${agent} + ${tokens.evaluator} eval` : agent;
}

/** The receipt as Markdown: a header, one table row per turn, the stop reason and the totals. */
export function renderReceiptMarkdown(receipt: Receipt): string {
  const { goal, totals, stop } = receipt;
  const lines = [
    `## goald receipt · ${mdText(goal.condition)}`,
    '',
    `- goal \`${goal.id}\` · ${goal.status} · started ${goal.createdAt}${goal.finishedAt === null ? '' : ` · finished ${goal.finishedAt}`}`,
    `- agent ${goal.agent === null ? '?' : mdText(goal.agent)} · evaluator ${goal.evaluator === null ? '?' : mdText(goal.evaluator)}`,
    `- checks: ${goal.checks.length === 0 ? 'none' : goal.checks.map((check) => mdText(check)).join(' · ')}`,
    '',
    '| turn | outcome | time | tree | patch id | files | checks | verdict | distance | tokens in/cached/out | cost reported | cost computed | tamper | guidance |',
    '|---:|---|---:|---|---|---:|---|---|---|---|---:|---:|---|---|',
  ];
  for (const row of receipt.turns) {
    const checks = `${row.checks.passed}/${row.checks.total}${row.checks.failing.length > 0 ? ` (failing: ${row.checks.failing.map(mdText).join(', ')})` : ''}`;
    const verdict = `${row.verdict.kind}: ${mdText(row.verdict.reason)}`;
    const tamper = row.tamper.length === 0 ? '–' : row.tamper.map((finding) => `${finding.kind} ${mdText(finding.path)}`).join(', ');
    const guidance = row.guidance.length === 0 ? '–' : row.guidance.map((text) => mdText(ellipsize(text, REASON_CHARS))).join(' / ');
    lines.push(
      `| ${row.turn} | ${row.outcome} | ${formatDuration(row.durationMs)} | \`${row.tree.slice(0, 12)}\` | ${row.patchId === null ? '–' : `\`${row.patchId.slice(0, 12)}\``} | ${row.filesChanged} | ${checks} | ${verdict} | ${distanceCell(row.distance)} | ${tokensCell(row.tokens)} | ${usd(row.costReported)} | ${usd(row.costComputed)} | ${tamper} | ${guidance} |`,
    );
  }
  const trip = stop.trip === null ? '' : ` · ${stop.trip.breaker} ${stop.trip.value} of ${stop.trip.limit}`;
  lines.push(
    '',
    `**Stop:** ${stop.status}${stop.reason === null ? '' : ` (${stop.reason})`}${trip}${stop.message === null ? '' : ` — ${mdText(stop.message)}`}`,
    '',
    `**Totals:** ${totals.turns} turns · ${totals.tokens} tokens (agent in ${totals.inputTokens} / cached ${totals.cachedInputTokens} / out ${totals.outputTokens}; evaluator ${totals.evaluatorTokens}) · cost ${formatUsd(totals.costUsd)} (reported ${formatUsd(totals.costReported)}, computed ${formatUsd(totals.costComputed)}) · active ${formatDuration(totals.activeMs)} · tamper turns ${totals.tamperTurns} · cost per achieved goal ${totals.costPerAchievedGoal === null ? '– (not achieved)' : formatUsd(totals.costPerAchievedGoal)}`,
  );
  return lines.join('\n');
}
