// The builtin agent end to end at the adapter: a real `goald agent` process in a real temp repository,
// the real OpenAI and Anthropic SDKs streaming from the fake LLM server.

import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../helpers/fake-llm.js';
import { gitdir } from '../../helpers/gitdir.js';
import { waitUntilGone } from '../../helpers/processes.js';
import { makeTempDir } from '../support.js';
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

  it('counts tokens from characters, marked estimated, when the server reports no usage', async () => {
    const repo = await buggyRepo();
    llm.openai.setDefaultTurn({ text: 'Nothing to do here at all.', omitUsage: true });
    const { result } = await runBuiltinTurn(repo, llm);
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.inputTokens).toBeGreaterThan(500);
    expect(result.usage.outputTokens).toBe(Math.ceil('Nothing to do here at all.'.length / 4));
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

describe('the builtin agent on Anthropic Messages', () => {
  it('streams tool use, sends tool results as tool_result blocks, and sums usage with cache reads apart', async () => {
    const repo = await buggyRepo();
    llm.anthropic
      .replyToolCalls([{ id: 'toolu_read', name: 'read_file', arguments: { path: 'src/add.js' } }], {
        text: 'Let me look.',
        usage: { inputTokens: 500, outputTokens: 40, cachedInputTokens: 2000, cacheCreationInputTokens: 100 },
      })
      .replyToolCalls([{ name: 'edit_file', arguments: { path: 'src/add.js', old_string: 'a - b', new_string: 'a + b' } }], { usage: { inputTokens: 700, outputTokens: 30 } })
      .replyText('Done.', { inputTokens: 800, outputTokens: 5 });
    const { result, transcript } = await runBuiltinTurn(repo, llm, { provider: 'anthropic', checks: [fileCheck('src/add.js', 'a + b')] });
    expect(result.outcome, transcript).toBe('completed');
    expect(result.usage).toMatchObject({ inputTokens: 600 + 700 + 800, cachedInputTokens: 2000, outputTokens: 75, totalTokens: 2175, estimated: false });
    const second = llm.anthropic.requests[1]?.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }>; temperature: number; stream: boolean };
    expect(second).toMatchObject({ temperature: 0, stream: true });
    expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.messages[1]?.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_read', name: 'read_file', input: { path: 'src/add.js' } },
    ]);
    expect(second.messages[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_read', content: expect.stringContaining('return a - b;') });
  });

  it('retries an overloaded (529) answer honouring retry-after, then goes on', async () => {
    const repo = await buggyRepo();
    llm.anthropic.fail(529, undefined, { 'retry-after-ms': '5' }).replyText('All good.');
    const { result } = await runBuiltinTurn(repo, llm, { provider: 'anthropic' });
    expect(result.outcome).toBe('completed');
    expect(llm.anthropic.requests).toHaveLength(2);
  });
});

