// The drift detector: scores how far an agent's recent tool calls have strayed from its goal, from two
// signals — going in circles (the same file written or the same command run again and again) and losing
// the objective (recent actions share few words with the goal). Pure and import-light: the PostToolUse hook
// runs it on every check, and the supervisor runs it between turns on each adapter's parsed tool calls.

import type { ToolCall } from '../agents/types.js';
import { ellipsize } from '../cut-text.js';

/** The tool calls each check looks at (DESIGN.md § Prompt: "in the last 10 tool calls"). */
export const DRIFT_WINDOW = 10;
/** The same file written, or the same command run, this many times within the window is circular. */
const REPEAT_THRESHOLD = 3;
/** Above this score the reflection leads with an attention warning. */
const DRIFT_WARN_ABOVE = 0.5;
/** Above this score a check counts as high drift. */
const DRIFT_PAUSE_ABOVE = 0.7;
/** Consecutive high-drift checks that pause the goal for a human. */
export const DRIFT_PAUSE_CHECKS = 3;
// Weights from DESIGN.md § Prompt: drift = 0.6 × circular + 0.4 × objective.
const CIRCULAR_WEIGHT = 0.6;
const OBJECTIVE_WEIGHT = 0.4;
// Scores are rounded so float noise cannot flip a threshold: 0.6 × 1 + 0.4 × 0.25 is 0.7000000000000001.
const SCORE_DECIMALS = 4;
// Commands are named in warnings; a heredoc or a long pipeline is cut to this.
const WARNING_VALUE_MAX_CHARS = 120;

export interface RepeatedAction {
  kind: 'file' | 'command';
  /** The file path or the command (whitespace collapsed). */
  value: string;
  /** How many of the window's calls wrote that file or ran that command. */
  count: number;
}

export interface DriftResult {
  /** 0.6 × circular + 0.4 × objective, in 0..1. */
  score: number;
  /** 1 when a file was written or a command run REPEAT_THRESHOLD+ times in the window, else 0. */
  circular: number;
  /** 1 − the share of the goal's keywords found in the window's actions, in 0..1. */
  objective: number;
  /** The most repeated action at or above REPEAT_THRESHOLD; null when nothing repeats that often. */
  repeated: RepeatedAction | null;
}

export interface DriftState {
  /** Checks in a row scoring above DRIFT_PAUSE_ABOVE. */
  consecutiveHigh: number;
  /** True once DRIFT_PAUSE_CHECKS high checks came in a row. */
  shouldPause: boolean;
}

export const INITIAL_DRIFT_STATE: DriftState = Object.freeze({ consecutiveHigh: 0, shouldPause: false });

// Words that carry no objective: English function words and the filler of goal sentences ("make sure all
// the tests pass" keeps only "tests", "pass").
const STOP_WORDS = new Set([
  'a', 'about', 'above', 'after', 'again', 'all', 'also', 'and', 'any', 'are', 'because', 'been', 'before',
  'being', 'both', 'but', 'can', 'could', 'did', 'does', 'doing', 'done', 'each', 'every', 'few', 'for',
  'from', 'further', 'get', 'had', 'has', 'have', 'having', 'her', 'here', 'him', 'his', 'how', 'into', 'its',
  'itself', 'just', 'least', 'let', 'like', 'make', 'many', 'may', 'more', 'most', 'much', 'must', 'need',
  'needs', 'new', 'nor', 'not', 'now', 'off', 'once', 'one', 'only', 'other', 'our', 'out', 'over', 'own',
  'please', 'same', 'she', 'should', 'some', 'such', 'sure', 'than', 'that', 'the', 'their', 'them', 'then',
  'there', 'these', 'they', 'this', 'those', 'through', 'too', 'under', 'until', 'use', 'using', 'very',
  'want', 'was', 'way', 'were', 'what', 'when', 'where', 'which', 'while', 'who', 'whom', 'why', 'will',
  'with', 'without', 'would', 'yet', 'you', 'your',
]);

/**
 * Scores drift over the last DRIFT_WINDOW of `recentCalls`. Circular is all-or-nothing on purpose: writing
 * a file twice (write, then fix) or running the tests twice is ordinary work, so a graded value below the
 * threshold would only add noise; the third repeat is the signal DESIGN.md names.
 */
export function scoreDrift(input: { goal: string; recentCalls: readonly ToolCall[] }): DriftResult {
  const window = input.recentCalls.slice(-DRIFT_WINDOW);
  const repeated = findRepeatedAction(window);
  const circular = repeated === null ? 0 : 1;
  const objective = round(1 - measureKeywordOverlap(input.goal, window));
  const score = round(CIRCULAR_WEIGHT * circular + OBJECTIVE_WEIGHT * objective);
  return { score, circular, objective, repeated };
}

