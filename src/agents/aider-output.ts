// Reading aider's console output line by line: its usage report after each model call (`Tokens: 12k sent,
// 1.2k received. Cost: $0.01 message, $0.05 session.`, the cost on the next line when both cache counts
// are shown, no cost at all when aider has no price for the model), `Applied edit to <file>`, the model
// banner, and the rate-limit errors litellm raises. Counts are as aider prints them: above 1 000 they are
// rounded to 0.1k or 1k.

import type { ToolCall } from './types.js';

export interface AiderTokenReport {
  sent: number;
  cacheWrite: number;
  cacheHit: number;
  received: number;
}

export interface AiderCostReport {
  /** USD of this model call (or calls, when aider reflected on its own edits). */
  messageUsd: number;
  /** USD of the whole aider process so far. */
  sessionUsd: number;
}

/** What one line of aider's output says. */
export type AiderLine =
  | { kind: 'tokens'; tokens: AiderTokenReport; cost: AiderCostReport | null }
  | { kind: 'cost'; cost: AiderCostReport }
  | { kind: 'edit'; filePath: string }
  | { kind: 'model'; model: string }
  | { kind: 'rate-limit'; message: string }
  /** aider's own status lines (banner, commits, hints): never the final message. */
  | { kind: 'status' }
  /** Anything else: the model's reply and the rest. */
  | { kind: 'text'; text: string };

export interface AiderSummary {
  /** Usage reports seen (one per model call). */
  reports: number;
  sent: number;
  cacheWrite: number;
  cacheHit: number;
  received: number;
  /** The last `session` cost (the process's running total), else the sum of `message` costs; null if none. */
  costUsd: number | null;
  model: string | null;
  toolCalls: ToolCall[];
  /** The last line of text that is not one of aider's status lines. */
  finalMessage: string;
  /** Set when the last model call failed on a rate limit (no usage report came after it). */
  rateLimit: string | null;
}

// CSI/OSC escape sequences, in case colours get through (--no-pretty normally removes them).
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;
const COUNT = String.raw`(\d[\d,]*(?:\.\d+)?[kKmM]?)`;
const TOKEN_ITEM = new RegExp(`${COUNT} (sent|cache write|cache hit|cache read|received|Total)\\b`, 'g');
const COST = /Cost: \$([\d,]*\.?\d+) message, \$([\d,]*\.?\d+) session\./;
const MODEL = /^(?:Main )?[Mm]odel: (\S+)(?: with |$)/;
const EDIT = /^Applied edit to (.+?)\s*$/;
const RATE_LIMIT = /^litellm\.RateLimitError:/;
// aider's own lines: banner, repo and chat bookkeeping, commits, hints, separators.
const STATUS_LINES = [
  /^Aider v\d/,
  /^(?:Weak|Editor) model: /,
  /^Git repo: /,
  /^Repo-map: /,
  /^Added .+ to the chat/,
  /^Creating empty file /,
  /^Commit [0-9a-f]{7,} /,
  /^Did not apply edit to /,
  /^You can use \/undo/,
  /^Use \/help /,
  /^https:\/\/aider\.chat\//,
  /^Retrying in [\d.]+ seconds/,
  /^Warning(?::| for )/,
  /^[─━-]{8,}$/,
];
// Past this many tool calls in one turn the list stops growing (the counts still say enough).
const MAX_TOOL_CALLS = 1_000;