describe('what the model sees', () => {
  it('gets the project layer: AGENTS.md (not a symlink out of the workspace), the stack, the files without ignored ones', async () => {
    const repo = await gitdir({
      files: { 'AGENTS.md': 'Use tabs. Run `npm test` before finishing.\n', 'package.json': '{"scripts":{"test":"node --test"}}\n', '.gitignore': 'build/\n', 'src/x.js': '' },
      initialCommit: true,
    });
    await repo.write('build/out.js', 'generated');
    const outside = await makeTempDir();
    await writeFile(path.join(outside, 'id_rsa'), 'PRIVATE KEY MATERIAL');
    await symlink(path.join(outside, 'id_rsa'), repo.path('CLAUDE.md'));
    llm.openai.replyText('ok');
    await runBuiltinTurn(repo, llm, { prompt: '# Goal\nship it\n\n# Recitation\nship it' });
    const body = llm.openai.requests[0]?.body as { messages: Array<{ content: string }> };
    const system = body.messages[0]?.content ?? '';
    expect(system).toContain('## AGENTS.md (the project\'s instructions)\nUse tabs.');
    expect(system).toContain('Node.js / JavaScript or TypeScript (package.json)');
    expect(system).toContain('package.json scripts: test: node --test');
    expect(system).toMatch(/## Files \(5, \.gitignore honoured\)/);
    expect(system).not.toContain('build/out.js');
    expect(JSON.stringify(body)).not.toContain('PRIVATE KEY MATERIAL');
    expect(body.messages[1]?.content).toBe('# Goal\nship it\n\n# Recitation\nship it');
  });

  it('elides old tool results past agent.maxContextTokens, never the task', async () => {
    const repo = await gitdir({ files: { 'big.txt': `${'lorem ipsum dolor sit amet '.repeat(600)}\n` }, initialCommit: true });
    for (let call = 0; call < 4; call += 1) llm.openai.replyToolCalls([{ name: 'read_file', arguments: { path: 'big.txt' } }]);
    llm.openai.replyText('read enough');
    const task = `# Goal\n${'keep this task whole '.repeat(50)}`;
    await runBuiltinTurn(repo, llm, { spec: { maxContextTokens: 9_000 }, prompt: task });
    const last = llm.openai.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    const results = toolResultsOf(last);
    expect(results).toHaveLength(4);
    expect(results[0]).toMatch(/^\[elided: this read_file result \(\d+ characters\) was removed to keep the conversation within agent\.maxContextTokens/);
    expect(results.at(-1)).toContain('lorem ipsum');
    expect(last.messages[1]?.content).toBe(task);
  });

  it("elides earlier when the server counts more tokens than the estimate (its usage calibrates the budget)", async () => {
    const repo = await gitdir({ files: { 'big.txt': `${'lorem ipsum dolor sit amet '.repeat(600)}\n` }, initialCommit: true });
    llm.openai
      .replyToolCalls([{ name: 'read_file', arguments: { path: 'big.txt' } }], { usage: { inputTokens: 60_000, outputTokens: 5 } })
      .replyToolCalls([{ name: 'read_file', arguments: { path: 'big.txt' } }], { usage: { inputTokens: 60_000, outputTokens: 5 } })
      .replyText('enough');
    await runBuiltinTurn(repo, llm, { spec: { maxContextTokens: 12_000 } });
    const third = toolResultsOf(llm.openai.requests[2]?.body);
    expect(third[0]).toMatch(/^\[elided: this read_file result/);
    expect(third[1]).toContain('lorem ipsum');
  });

  it('asks the model to go on when its reply was cut at the output limit, instead of taking it as the answer', async () => {
    const repo = await buggyRepo();
    llm.openai.respond(() => ({ text: 'Here is my plan: first I will', truncated: true })).replyText('…read the file. Done.');
    const { result } = await runBuiltinTurn(repo, llm);
    expect(llm.openai.requests).toHaveLength(2);
    expect(JSON.stringify(llm.openai.requests[1]?.body)).toContain('Your reply was cut off at the output limit');
    expect(result.finalMessage).toBe('…read the file. Done.');
  });

  it('injects the reflection block every recitation.everyToolCalls tool calls', async () => {
    const repo = await buggyRepo();
    for (let call = 0; call < 5; call += 1) llm.openai.replyToolCalls([{ name: 'list_files', arguments: {} }]);
    llm.openai.replyText('done');
    await runBuiltinTurn(repo, llm, { reciteEvery: 2, condition: 'add returns the sum of its arguments' });
    const last = llm.openai.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    const reflections = last.messages.filter((message) => message.role === 'user' && message.content.startsWith('[System meta · not a user message]'));
    expect(reflections).toHaveLength(2);
    expect(reflections[0]?.content).toContain('=== ORIGINAL TASK ===\nadd returns the sum of its arguments\n=== END OF TASK ===');
    expect(reflections[0]?.content).toContain('2 tool calls since the last check.');
    // Placed right after the second and the fourth tool result.
    const roles = last.messages.map((message) => (message.role === 'user' && message.content.startsWith('[System meta') ? 'reflection' : message.role));
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'reflection', 'assistant', 'tool', 'assistant', 'tool', 'reflection', 'assistant', 'tool']);
  });

  it('asks for a pause (drift-pause) when the same file is rewritten over and over', async () => {
    const repo = await buggyRepo();
    llm.openai.setDefaultTurn({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'again' } }] });
    const { result, stateDir } = await runBuiltinTurn(repo, llm, { reciteEvery: 3, spec: { maxIterations: 12 }, condition: 'add returns the sum' });
    expect(result.toolCalls).toHaveLength(12);
    expect(result.toolCalls?.[0]).toEqual({ name: 'write_file', filePath: 'notes.txt' });
    const pause = JSON.parse(await readFile(path.join(stateDir, 'drift-pause'), 'utf8')) as { shouldPause: boolean; repeated: { value: string } };
    expect(pause).toMatchObject({ shouldPause: true, repeated: { value: 'notes.txt' } });
  });

  it('ends the turn as failed after three malformed replies in a row', async () => {
    const repo = await buggyRepo();
    llm.openai.setDefaultTurn({ toolCalls: [{ name: 'read_file', arguments: '{"path": ' }] });
    const { result } = await runBuiltinTurn(repo, llm);
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatch(/3 malformed replies in a row/);
    expect(llm.openai.requests).toHaveLength(3);
  });
});

describe('a hostile model\'s commands', () => {
  it('do not outlive the turn: a command that ignores SIGTERM is killed when the turn times out', async () => {
    const repo = await buggyRepo();
    const pidFile = `${repo.dir}-stubborn.pid`;
    llm.openai.replyToolCalls([
      { name: 'run_command', arguments: { command: `trap '' TERM; echo $$ > ${pidFile}; while :; do sleep 1; done`, timeoutSeconds: 600 } },
    ]);
    const { result } = await runBuiltinTurn(repo, llm, { timeoutMs: 1_500 });
    expect(result.outcome).toBe('timed-out');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(pid).toBeGreaterThan(0);
    await waitUntilGone(pid);
  });
});
