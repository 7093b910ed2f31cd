// End to end: `goald start --adapter builtin --model openai:<model> --foreground` — the supervisor runs
// goald's own agent as a child process against the fake LLM server, in a real temp repository.

import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeTurn } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines } from '../helpers/run-goald.js';

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

const CHECK = "grep -q 'a + b' src/add.js";
const CONFIG = `${JSON.stringify({ checks: [{ name: 'add sums', run: CHECK }] }, null, 2)}\n`;

async function buggyRepo() {
  return gitdir({
    files: { 'src/add.js': 'export function add(a, b) {\n  return a - b;\n}\n', 'goal.config.json': CONFIG },
    initialCommit: true,
  });
}

// The tool results in a Chat Completions request body.
function toolResults(body: unknown): string[] {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
  return messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

// A loopback port nothing listens on (a server bound it, then closed).
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startBuiltin(repoDir: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const sandbox = await goaldSandbox();
  const result = await sandbox.run(
    ['start', 'add returns the sum', '--foreground', '--cooldown', '0', '-C', repoDir, '--adapter', 'builtin', '--model', 'openai:fake-coder', '--json', ...extra],
    { env: { OPENAI_API_KEY: 'sk-fake-openai-key', OPENAI_BASE_URL: llm.openaiBaseURL, ...env } },
  );
  const events = parseJsonLines(result.stdout);
  return { sandbox, result, events, finished: events.at(-1), turns: events.filter((event) => event.type === 'turn.finished') };
}

describe('goald start --adapter builtin', () => {
  it('achieves a goal: the agent reads, fixes the bug, the checks pass, tokens are what the server reported', async () => {
    const repo = await buggyRepo();
    llm.setModels(['fake-coder', 'other-model']);
    llm.openai
      .replyToolCalls([{ name: 'read_file', arguments: { path: 'src/add.js' } }], { usage: { inputTokens: 900, outputTokens: 15 } })
      .replyToolCalls([{ name: 'edit_file', arguments: { path: 'src/add.js', old_string: 'a - b', new_string: 'a + b' } }], { usage: { inputTokens: 1000, outputTokens: 25 } })
      .replyToolCalls([{ name: 'run_checks', arguments: {} }], { usage: { inputTokens: 1100, outputTokens: 5 } })
      .replyText('add now returns a + b; the check passes.', { inputTokens: 1200, outputTokens: 12 });
    const { result, finished, turns, sandbox } = await startBuiltin(repo.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(finished).toMatchObject({ type: 'goal.finished', status: 'achieved', turns: 1, tokens: 4200 + 57 });
    expect(turns[0]).toMatchObject({ outcome: 'completed', tokens: 4257, tokensEstimated: false, filesChanged: 1 });
    expect(await readFile(repo.path('src/add.js'), 'utf8')).toContain('return a + b;');
    // The three layers reached the model in its first request: base (tools, rules), project (stack, files), task.
    const first = llm.openai.requests[0]?.body as { messages: Array<{ role: string; content: string }>; tools: unknown[] };
    const system = first.messages[0]?.content ?? '';
    expect(system).toContain("You are goald's builtin coding agent");
    expect(system).toContain('- edit_file: Replace one occurrence');
    expect(system).toMatch(/old_string \(string\) — The text to replace/);
    expect(system).toContain('# Project');
    expect(system).toContain('src/add.js');
    expect(first.messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining('add returns the sum') });
    expect(first.tools).toHaveLength(7);
    // The turn's transcript holds the agent's own account.
    const goals = await readdir(path.join(sandbox.home, 'goals'));
    const transcript = await readFile(path.join(sandbox.home, 'goals', goals[0] ?? '', 'turn-1.log'), 'utf8');
    expect(transcript).toContain('> edit_file');
    expect(transcript).not.toContain('sk-fake-openai-key');
  });

  it.runIf(existsSync('/usr/bin/bwrap') || existsSync('/bin/bwrap'))("works inside the bubblewrap sandbox (GOALD_SANDBOX=required), where its commands cannot see goald's home", async () => {
    const repo = await buggyRepo();
    llm.openai
      .replyToolCalls([{ name: 'run_command', arguments: { command: 'ls -a "$GOALD_HOME" 2>&1; echo listed' } }])
      .replyToolCalls([{ name: 'edit_file', arguments: { path: 'src/add.js', old_string: 'a - b', new_string: 'a + b' } }])
      .replyText('Fixed.');
    const { result, finished, turns, sandbox } = await startBuiltin(repo.dir, [], { GOALD_SANDBOX: 'required' });
    expect(result.code, result.stderr).toBe(0);
    expect(finished).toMatchObject({ status: 'achieved', turns: 1 });
    expect(turns[0]).toMatchObject({ outcome: 'completed' });
    const listing = toolResults(llm.openai.requests[1]?.body)[0] ?? '';
    expect(listing).toContain('listed');
    expect(listing).not.toContain('state.json');
    expect(existsSync(path.join(sandbox.home, 'state.json'))).toBe(true);
  });

  it('holds off a hostile model: contract edits, reads outside the workspace and an endless loop are all contained', async () => {
    const repo = await buggyRepo();
    const attacks: FakeTurn[] = [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'goal.config.json', content: '{"checks":[]}' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'goal.config.json', old_string: CHECK, new_string: 'true' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: '/etc/passwd' } }, { name: 'read_file', arguments: { path: '../../../../etc/passwd' } }] },
      { toolCalls: [{ name: 'no_such_tool', arguments: {} }, { name: 'read_file', arguments: '{not json' }] },
    ];
    let call = 0;
    llm.openai.setDefaultTurn(() => attacks[call++] ?? { toolCalls: [{ name: 'list_files', arguments: {} }] });
    const { result, finished, turns } = await startBuiltin(repo.dir, ['--max-turns', '1']);
    expect(result.code).toBe(1);
    expect(finished).toMatchObject({ status: 'failed', breaker: 'max-turns', turns: 1 });
    expect(turns[0]).toMatchObject({ outcome: 'completed', filesChanged: 0, tamper: [] });
    expect(llm.openai.requests).toHaveLength(30);
    expect(await readFile(repo.path('goal.config.json'), 'utf8')).toBe(CONFIG);
    const sent = JSON.stringify(llm.openai.requests.map((request) => request.body));
    expect(sent).not.toContain('root:x:0:0');
    expect(sent).toContain("goal.config.json is the goal's contract");
    expect(sent).toContain('is outside the workspace');
    expect(sent).toContain('there is no tool named \\"no_such_tool\\"');
  });

  it('a hostile model that rewrites the contract through run_command is tamper, and the sealed checks still decide', async () => {
    const repo = await buggyRepo();
    llm.openai
      .replyToolCalls([{ name: 'run_command', arguments: { command: `printf '{"checks":[{"run":"true"}]}' > goal.config.json` } }])
      .replyText('The checks pass now.');
    const { result, finished, turns } = await startBuiltin(repo.dir, ['--max-turns', '1']);
    expect(result.code).toBe(1);
    expect(finished).toMatchObject({ status: 'failed', turns: 1 });
    const tamper = (turns[0]?.tamper ?? []) as Array<{ path: string; kind: string }>;
    expect(tamper).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'goal.config.json', kind: 'config-edit' })]));
  });

  it('kills a runaway loop live at the per-turn token limit', async () => {
    const repo = await buggyRepo();
    llm.openai.setDefaultTurn({ toolCalls: [{ name: 'list_files', arguments: {} }], usage: { inputTokens: 3000, outputTokens: 10 } });
    const { finished, turns } = await startBuiltin(repo.dir, ['--turn-token-limit', '5000', '--max-turns', '1']);
    expect(turns[0]).toMatchObject({ outcome: 'token-limit' });
    expect(finished).toMatchObject({ status: 'failed', breaker: 'turn-token-limit' });
    expect(llm.openai.requests.length).toBeLessThanOrEqual(3);
  });

  it('refuses bad input before turn 1 with one line and exit 2', async () => {
    const repo = await buggyRepo();
    const sandbox = await goaldSandbox();
    const base = ['start', 'x', '--foreground', '-C', repo.dir, '--adapter', 'builtin'];
    const unknown = await sandbox.run([...base, '--model', 'mistral:large'], { env: { OPENAI_API_KEY: 'k' } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/must start with openai: or anthropic:; got "mistral:large"/);
    const noKey = await sandbox.run([...base, '--model', 'anthropic:claude-sonnet-4-5']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/needs ANTHROPIC_API_KEY, which is not set/);
    const same = await sandbox.run([...base, '--model', 'openai:gpt-4.1-mini', '--evaluator', 'openai:gpt-4.1-mini'], { env: { OPENAI_API_KEY: 'k' } });
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/is the agent's own model/);
    expect(llm.requests).toHaveLength(0);
  });

  it('asks the model server before turn 1: one that does not answer, or does not know the model, exits 2', async () => {
    const repo = await buggyRepo();
    const sandbox = await goaldSandbox();
    const base = ['start', 'x', '--foreground', '-C', repo.dir, '--adapter', 'builtin'];
    const port = await closedPort();
    const down = await sandbox.run([...base, '--model', 'openai:qwen2.5-coder'], { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(new RegExp(`model server at 127\\.0\\.0\\.1:${port} does not answer: .*ECONNREFUSED.* — start the server, or set OPENAI_BASE_URL`));
    expect(down.stderr.trim().split('\n')).toHaveLength(1);

    llm.setModels(['qwen2.5-coder', 'llama3.1:8b']);
    const unknown = await sandbox.run([...base, '--model', 'openai:fake-coder'], { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: llm.openaiBaseURL } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/does not serve the model "fake-coder"; it serves qwen2\.5-coder, llama3\.1:8b — pass one of them/);
    const claude = await sandbox.run([...base, '--model', 'anthropic:claude-nope'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: llm.anthropicBaseURL } });
    expect(claude.code).toBe(2);
    expect(claude.stderr).toMatch(/does not know the model "claude-nope"/);
    // Only the models routes were asked: no tokens spent.
    expect(llm.openai.requests).toHaveLength(0);
    expect(llm.anthropic.requests).toHaveLength(0);
  });
});
