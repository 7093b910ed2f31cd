// The parser against streams recorded from the real Codex 0.171.0 (`codex exec --json`) driven by a fake
// OpenAI Responses server (test-agents/helpers/fake-openai.ts): per model request n the fake reported
// input 1000·n (cached 100·n), output 10·n, reasoning n tokens.

import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { createCodexStreamParser, subtractUsage, unwrapShellCommand, type CodexStreamParser } from '../../src/agents/codex-stream.js';

const WORKSPACE = '/tmp/explore/ws'; // where the streams were recorded
const NOW = Date.UTC(2026, 10, 30, 4, 10);

function recorded(name: string): string[] {
  const text = readFileSync(new URL(`../fixtures/streams/${name}.jsonl`, import.meta.url), 'utf8');
  return text.split('\n').filter((line) => line !== '');
}

function parse(lines: readonly string[], timeZone?: string): CodexStreamParser {
  const parser = createCodexStreamParser({ cwd: WORKSPACE, now: () => NOW, timeZone });
  for (const line of lines) parser.push(line);
  return parser;
}

describe('a turn that used its tools', () => {
  const summary = parse(recorded('codex-tools')).summary();

  test('thread, usage, final message', () => {
    expect(summary.threadId).toBe('01a22aa6-310a-7142-925c-fe63dc924cfa');
    expect(summary.turnCompleted).toBe(true);
    expect(summary.turnFailed).toBeNull();
    // Three model requests: 1000 + 2000 + 3000 input, 100 + 200 + 300 cached, 10 + 20 + 30 output.
    expect(summary.usage).toEqual({ inputTokens: 6_000, cachedInputTokens: 600, outputTokens: 60, reasoningOutputTokens: 6 });
    expect(summary.finalMessage).toBe('All done.');
    expect(summary.usageLimit).toBeNull();
  });

  test('tool calls: the file apply_patch added, the command without its bash -lc wrapper', () => {
    expect(summary.toolCalls).toEqual([
      { name: 'apply_patch', filePath: 'hello.txt' },
      { name: 'exec_command', command: 'cat hello.txt && echo done > done.txt' },
    ]);
  });

  test('item tokens grow while the turn runs', () => {
    const parser = createCodexStreamParser({ now: () => NOW });
    const seen: number[] = [];
    for (const line of recorded('codex-tools')) {
      parser.push(line);
      seen.push(parser.itemTokens());
    }
    for (let index = 1; index < seen.length; index += 1) expect(seen[index]).toBeGreaterThanOrEqual(seen[index - 1] ?? 0);
    expect(seen.at(-1)).toBeGreaterThan(0);
  });
});

describe('resumed threads', () => {
  test('usage is cumulative over the thread: the second turn minus the first is the second turn', () => {
    const first = parse(recorded('codex-resume-1')).summary();
    const second = parse(recorded('codex-resume-2')).summary();
    expect(second.threadId).toBe(first.threadId);
    expect(second.usage).toEqual({ inputTokens: 10_000, cachedInputTokens: 1_000, outputTokens: 100, reasoningOutputTokens: 10 });
    if (second.usage === null) throw new Error('the second turn reported no usage');
    expect(subtractUsage(second.usage, first.usage)).toEqual({
      inputTokens: 4_000,
      cachedInputTokens: 400,
      outputTokens: 40,
      reasoningOutputTokens: 4,
    });
  });

  test('a total below the previous one is another thread: taken whole', () => {
    const small = { inputTokens: 10, cachedInputTokens: 0, outputTokens: 1, reasoningOutputTokens: 0 };
    const big = { inputTokens: 100, cachedInputTokens: 0, outputTokens: 10, reasoningOutputTokens: 0 };
    expect(subtractUsage(small, big)).toBe(small);
    expect(subtractUsage(big, null)).toBe(big);
  });
});

describe('usage limits', () => {
  test('the usage-limit error, with the reset in the CLI zone', () => {
    const summary = parse(recorded('codex-usage-limit'), 'America/New_York').summary();
    expect(summary.turnFailed).toContain('usage limit');
    expect(summary.usageLimit?.resetAt).toBe(Date.UTC(2026, 11, 2, 6, 11) + 60_000);
    expect(summary.usageLimit?.message).toContain('try again at Dec 2nd, 2026 1:11 AM');
  });

  test('a 429 after retries is a limit without a reset time', () => {
    const summary = parse(recorded('codex-rate-limited')).summary();
    expect(summary.usageLimit).toEqual({ resetAt: null, message: 'exceeded retry limit, last status: 429 Too Many Requests' });
  });

  test('a structured reset in turn.failed wins over the text', () => {
    const summary = parse([
      '{"type":"thread.started","thread_id":"t"}',
      '{"type":"turn.failed","error":{"message":"You\'ve hit your usage limit. Try again at 5:08 AM.","resets_at":1796191850}}',
    ]).summary();
    expect(summary.usageLimit?.resetAt).toBe(1_796_191_850_000);
  });

  test('command output and agent messages mentioning a limit are not a limit', () => {
    const summary = parse(recorded('codex-tool-output-mentions-limit')).summary();
    expect(summary.toolCalls).toEqual([{ name: 'exec_command', command: 'cat NOTES.md' }]);
    expect(summary.finalMessage).toContain('usage limit');
    expect(summary.usageLimit).toBeNull();
  });

  test('a failed turn whose command output mentions a limit is still not a limit', () => {
    const lines = recorded('codex-tool-output-mentions-limit').filter((line) => !line.includes('"turn.completed"'));
    lines.push('{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 500 Internal Server Error"}}');
    expect(parse(lines).summary().usageLimit).toBeNull();
  });

  test('a failure that is not a limit', () => {
    const summary = parse(['{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 500 Internal Server Error"}}']).summary();
    expect(summary.usageLimit).toBeNull();
    expect(summary.turnFailed).toBe('exceeded retry limit, last status: 500 Internal Server Error');
  });
});

describe('unwrapShellCommand', () => {
  test.each([
    ["/bin/bash -lc 'cat hello.txt && echo done > done.txt'", 'cat hello.txt && echo done > done.txt'],
    ["bash -lc 'echo '\\''quoted'\\'''", "echo 'quoted'"],
    ['/bin/zsh -c "echo \\"hi\\" \\$HOME"', 'echo "hi" $HOME'],
    ['sh -c ls', 'ls'],
    ['npm test', 'npm test'],
  ])('%s', (wrapped, command) => {
    expect(unwrapShellCommand(wrapped)).toBe(command);
  });
});

describe('other items', () => {
  test('mcp and web search calls by name, errors kept, noise skipped', () => {
    const summary = parse([
      'not json',
      '{"type":"item.started","item":{"id":"a","type":"mcp_tool_call","server":"docs","tool":"search","status":"in_progress"}}',
      '{"type":"item.completed","item":{"id":"a","type":"mcp_tool_call","server":"docs","tool":"search","status":"completed"}}',
      '{"type":"item.completed","item":{"id":"b","type":"web_search","query":"zod 4"}}',
      '{"type":"item.completed","item":{"id":"c","type":"error","message":"a non-fatal problem"}}',
      '{"type":"future.event","x":1}',
    ]).summary();
    expect(summary.toolCalls).toEqual([{ name: 'docs.search' }, { name: 'web_search' }]);
    expect(summary.errors).toEqual(['a non-fatal problem']);
    expect(summary.otherLines).toBe(1);
    expect(summary.turnCompleted).toBe(false);
  });
});
