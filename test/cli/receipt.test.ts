// The receipt (`goald show <goal> --receipt`): built from stored records only, the same every time, with
// cost as reported and as priced from goald's table, and words from the agent or a model kept as text in
// Markdown (no HTML, no table breaks, no links).

import { describe, expect, it } from 'vitest';
import { DEFAULT_GUARD, DEFAULT_LIMITS, DEFAULT_NOISE_PATHS } from '../../src/config/defaults.js';
import type { GoalSettings } from '../../src/config/types.js';
import { buildReceipt, renderReceiptMarkdown, RECEIPT_VERSION } from '../../src/cli/receipt.js';
import { toJson } from '../../state/json.js';
import { makeGoal, makeTurn } from '../state/fixtures.js';

const settings: GoalSettings = {
  condition: 'all tests pass',
  workspace: '/work/repo',
  checks: [{ name: 'npm test', run: 'npm test', timeoutMs: 60_000 }],
  agent: { adapter: 'claude-code', command: 'claude', args: [], session: 'fresh', model: 'claude-opus-4-1', prices: {} },
  evaluator: { provider: 'openai', model: 'gpt-5-mini', baseURL: null, maxInputChars: 24_000, skipWhenChecksFail: true, timeoutMs: 10_000, retries: 0 },
  limits: { ...DEFAULT_LIMITS },
  ancestry: {},
  noisePaths: [...DEFAULT_NOISE_PATHS],
  allowSameModel: false,
  recitation: { everyToolCalls: 10 },
  guard: { ...DEFAULT_GUARD, testFiles: [...DEFAULT_GUARD.testFiles] },
};

const HOSTILE = 'done | <img src=x onerror=alert(1)> **bold** [link](http://evil.example)\n| 9 | forged row |';

function sample() {
  const goal = makeGoal('gabc', {
    status: 'failed',
    reason: 'stagnation',
    reasonMessage: 'no change in the checks for 3 turns',
    finishedAt: '2026-01-01T00:05:00.000Z',
    settings: toJson(settings),
    summary: { ...makeGoal('g').summary, turns: 2, tokens: 4_300, costUsd: 0.42, activeMs: 65_000 },
  });
  const failing = { name: 'npm test', command: 'npm test', exitCode: 1, passed: false, timedOut: false, durationMs: 900, outputTail: 'x' };
  const turns = [
    makeTurn({ goalId: 'gabc', turn: 0, agent: null, checks: [failing], tokens: 0, patchId: null, files: [] }),
    makeTurn({
      goalId: 'gabc',
      turn: 1,
      checks: [failing],
      agent: {
        outcome: 'completed', exitCode: 0, signal: null, durationMs: 1000, finalMessage: 'ok', error: null,
        usage: { inputTokens: 1_000, cachedInputTokens: 2_000, outputTokens: 300, totalTokens: 1_300, costUsd: 0.2, estimated: false },
      },
      evaluation: { kind: 'verdict', verdict: { achieved: false, blocked: false, reason: HOSTILE, remaining: ['fix a'] }, usage: { inputTokens: 500, outputTokens: 50 }, model: 'gpt-5-mini' },
      tamper: [{ kind: 'skip-marker', path: 'test/a.test.ts', detail: '.skip(' }],
      guidance: ['use the <b>fixtures</b> | not the network'],
      distance: { remaining: 1, failingTests: 3 },
    }),
    makeTurn({
      goalId: 'gabc',
      turn: 2,
      checks: [{ ...failing }],
      agent: {
        outcome: 'completed', exitCode: 0, signal: null, durationMs: 1000, finalMessage: 'ok', error: null, costComputed: true,
        usage: { inputTokens: 2_000, outputTokens: 400, totalTokens: 2_400, costUsd: 0.22, estimated: false },
      },
      trip: { breaker: 'stagnation', message: 'no change in the checks for 3 turns', value: 3, limit: 3 },
      status: 'failed',
    }),
  ];
  return { goal, turns };
}

