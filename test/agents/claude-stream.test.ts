// The parser against streams recorded from the real Claude Code 2.1.332 (`-p --output-format stream-json
// --verbose`) driven by a fake Anthropic server (test-agents/helpers/fake-anthropic.ts): the fake reported
// per API call input 1000/1200/1500 (cache reads 0/900/0) and output 50/30/10 tokens.

import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { createClaudeStreamParser, type ClaudeStreamParser } from '../../src/agents/claude-stream.js';

const WORKSPACE = '/tmp/explore/ws'; // where the streams were recorded
// 2026-11-30 04:10 UTC, about when the usage-limit stream was recorded.
const NOW = Date.UTC(2026, 10, 30, 4, 10);

function recorded(name: string): string[] {
  const text = readFileSync(new URL(`../fixtures/streams/${name}.jsonl`, import.meta.url), 'utf8');
  return text.split('\n').filter((line) => line !== '');
}

function parse(lines: readonly string[], timeZone?: string): ClaudeStreamParser {
  const parser = createClaudeStreamParser({ cwd: WORKSPACE, now: () => NOW, timeZone });
  for (const line of lines) parser.push(line);
  return parser;
}

describe('a turn that used its tools', () => {
  const summary = parse(recorded('claude-tools')).summary();

  test('session, model, final message', () => {
    expect(summary.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(summary.model).toBe('claude-opus-5-5');
    expect(summary.finalMessage).toBe('All done.');
    expect(summary.failure).toBeNull();
    expect(summary.usageLimit).toBeNull();
    expect(summary.permissionDenials).toBe(0);
  });

  test('the result usage and cost, as reported', () => {
    expect(summary.result).toMatchObject({
      isError: false,
      terminalReason: 'completed',
      numTurns: 3,
      tokens: { inputTokens: 3_700, cacheCreationInputTokens: 0, cacheReadInputTokens: 900, outputTokens: 90 },
      totalCostUsd: 0.01678,
      invocationCostUsd: 0.01678,
    });
  });

  test('tool calls: Write with its file (relative to the workspace), Bash with its command', () => {
    expect(summary.toolCalls).toEqual([
      { name: 'Write', filePath: 'hello.txt' },
      { name: 'Bash', command: 'cat hello.txt && echo done > done.txt' },
    ]);
  });
});

describe('live tokens', () => {
  test('grow with each API call, are not summed per content block, and end at the result total', () => {
    const lines = recorded('claude-tools');
    const parser = createClaudeStreamParser({ cwd: WORKSPACE, now: () => NOW });
    const seen: number[] = [];
    for (const line of lines) {
      parser.push(line);
      seen.push(parser.liveTokens());
    }
    for (let index = 1; index < seen.length; index += 1) expect(seen[index]).toBeGreaterThanOrEqual(seen[index - 1] ?? 0);
    // Before the result: three API calls of 1000, 1200 and 1500 input tokens, counted once each although
    // the first call's usage came on two events (its text and its tool_use).
    const beforeResult = seen.at(-2) ?? 0;
    expect(beforeResult).toBeGreaterThanOrEqual(3_700);
    expect(beforeResult).toBeLessThan(3_700 + 90 + 100);
    // The result's total replaces the estimate: input + cache writes + output (cache reads apart).
    expect(seen.at(-1)).toBe(3_790);
  });

  test('the first API call alone counts its input once', () => {
    const lines = recorded('claude-tools');
    const parser = parse(lines.slice(0, 3)); // init, the text block, the tool_use block of msg_1
    expect(parser.liveTokens()).toBeGreaterThanOrEqual(1_000);
    expect(parser.liveTokens()).toBeLessThan(1_100);
  });
});

describe('permission denials', () => {
  test('counted from the result, tools named', () => {
    const summary = parse(recorded('claude-permission-denied')).summary();
    expect(summary.permissionDenials).toBe(2);
    expect(summary.deniedTools).toEqual(['Write', 'Bash']);
    // Claude Code calls this turn a success; the adapter makes it a failure.
    expect(summary.result?.isError).toBe(false);
  });

  test('counted from the permission_denied events when no result came (a killed turn)', () => {
    const lines = recorded('claude-permission-denied').filter((line) => !line.startsWith('{"duration_api_ms"'));
    const summary = parse(lines).summary();
    expect(summary.result).toBeNull();
    expect(summary.permissionDenials).toBe(2);
  });
});

describe('failures', () => {
  test('max turns: is_error with terminal_reason max_turns', () => {
    const summary = parse(recorded('claude-max-turns')).summary();
    expect(summary.result).toMatchObject({ isError: true, subtype: 'error_max_turns', terminalReason: 'max_turns' });
    expect(summary.failure).toBe('Reached maximum number of turns (1)');
    expect(summary.usageLimit).toBeNull();
  });
});

describe('API errors', () => {
  test('a 500 after retries: a failure naming the status, not a usage limit', () => {
    const lines = recorded('claude-rate-limited-api-key').map((line) =>
      line
        .replaceAll('"api_error_status":429', '"api_error_status":500')
        .replaceAll('"api_error_type":"rate_limit_error"', '"api_error_type":"api_error"')
        .replaceAll('"error":"rate_limit"', '"error":"server_error"')
        .replaceAll("Request rejected (429) · This request would exceed your account's rate limit. Please try again later.", 'Internal server error'),
    );
    const summary = parse(lines).summary();
    expect(summary.usageLimit).toBeNull();
    expect(summary.failure).toBe('API error 500: API Error: Internal server error');
  });
});

describe('usage limits', () => {
  test('a rejected rate_limit_event gives the reset time (structured, before any text)', () => {
    const summary = parse(recorded('claude-usage-limit')).summary();
    expect(summary.usageLimit).toEqual({
      resetAt: 1_796_191_850_000,
      message: "You've hit your 5-hour limit · resets Dec 2, 1:10am (America/New_York)",
    });
  });

  test('without the structured event, the reset time comes from the result text', () => {
    const lines = recorded('claude-usage-limit').filter((line) => !line.includes('"rate_limit_info"'));
    const summary = parse(lines).summary();
    expect(summary.usageLimit?.resetAt).toBe(Date.UTC(2026, 11, 2, 6, 10) + 60_000);
  });

  test('an API-key 429 (no reset known) is a usage limit without a reset time', () => {
    const summary = parse(recorded('claude-rate-limited-api-key')).summary();
    expect(summary.usageLimit).toMatchObject({ resetAt: null });
    expect(summary.usageLimit?.message).toContain('429');
  });

  test('a file mentioning a usage limit, read by a tool and quoted by the model, is not a limit', () => {
    const summary = parse(recorded('claude-tool-output-mentions-limit'), 'UTC').summary();
    expect(summary.finalMessage).toContain('usage limit · resets 9pm');
    expect(summary.usageLimit).toBeNull();
    expect(summary.failure).toBeNull();
  });

  test('a rejected event in a turn that then succeeded (Claude Code fell back) is not a limit', () => {
    const lines = recorded('claude-tools');
    const event = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1_796_191_850 } });
    const summary = parse([lines[0] ?? '', event, ...lines.slice(1)]).summary();
    expect(summary.usageLimit).toBeNull();
  });
});

describe('sessions', () => {
  test('after --resume: usage is this invocation only, total cost the whole session, invocation cost apart', () => {
    const summary = parse(recorded('claude-resume')).summary();
    expect(summary.sessionId).toBe('0b6f3c1e-5a8d-4c2b-9e47-3f1a2b4c5d6e');
    expect(summary.result?.tokens).toEqual({
      inputTokens: 2_700,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 900,
      outputTokens: 40,
    });
    expect(summary.result?.totalCostUsd).toBe(0.01678);
    expect(summary.result?.invocationCostUsd).toBeCloseTo(0.01178, 10);
  });
});

describe('robustness', () => {
  test('noise, cut lines and unknown events are skipped', () => {
    const parser = parse(['not json', '{"type":"assistant","message":{"id":"x","content":[{"type":"te', '{"type":"future_event"}', '']);
    // The noise and the cut line; the unknown event is an event.
    expect(parser.summary()).toMatchObject({ otherLines: 2, toolCalls: [], result: null, usageLimit: null, finalMessage: '' });
    expect(parser.liveTokens()).toBe(0);
  });
});