/** The attention line the reflection leads with when drift is above DRIFT_WARN_ABOVE; null otherwise. */
export function driftWarning(result: DriftResult): string | null {
  if (result.score <= DRIFT_WARN_ABOVE) return null;
  const head = `ATTENTION — drift ${result.score.toFixed(2)}:`;
  const offTopic = result.objective >= 0.5 ? ', and your recent actions share little with the task' : '';
  if (result.repeated === null) {
    return `${head} your recent actions share little with the task. Re-read it and steer back to it.`;
  }
  const { kind, value, count } = result.repeated;
  const shown = ellipsize(value, WARNING_VALUE_MAX_CHARS, '...');
  const what = kind === 'file' ? `you wrote ${shown}` : `you ran \`${shown}\``;
  return (
    `${head} ${what} ${count} times in the last ${DRIFT_WINDOW} tool calls${offTopic}. ` +
    'Repeating it is not progress: stop, say what the repeats showed, and change approach.'
  );
}

/** Folds one check into the tracker: high checks in a row, and whether the goal should pause. */
export function nextDriftState(state: DriftState, result: DriftResult): DriftState {
  const consecutiveHigh = result.score > DRIFT_PAUSE_ABOVE ? state.consecutiveHigh + 1 : 0;
  return { consecutiveHigh, shouldPause: consecutiveHigh >= DRIFT_PAUSE_CHECKS };
}

/**
 * The keywords of a text: identifiers and paths split on `/`, `.`, `_`, `-` and camelCase humps, lowercased,
 * at least 3 characters, stop words dropped, and a plural `s` folded so "tests" meets "test".
 */
export function extractKeywords(text: string): Set<string> {
  const words = text
    // parseJSONFile → parse JSON File; fooBar → foo Bar.
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  const keywords = new Set<string>();
  for (const word of words) {
    if (word.length < 3 || STOP_WORDS.has(word)) continue;
    keywords.add(foldPlural(word));
  }
  return keywords;
}

// "tests" → "test", "files" → "file"; "class", "status", "bus" stay.
function foldPlural(word: string): string {
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

// The share of the goal's keywords that appear in the calls' names, files and commands. With no keywords in
// the goal, or no calls yet, there is nothing to judge: the overlap counts as full.
function measureKeywordOverlap(goal: string, calls: readonly ToolCall[]): number {
  const goalWords = extractKeywords(goal);
  if (goalWords.size === 0 || calls.length === 0) return 1;
  const actionWords = extractKeywords(
    calls.map((call) => [call.name, call.filePath ?? '', call.command ?? ''].join(' ')).join('\n'),
  );
  let shared = 0;
  for (const word of goalWords) if (actionWords.has(word)) shared += 1;
  return Math.min(1, shared / goalWords.size);
}

// The action repeated most often at or above the threshold; on a tie, the one repeated most recently.
function findRepeatedAction(calls: readonly ToolCall[]): RepeatedAction | null {
  const counts = new Map<string, { action: RepeatedAction; lastIndex: number }>();
  calls.forEach((call, index) => {
    const keys: Array<{ kind: 'file' | 'command'; value: string }> = [];
    if (call.filePath !== undefined && call.filePath.trim() !== '') {
      keys.push({ kind: 'file', value: call.filePath.trim() });
    }
    if (call.command !== undefined && call.command.trim() !== '') {
      keys.push({ kind: 'command', value: call.command.replace(/\s+/g, ' ').trim() });
    }
    for (const { kind, value } of keys) {
      const key = `${kind}\u0000${value}`;
      const entry = counts.get(key);
      if (entry === undefined) counts.set(key, { action: { kind, value, count: 1 }, lastIndex: index });
      else counts.set(key, { action: { ...entry.action, count: entry.action.count + 1 }, lastIndex: index });
    }
  });
  let best: { action: RepeatedAction; lastIndex: number } | null = null;
  for (const entry of counts.values()) {
    if (entry.action.count < REPEAT_THRESHOLD) continue;
    if (
      best === null ||
      entry.action.count > best.action.count ||
      (entry.action.count === best.action.count && entry.lastIndex > best.lastIndex)
    ) {
      best = entry;
    }
  }
  return best?.action ?? null;
}

function round(value: number): number {
  const factor = 10 ** SCORE_DECIMALS;
  return Math.round(value * factor) / factor;
}

