// The builtin agent end to end at the adapter: a real `goald agent` process in a real temp repository,
// the real OpenAI and Anthropic SDKs streaming from the fake LLM server.

import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../helpers/fake-llm.js';
import { gitdir } from '../../helpers/gitdir.js';
import { fileCheck, runBuiltinTurn, toolResultsOf } from './support.js';

let llm: FakeLlm;

beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.reset();
});

async function buggyRepo() {
  return gitdir({ files: { 'src/add.js': 'export function add(a, b) {\n  return a - b;\n}\n' }, initialCommit: true });
}

describe('the builtin agent', () => {
  it('fixes a bug in a few iterations, verifies with the checks, and reports usage exactly as the server did', async () => {
    const repo = await buggyRepo();
    llm.openai
      .replyToolCalls([{ name: 'read_file', arguments: { path: 'src/add.js' } }], { usage: { inputTokens: 1000, outputTokens: 20, cachedInputTokens: 400 } })
      .replyToolCalls([{ name: 'edit_file', arguments: { path: 'src/add.js', old_string: 'return a - b;', new_string: 'return a + b;' } }], {
        usage: { inputTokens: 1200, outputTokens: 30 },
      })
      .replyText('Fixed add: it subtracted.', { inputTokens: 1300, outputTokens: 10 });
    const { result, transcript } = await runBuiltinTurn(repo, llm, { checks: [fileCheck('src/add.js', 'a + b')] });
    expect(result.outcome, transcript).toBe('completed');
    expect(await readFile(repo.path('src/add.js'), 'utf8')).toContain('return a + b;');
    expect(result.usage).toEqual({
      inputTokens: 600 + 1200 + 1300,
      cachedInputTokens: 400,
      outputTokens: 60,
      totalTokens: 3100 + 60,
      costUsd: null,
      estimated: false,
    });
    expect(result.toolCalls).toEqual([{ name: 'read_file' }, { name: 'edit_file', filePath: 'src/add.js' }]);
    expect(result.finalMessage).toBe('Fixed add: it subtracted.');
    // The second request carried the file's content as the read_file result, streaming and temperature 0.
    const second = llm.openai.requests[1]?.body as Record<string, unknown>;
    expect(toolResultsOf(second)[0]).toContain('return a - b;');
    expect(second).toMatchObject({ stream: true, temperature: 0, model: 'fake-coder' });
  });

  it('ends the loop on a text-only reply without touching anything', async () => {
    const repo = await buggyRepo();
    llm.openai.replyText('Nothing to do.');
    const { result } = await runBuiltinTurn(repo, llm);
    expect(result.outcome).toBe('completed');
    expect(llm.openai.requests).toHaveLength(1);
    expect(result.toolCalls).toEqual([]);
  });

  it('stops at agent.maxIterations against a model that never stops calling tools', async () => {
    const repo = await buggyRepo();
    llm.openai.setDefaultTurn({ toolCalls: [{ name: 'list_files', arguments: {} }], usage: { inputTokens: 10, outputTokens: 1 } });
    const { result } = await runBuiltinTurn(repo, llm, { spec: { maxIterations: 4 } });
    expect(result.outcome).toBe('completed');
    expect(result.finalMessage).toMatch(/^max iterations: stopped after 4 model calls/);
    expect(llm.openai.requests).toHaveLength(4);
    expect(result.usage.totalTokens).toBe(44);
  });

  it('re-enters the loop when the checks fail after the model says it is done, then passes', async () => {
    const repo = await buggyRepo();
    llm.openai
      .replyText('I think it is fine.')
      .replyToolCalls([{ name: 'write_file', arguments: { path: 'src/add.js', content: 'export function add(a, b) {\n  return a + b;\n}\n' } }])
      .replyText('Now it really is fixed.');
    const { result } = await runBuiltinTurn(repo, llm, { checks: [fileCheck('src/add.js', 'a + b')] });
    expect(result.outcome).toBe('completed');
    expect(result.finalMessage).toBe('Now it really is fixed.');
    const second = JSON.stringify(llm.openai.requests[1]?.body);
    expect(second).toContain("goald ran the goal's checks after your last reply");
    expect(second).toContain('FAIL src/add.js fixed');
  });

  it('reports the checks still failing once agent.verificationRetries are used up', async () => {
    const repo = await buggyRepo();
    llm.openai.setDefaultTurn({ text: 'Done, I promise.' });
    const { result } = await runBuiltinTurn(repo, llm, { checks: [fileCheck('src/add.js', 'a + b')], spec: { verificationRetries: 2 } });
    expect(result.outcome).toBe('completed');
    expect(result.finalMessage).toMatch(/still fail after 2 verification retries: src\/add\.js fixed/);
    expect(llm.openai.requests).toHaveLength(3);
  });

  it('retries 5xx answers honouring retry-after, and fails the turn once the retries are exhausted', async () => {
    const repo = await buggyRepo();
    for (let attempt = 0; attempt < 6; attempt += 1) llm.openai.fail(503, undefined, { 'retry-after-ms': '5' });
    const { result } = await runBuiltinTurn(repo, llm);
    expect(llm.openai.requests).toHaveLength(6);
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatch(/model API at 127\.0\.0\.1:\d+ answered HTTP 503.*after 6 attempts/);
  });

  it('pauses on a usage-limit answer instead of failing', async () => {
    const repo = await buggyRepo();
    llm.openai.fail(429, { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } }, { 'retry-after': '120' });
    const { result } = await runBuiltinTurn(repo, llm);
    expect(result.outcome).toBe('usage-limited');
    expect(llm.openai.requests).toHaveLength(1);
    expect(result.usageLimit?.resetAt).toBeGreaterThan(Date.now() + 60_000);
  });
});