describe('buildReceipt', () => {
  it('one row per turn with the tree, patch id, checks, verdict, tokens, both costs and tamper; totals and the stop', () => {
    const { goal, turns } = sample();
    const receipt = buildReceipt(goal, turns);
    expect(receipt.receipt).toBe(RECEIPT_VERSION);
    expect(receipt.goal).toMatchObject({ id: 'gabc', agent: 'claude-code (claude-opus-4-1)', evaluator: 'openai:gpt-5-mini', checks: ['npm test'] });
    expect(receipt.turns.map((row) => row.turn)).toEqual([0, 1, 2]);
    const [pre, first, second] = receipt.turns;
    expect(pre).toMatchObject({ outcome: 'pre-check', patchId: null, costReported: null, costComputed: null, checks: { passed: 0, total: 1, failing: ['npm test'] } });
    expect(first).toMatchObject({
      tree: 'a'.repeat(40),
      patchId: 'b'.repeat(40),
      verdict: { kind: 'not-achieved' },
      tokens: { input: 1_000, cached: 2_000, output: 300, evaluator: 550, estimated: false },
      costReported: 0.2,
      // claude-opus-4-1: $15 / M input, $1.5 / M cached, $75 / M output.
      costComputed: 0.0405, // 0.015 + 0.003 + 0.0225
      tamper: [{ kind: 'skip-marker', path: 'test/a.test.ts' }],
      guidance: ['use the <b>fixtures</b> | not the network'],
      distance: { remaining: 1, failingTests: 3 },
    });
    expect(pre).toMatchObject({ guidance: [], distance: null });
    // Priced by goald already (Codex-style): no reported cost, the computed one as recorded.
    expect(second).toMatchObject({ costReported: null, costComputed: 0.22, trip: { breaker: 'stagnation', value: 3, limit: 3 } });
    expect(receipt.stop).toMatchObject({ status: 'failed', reason: 'stagnation', message: 'no change in the checks for 3 turns', trip: { breaker: 'stagnation' } });
    expect(receipt.totals).toMatchObject({ turns: 2, tokens: 4_300, inputTokens: 3_000, cachedInputTokens: 2_000, outputTokens: 700, evaluatorTokens: 550, costReported: 0.2, costUsd: 0.42, tamperTurns: 1, costPerAchievedGoal: null });
    expect(receipt.totals.costComputed).toBeCloseTo(0.0405 + 0.22, 6);
  });

  it('an achieved goal states its cost per achieved goal; a goal without readable settings still gets a receipt', () => {
    const { goal, turns } = sample();
    const achieved = buildReceipt({ ...goal, status: 'achieved', reason: null, reasonMessage: null, settings: { broken: true } }, turns);
    expect(achieved.totals.costPerAchievedGoal).toBe(0.42);
    expect(achieved.goal.agent).toBeNull();
    expect(achieved.turns[1]?.costComputed).toBeNull();
  });
});

describe('renderReceiptMarkdown', () => {
  it('is the same for the same records, and keeps model words as text: no HTML, no forged rows, no links', () => {
    const { goal, turns } = sample();
    const markdown = renderReceiptMarkdown(buildReceipt(goal, turns));
    expect(renderReceiptMarkdown(buildReceipt(goal, turns))).toBe(markdown);
    const rows = markdown.split('\n').filter((line) => line.startsWith('| '));
    expect(rows).toHaveLength(4); // the header and turns 0-2: the forged row stayed inside its cell
    expect(markdown).not.toContain('<img');
    expect(markdown).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(markdown).toContain('\\*\\*bold\\*\\* \\[link\\](http://evil.example)');
    expect(markdown).toContain('done \\| ');
    expect(markdown).toContain('| 1 | completed | 1s | `aaaaaaaaaaaa` | `bbbbbbbbbbbb` | 1 | 0/1 (failing: npm test) |');
    expect(markdown).toContain('| 1 remaining, 3 failing | 1000/2000/300 + 550 eval | $0.20 | $0.04 | skip-marker test/a.test.ts | use the &lt;b&gt;fixtures&lt;/b&gt; \\| not the network |');
    expect(markdown).toContain('**Stop:** failed (stagnation) · stagnation 3 of 3 — no change in the checks for 3 turns');
    expect(markdown).toContain('cost per achieved goal – (not achieved)');
  });
});