/** A count as aider prints it: `850`, `1.2k`, `12k`, `3.4M`, `1,234`; null when it is not one. */
export function parseAiderCount(text: string): number | null {
  const match = /^(\d[\d,]*(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (match === null) return null;
  const value = Number((match[1] ?? '').replaceAll(',', ''));
  if (!Number.isFinite(value)) return null;
  const unit = (match[2] ?? '').toLowerCase();
  const factor = unit === 'k' ? 1_000 : unit === 'm' ? 1_000_000 : 1;
  return Math.round(value * factor);
}

/** Classifies one line of aider's output. */
export function readAiderLine(rawLine: string): AiderLine {
  const line = rawLine.replace(ANSI, '').trim();
  if (line.startsWith('Tokens: ')) {
    const tokens = readTokenItems(line);
    if (tokens !== null) return { kind: 'tokens', tokens, cost: readCost(line) };
  }
  if (line.startsWith('Cost: ')) {
    const cost = readCost(line);
    if (cost !== null) return { kind: 'cost', cost };
  }
  const edit = EDIT.exec(line);
  if (edit?.[1] !== undefined) return { kind: 'edit', filePath: edit[1] };
  const model = MODEL.exec(line);
  if (model?.[1] !== undefined) return { kind: 'model', model: model[1] };
  if (RATE_LIMIT.test(line)) return { kind: 'rate-limit', message: line };
  if (STATUS_LINES.some((pattern) => pattern.test(line))) return { kind: 'status' };
  return { kind: 'text', text: line };
}

/** Accumulates one turn's output, line by line; `summary()` may be read at any time (live limits). */
export function createAiderOutputReader(): { push(line: string): AiderLine; summary(): AiderSummary } {
  const summary: AiderSummary = {
    reports: 0,
    sent: 0,
    cacheWrite: 0,
    cacheHit: 0,
    received: 0,
    costUsd: null,
    model: null,
    toolCalls: [],
    finalMessage: '',
    rateLimit: null,
  };
  let messageCostSum: number | null = null;
  let sessionCost: number | null = null;
  // A `Cost:` line on its own belongs to the report on the line just before it.
  let costExpected = false;

  const addCost = (cost: AiderCostReport): void => {
    messageCostSum = (messageCostSum ?? 0) + cost.messageUsd;
    sessionCost = cost.sessionUsd;
  };

  return {
    push(rawLine) {
      const line = readAiderLine(rawLine);
      const costBelongsHere = costExpected;
      costExpected = false;
      switch (line.kind) {
        case 'tokens':
          summary.reports += 1;
          summary.sent += line.tokens.sent;
          summary.cacheWrite += line.tokens.cacheWrite;
          summary.cacheHit += line.tokens.cacheHit;
          summary.received += line.tokens.received;
          summary.rateLimit = null;
          if (line.cost === null) costExpected = true;
          else addCost(line.cost);
          break;
        case 'cost':
          if (costBelongsHere) addCost(line.cost);
          break;
        case 'edit':
          if (summary.toolCalls.length < MAX_TOOL_CALLS) {
            summary.toolCalls.push({ name: 'edit', filePath: line.filePath });
          }
          break;
        case 'model':
          summary.model ??= line.model;
          break;
        case 'rate-limit':
          summary.rateLimit = line.message;
          break;
        case 'text':
          if (line.text !== '') summary.finalMessage = line.text;
          break;
        case 'status':
          break;
      }
      return line;
    },
    summary() {
      // aider rounds each figure it prints; its running session total is more exact than a sum of rounded
      // message costs (one aider process runs one turn, so the session total is the turn's cost).
      return { ...summary, costUsd: sessionCost ?? messageCostSum, toolCalls: [...summary.toolCalls] };
    },
  };
}

// `Tokens: 12k sent, 1.1k cache write, 3.2k cache hit, 215 received.` → counts; null without sent/received.
// Also reads the `; 4.5k Total (...)` form of some aider builds, where Total is what was received.
function readTokenItems(line: string): AiderTokenReport | null {
  const report: AiderTokenReport = { sent: 0, cacheWrite: 0, cacheHit: 0, received: 0 };
  let sawSent = false;
  let sawReceived = false;
  let total: number | null = null;
  for (const match of line.matchAll(TOKEN_ITEM)) {
    const value = parseAiderCount(match[1] ?? '');
    if (value === null) continue;
    switch (match[2]) {
      case 'sent':
        report.sent = value;
        sawSent = true;
        break;
      case 'cache write':
        report.cacheWrite = value;
        break;
      case 'cache hit':
      case 'cache read':
        report.cacheHit = value;
        break;
      case 'received':
        report.received = value;
        sawReceived = true;
        break;
      case 'Total':
        total = value;
        break;
    }
  }
  if (!sawReceived && total !== null) {
    report.received = total;
    sawReceived = true;
  }
  return sawSent && sawReceived ? report : null;
}

function readCost(line: string): AiderCostReport | null {
  const match = COST.exec(line);
  if (match === null) return null;
  const messageUsd = Number((match[1] ?? '').replaceAll(',', ''));
  const sessionUsd = Number((match[2] ?? '').replaceAll(',', ''));
  return Number.isFinite(messageUsd) && Number.isFinite(sessionUsd) ? { messageUsd, sessionUsd } : null;
}
