// goald itself driving the real, pinned Claude Code and Codex offline: the built binary (`node
// dist/src/cli/bin.js start …`, in the foreground or through its daemon) runs goals in real temp git
// repositories, the CLIs run their real tools against the fake model servers, and the tests read what goald
// recorded (JSON events, `goald status/show --json`, turns.jsonl). The adapter tests (claude-code.test.ts,
// codex.test.ts) cover the adapters alone; these cover the wiring: registry, config, supervisor, hook.
// Run with `npm run test:agents` (it builds first) after scripts/install-agent-clis.sh.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import type { GoalRecord } from '../state/types.js';
import type { TurnRecord } from '../src/supervisor/types.js';
import { readGoal, readTurns, waitForGoal } from '../test/helpers/daemon.js';
import { gitdir, type Gitdir } from '../test/helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldRun, type GoaldSandbox } from '../test/helpers/run-goald.js';
import { CLAUDE_BIN, CODEX_BIN, GOALD_BIN, claudeEnv, codexEnv, gatewayToken, listCodexModels, missingCli } from './helpers/agent-clis.js';
import { assistantTurns, messagesText, startFakeAnthropic, type AnthropicScript, type FakeAnthropic, type RecordedRequest } from './helpers/fake-anthropic.js';
import { startFakeOpenAi, type FakeOpenAi, type OpenAiScript } from './helpers/fake-openai.js';
import { spawnGoald, type GoaldEvent } from './helpers/live-goald.js';

const skipGoald = existsSync(GOALD_BIN) ? null : `skipped: ${GOALD_BIN} is missing — run npm run build (npm run test:agents does)`;
const skipClaude = missingCli(CLAUDE_BIN) ?? skipGoald;
const skipCodex = missingCli(CODEX_BIN) ?? skipGoald;
const CLAUDE_MODEL = 'claude-sonnet-4-5';
const REFLECTION_MARK = '[System meta · not a user message]';

// ---- helpers ------------------------------------------------------------------------------------------

async function startClaudeFake(script: AnthropicScript): Promise<FakeAnthropic> {
  const fake = await startFakeAnthropic(script);
  onTestFinished(() => fake.close());
  return fake;
}

async function startCodexFake(script: OpenAiScript): Promise<FakeOpenAi> {
  const fake = await startFakeOpenAi(script);
  onTestFinished(() => fake.close());
  return fake;
}

/** A git repository with one commit, holding `goal.config.json` when a config is given. */
function makeRepo(config?: Record<string, unknown>): Promise<Gitdir> {
  const files: Record<string, string> = { 'README.md': '# scratch\n' };
  if (config !== undefined) files['goal.config.json'] = `${JSON.stringify(config, null, 2)}\n`;
  return gitdir({ files, initialCommit: true });
}

/** `goald start` flags for a goal decided by one check, with no cool-down; the agent comes from `agent`. */
function startArgs(condition: string, check: string, agent: string[]): string[] {
  return ['start', condition, ...agent, '--evaluator', 'none', '--check', check, '--cooldown', '0', '--turn-timeout', '60s', '--json'];
}

const claudeAgent = ['--adapter', 'claude-code', '--agent', CLAUDE_BIN];
const codexAgent = ['--adapter', 'codex', '--agent', CODEX_BIN];

/** The JSON events of a finished run; fails with its output when it printed none. */
function eventsOf(run: GoaldRun): GoaldEvent[] {
  const events = parseJsonLines(run.stdout);
  expect(events.length, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBeGreaterThan(0);
  return events;
}

function finishedEvent(events: GoaldEvent[]): GoaldEvent | undefined {
  return events.find((event) => event.type === 'goal.finished');
}

function goalIdOf(events: GoaldEvent[]): string {
  const started = events.find((event) => event.type === 'goal.started' || event.type === 'goal.submitted');
  expect(started, JSON.stringify(events)).toBeDefined();
  return String(started?.id);
}

/** The stream-json events of a Claude Code turn, from the transcript goald kept. */
async function transcriptEvents(sandbox: GoaldSandbox, goalId: string, turn: number): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path.join(sandbox.home, 'goals', goalId, `turn-${turn}.log`), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** `goald status --json` (from the daemon, or the stored state when none runs): the goal with this id. */
async function statusOf(sandbox: GoaldSandbox, env: NodeJS.ProcessEnv, goalId: string): Promise<GoalRecord> {
  const run = await sandbox.run(['status', goalId, '--json'], { env });
  expect(run.code, run.stderr).toBe(0);
  const { goals } = JSON.parse(run.stdout) as { goals: GoalRecord[] };
  const goal = goals.find((candidate) => candidate.id === goalId);
  if (goal === undefined) throw new Error(`goald status --json does not list goal ${goalId}: ${run.stdout}`);
  return goal;
}

// The goal.paused event is printed as the pause is being stored: `goald status` reads the stored state.
function waitForStoredPause(sandbox: GoaldSandbox, goalId: string): Promise<GoalRecord> {
  return waitForGoal(sandbox, goalId, 'to be stored as paused', (goal) => goal.status === 'paused');
}

/** The usage-limit reset the goal waits for (the goal machine's context, as stored with the goal). */
function resumeAtOf(goal: GoalRecord): unknown {
  const machine = goal.machine as { context?: { resumeAt?: unknown } } | null;
  return machine?.context?.resumeAt;
}

/** The reflections the hook added to a request's conversation, each from its marker on, in order. */
function reflectionsIn(request: RecordedRequest): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      const at = value.indexOf(REFLECTION_MARK);
      if (at >= 0) found.push(value.slice(at));
    } else if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (typeof value === 'object' && value !== null) {
      Object.values(value).forEach(visit);
    }
  };
  visit(request.body.messages);
  return found;
}

function agentOf(turn: TurnRecord | undefined): NonNullable<TurnRecord['agent']> {
  expect(turn?.agent, JSON.stringify(turn)).toBeTruthy();
  return turn?.agent as NonNullable<TurnRecord['agent']>;
}

// ---- Claude Code --------------------------------------------------------------------------------------

describe.skipIf(skipClaude !== null)(`goald start --adapter claude-code, real Claude Code ${skipClaude ?? ''}`, () => {
  test('a goal really achieved; the turn record carries tokens as the server reported them and cost as the CLI reported it', async () => {
    const sandbox = await goaldSandbox();
    const repo = await makeRepo({ agent: { model: CLAUDE_MODEL } });
    const file = repo.path('hello.txt');
    const fake = await startClaudeFake((_request, index) =>
      index === 0
        ? {
            kind: 'message',
            blocks: [{ type: 'text', text: 'I will create the file.' }, { type: 'tool_use', name: 'Write', input: { file_path: file, content: 'hello\n' } }],
            usage: { input: 1_200, output: 40, cacheCreation: 300 },
          }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Done: hello.txt says hello.' }], usage: { input: 150, output: 12, cacheRead: 1_400 } },
    );
    const env = { ...sandbox.env, ...(await claudeEnv(fake.url)) };
    const run = await sandbox.run([...startArgs('hello.txt says hello', 'grep -qx hello hello.txt', claudeAgent), '--foreground'], { cwd: repo.dir, env });

    const events = eventsOf(run);
    expect(run.code, run.stderr).toBe(0);
    expect(finishedEvent(events)).toMatchObject({ status: 'achieved', reason: null, breaker: null, turns: 1 });
    expect(await readFile(file, 'utf8')).toBe('hello\n');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]?.body.model).toBe(CLAUDE_MODEL);
    // The turn's prompt (the condition, the recitation) is what Claude Code sent the model.
    expect(messagesText(fake.requests[0]!)).toContain('=== GOAL RECITATION (turn 1 of');

    const id = goalIdOf(events);
    const show = await sandbox.run(['show', id, '--json'], { env });
    expect(show.code, show.stderr).toBe(0);
    const { goal, turns } = JSON.parse(show.stdout) as { goal: GoalRecord; turns: TurnRecord[] };
    const turn = turns.find((candidate) => candidate.turn === 1);
    const agent = agentOf(turn);
    const result = (await transcriptEvents(sandbox, id, 1)).find((event) => event.type === 'result');
    const cost = result?.total_cost_usd;
    expect(typeof cost).toBe('number');
    expect(cost).toBeGreaterThan(0);
    const { input, output, cacheRead, cacheCreation } = fake.reported;
    expect(agent.outcome).toBe('completed');
    // Inside goald's bubblewrap sandbox (vitest.agents.config.ts): Claude Code wrote the workspace and its ~/.claude.
    expect(turn?.sandbox).toBe('bwrap');
    expect(agent.usage).toEqual({
      inputTokens: input + cacheCreation,
      outputTokens: output,
      totalTokens: input + cacheCreation + output,
      cachedInputTokens: cacheRead,
      costUsd: cost,
      estimated: false,
    });
    expect(agent.costComputed).toBeUndefined();
    expect(turn?.tokens).toBe(input + cacheCreation + output);
    expect(turn?.files.map((change) => change.path)).toEqual(['hello.txt']);
    expect(goal.status).toBe('achieved');
    expect(goal.summary).toMatchObject({ turns: 1, tokens: input + cacheCreation + output, costUsd: cost });
    expect(finishedEvent(events)?.tokens).toBe(input + cacheCreation + output);
  });

  test('the in-turn reflection reaches the model every recitation.everyToolCalls tool calls', async () => {
    const sandbox = await goaldSandbox();
    const condition = 'steps.txt lists four steps';
    const repo = await makeRepo({ recitation: { everyToolCalls: 2 } });
    const step = (n: number) => ({ type: 'tool_use' as const, name: 'Bash', input: { command: `echo step-${n} >> steps.txt`, description: 'Add a step' } });
    const fake = await startClaudeFake((_request, index) =>
      index < 4
        ? { kind: 'message', blocks: [step(index + 1)], usage: { input: 300, output: 10 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Four steps listed.' }], usage: { input: 300, output: 5 } },
    );
    const env = { ...sandbox.env, ...(await claudeEnv(fake.url)) };
    const run = await sandbox.run([...startArgs(condition, 'test "$(wc -l < steps.txt)" -eq 4', claudeAgent), '--foreground'], { cwd: repo.dir, env });

    const events = eventsOf(run);
    expect(run.code, run.stderr).toBe(0);
    expect(finishedEvent(events)).toMatchObject({ status: 'achieved', turns: 1 });
    expect(fake.requests).toHaveLength(5);
    // Request k carries the results of tool calls 1..k: a reflection after calls 2 and 4, none in between.
    expect(fake.requests.map((request) => reflectionsIn(request).length)).toEqual([0, 0, 1, 1, 2]);
    const [first, second] = reflectionsIn(fake.requests[4]!);
    for (const reflection of [first, second]) {
      expect(reflection).toContain('2 tool calls since the last check.');
      expect(reflection).toContain(`=== ORIGINAL TASK ===\n${condition}\n=== END OF TASK ===`);
      expect(reflection).toContain('1. Does your current plan still match the task above?');
      expect(reflection).not.toContain('ATTENTION');
    }
    const stateDir = path.join(sandbox.home, 'goals', goalIdOf(events), 'turn-1.state');
    expect((await readFile(path.join(stateDir, 'tool-calls.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(4);
    expect((await readFile(path.join(stateDir, 'drift.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(2);
    expect(existsSync(path.join(stateDir, 'hook-errors.log'))).toBe(false);
  });

  test('drift: the same unrelated file written again and again — the reflection leads with a warning, and the goal pauses with reason drift', async () => {
    const sandbox = await goaldSandbox();
    const condition = 'calculator.js exports an add function';
    const repo = await makeRepo({ recitation: { everyToolCalls: 2 } });
    const scratch = repo.path('notes/scratch.txt');
    const writes = 8;
    const fake = await startClaudeFake((_request, index) =>
      index < writes
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: scratch, content: `draft ${index + 1}\n` } }], usage: { input: 400, output: 15 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Still drafting.' }], usage: { input: 400, output: 5 } },
    );
    const env = { ...sandbox.env, ...(await claudeEnv(fake.url)) };
    // Through the daemon (auto-started with this env; the sandbox stops it when the test ends): a paused
    // goal waits there for a human, and `goald status` shows why.
    const submit = await sandbox.run(startArgs(condition, 'grep -q "function add" calculator.js', claudeAgent), { cwd: repo.dir, env });
    expect(submit.code, submit.stderr).toBe(0);
    const id = goalIdOf(eventsOf(submit));
    await waitForGoal(sandbox, id, 'to pause', (goal) => goal.status === 'paused' || goal.status === 'failed', 60_000);

    const goal = await statusOf(sandbox, env, id);
    expect(goal).toMatchObject({ status: 'paused', pauseReason: 'drift' });
    expect(await readFile(scratch, 'utf8')).toBe(`draft ${writes}\n`);
    expect(fake.requests).toHaveLength(writes + 1);
    // Checks after calls 2, 4, 6, 8: the first sees 2 writes (not yet circular); from call 4 on the
    // reflection leads with the attention warning naming the repeated file.
    const reflections = reflectionsIn(fake.requests[writes]!);
    expect(reflections).toHaveLength(4);
    expect(reflections[0]?.split('\n')[1]).not.toMatch(/^ATTENTION/);
    for (const [index, reflection] of reflections.slice(1).entries()) {
      expect(reflection.split('\n')[1]).toBe(
        `ATTENTION — drift 1.00: you wrote notes/scratch.txt ${2 * index + 4} times in the last 10 tool calls, and your recent actions share little with the task. ` +
          'Repeating it is not progress: stop, say what the repeats showed, and change approach.',
      );
    }
    // The drift is stored with the turn; no second turn was started.
    const turns = await readTurns(sandbox, id);
    expect(turns.map((turn) => turn.turn)).toEqual([0, 1]);
    expect(turns[1]?.drift).toMatchObject({ pause: true, circular: 1, repeated: { kind: 'file', value: 'notes/scratch.txt' } });
    const logs = await sandbox.run(['logs', id, '--json'], { env });
    expect(parseJsonLines(logs.stdout)).toContainEqual({ type: 'goal.paused', id, reason: 'drift' });
    expect(readGoal(sandbox, id).runningAgent).toBeNull();
  });

  test('a plan usage limit pauses the goal until the reset, then it resumes by itself and is achieved', async () => {
    const sandbox = await goaldSandbox();
    const repo = await makeRepo({ agent: { model: CLAUDE_MODEL } });
    const file = repo.path('hello.txt');
    // The unified rate-limit headers give the reset to the second, and Claude Code reports it so
    // (rate_limit_event): a reset a few seconds ahead keeps the pause observable and the test short.
    // 6 s: enough for the pause to be seen in `goald status` even on a busy machine.
    const PAUSE_SECONDS = 6;
    let reset = 0;
    const fake = await startClaudeFake((_request, index) => {
      if (index === 0) {
        reset = Math.floor(Date.now() / 1000) + PAUSE_SECONDS;
        return {
          kind: 'error',
          status: 429,
          headers: {
            'anthropic-ratelimit-unified-status': 'rejected',
            'anthropic-ratelimit-unified-reset': String(reset),
            'anthropic-ratelimit-unified-representative-claim': 'five_hour',
            'anthropic-ratelimit-unified-5h-reset': String(reset),
          },
          body: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited.' } },
        };
      }
      return index === 1
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: file, content: 'hello\n' } }], usage: { input: 900, output: 30 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'Done.' }], usage: { input: 950, output: 5 } };
    });
    const env = { ...sandbox.env, ...(await claudeEnv(fake.url, { authToken: gatewayToken() })) };
    const goald = spawnGoald([...startArgs('hello.txt says hello', 'grep -qx hello hello.txt', claudeAgent), '--foreground'], { cwd: repo.dir, env });

    const paused = await goald.waitForEvent('the usage-limit pause', (event) => event.type === 'goal.paused');
    expect(paused.reason).toBe('usage-limited');
    const id = goalIdOf(goald.events);
    await waitForStoredPause(sandbox, id);
    const goal = await statusOf(sandbox, env, id);
    expect(goal).toMatchObject({ status: 'paused', pauseReason: 'usage-limited' });
    expect(resumeAtOf(goal)).toBe(reset * 1000);
    const shown = await sandbox.run(['status', id], { env });
    expect(shown.stdout).toContain('paused (usage-limited)');
    expect(shown.stdout).toContain(`resumes by itself at ${new Date(reset * 1000).toISOString()}`);

    const run = await goald.done;
    expect(run.code, run.stderr).toBe(0);
    const types = goald.events.map((event) => event.type);
    expect(types.indexOf('goal.resumed')).toBeGreaterThan(types.indexOf('goal.paused'));
    expect(finishedEvent(goald.events)).toMatchObject({ status: 'achieved', turns: 2, breaker: null });
    expect(await readFile(file, 'utf8')).toBe('hello\n');

    const turns = await readTurns(sandbox, id);
    expect(turns.map((turn) => turn.turn)).toEqual([0, 1, 2]);
    const limited = agentOf(turns[1]);
    expect(limited.outcome).toBe('usage-limited');
    expect(limited.error).toMatch(/limit · resets /);
    expect(turns[1]?.evaluation).toEqual({ kind: 'skipped', reason: `usage-limited until ${new Date(reset * 1000).toISOString()}` });
    // Not a failure: no breaker counted it, and the next turn waited for the reset.
    expect(turns[1]?.breakers.consecutiveAgentFailures ?? 0).toBe(0);
    expect(Date.parse(turns[2]?.startedAt ?? '')).toBeGreaterThanOrEqual(reset * 1000);
    expect(agentOf(turns[2]).outcome).toBe('completed');
    expect(turns[2]?.achieved).toBe(true);
  });

  test('tool calls denied two turns in a row: failed with the permission-denied breaker', async () => {
    const sandbox = await goaldSandbox();
    // The agent entirely from goal.config.json: adapter, executable, and permissions as a user might leave them.
    const repo = await makeRepo({
      agent: { adapter: 'claude-code', command: CLAUDE_BIN, args: ['--permission-mode', 'default', '--allowedTools', 'Read'] },
    });
    const file = repo.path('hello.txt');
    // Each turn is a fresh session: it tries to Write, is denied, and says so.
    const fake = await startClaudeFake((request) =>
      assistantTurns(request) === 0
        ? { kind: 'message', blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: file, content: 'hello\n' } }], usage: { input: 500, output: 20 } }
        : { kind: 'message', blocks: [{ type: 'text', text: 'I was not allowed to write.' }], usage: { input: 600, output: 10 } },
    );
    const env = { ...sandbox.env, ...(await claudeEnv(fake.url)) };
    const run = await sandbox.run([...startArgs('hello.txt says hello', 'grep -qx hello hello.txt', []), '--foreground'], { cwd: repo.dir, env });

    const events = eventsOf(run);
    expect(run.code, run.stderr).toBe(1);
    expect(finishedEvent(events)).toMatchObject({ status: 'failed', reason: 'permission-denied', breaker: 'permission-denied', turns: 2 });
    expect(existsSync(file)).toBe(false);
    expect(fake.requests).toHaveLength(4);
    const turns = await readTurns(sandbox, goalIdOf(events));
    for (const turn of turns.slice(1)) {
      const agent = agentOf(turn);
      expect(agent.outcome).toBe('failed');
      expect(agent.error).toContain('1 tool call was denied permission (Write)');
      expect(agent.usage).toMatchObject({ inputTokens: 1_100, outputTokens: 30, estimated: false });
    }
    expect(turns.at(-1)?.trip?.breaker).toBe('permission-denied');
    expect(readGoal(sandbox, goalIdOf(events))).toMatchObject({ status: 'failed', reason: 'permission-denied' });
  });
});

// ---- Codex --------------------------------------------------------------------------------------------

describe.skipIf(skipCodex !== null)(`goald start --adapter codex, real Codex ${skipCodex ?? ''}`, () => {
  // The model Codex's config.toml names: a slug the pinned Codex knows.
  let codexModel = '';
  // The model goald passes as --model and prices its tokens by. None of the pinned Codex's slugs is in goald's
  // default price table, and goal.config.json has no price setting yet, so the priced goal names gpt-4.1
  // (2 / 0.5 cached / 8 USD per million). Codex runs it on fallback metadata, which offers exec_command but
  // not apply_patch: the file is written through the shell.
  const PRICED_MODEL = 'gpt-4.1';
  const PRICE = { input: 2, cachedInput: 0.5, output: 8 };

  beforeAll(async () => {
    const models = await listCodexModels();
    codexModel = models.includes('gpt-5.5') ? 'gpt-5.5' : (models[0] ?? 'gpt-5.5');
  });

  test('a goal achieved through exec_command; tokens as reported, cost priced from the table and marked computed', async () => {
    const sandbox = await goaldSandbox();
    const repo = await makeRepo({ agent: { model: PRICED_MODEL } });
    const writeHello = { type: 'function_call' as const, name: 'exec_command', arguments: { cmd: "printf 'hello\\n' > hello.txt" } };
    const fake = await startCodexFake((_request, index) =>
      index === 0
        ? { kind: 'response', items: [writeHello], usage: { input: 2_000, cached: 500, output: 40, reasoning: 10 } }
        : { kind: 'response', items: [{ type: 'message', text: 'Done: hello.txt says hello.' }], usage: { input: 2_500, cached: 1_900, output: 12 } },
    );
    const env = { ...sandbox.env, ...(await codexEnv(fake.baseUrl, codexModel)) };
    const run = await sandbox.run([...startArgs('hello.txt says hello', 'grep -qx hello hello.txt', codexAgent), '--foreground'], { cwd: repo.dir, env });

    const events = eventsOf(run);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(finishedEvent(events)).toMatchObject({ status: 'achieved', turns: 1 });
    expect(await readFile(repo.path('hello.txt'), 'utf8')).toBe('hello\n');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]?.body.model).toBe(PRICED_MODEL);

    const id = goalIdOf(events);
    const turns = await readTurns(sandbox, id);
    const agent = agentOf(turns[1]);
    // Inside goald's bubblewrap sandbox (vitest.agents.config.ts), with Codex's own left off.
    expect(turns[1]?.sandbox).toBe('bwrap');
    const { input, cached, output } = fake.reported;
    const uncached = input - cached;
    const cost = (uncached * PRICE.input + cached * PRICE.cachedInput + output * PRICE.output) / 1e6;
    expect(agent.usage).toEqual({
      inputTokens: uncached,
      cachedInputTokens: cached,
      outputTokens: output,
      totalTokens: uncached + output,
      costUsd: expect.closeTo(cost, 12),
      estimated: false,
    });
    expect(agent.costComputed).toBe(true);
    expect(turns[1]?.tokens).toBe(uncached + output);
    expect(readGoal(sandbox, id).summary.costUsd).toBeCloseTo(cost, 12);
  });

  test('a usage limit pauses the goal with the reset Codex names', async () => {
    const sandbox = await goaldSandbox();
    const repo = await makeRepo();
    const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
    const fake = await startCodexFake(() => ({
      kind: 'error',
      status: 429,
      body: { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: reset, resets_in_seconds: 7_200 } },
    }));
    const env = { ...sandbox.env, ...(await codexEnv(fake.baseUrl, codexModel)) };
    const goald = spawnGoald([...startArgs('hello.txt says hello', 'grep -qx hello hello.txt', codexAgent), '--foreground'], { cwd: repo.dir, env });

    const paused = await goald.waitForEvent('the usage-limit pause', (event) => event.type === 'goal.paused');
    expect(paused.reason).toBe('usage-limited');
    const id = goalIdOf(goald.events);
    await waitForStoredPause(sandbox, id);
    const goal = await statusOf(sandbox, env, id);
    expect(goal).toMatchObject({ status: 'paused', pauseReason: 'usage-limited' });
    // Codex prints the reset to the minute (TZ=UTC here); goald resumes at that minute's end.
    const resumeAt = Math.floor(reset / 60) * 60_000 + 60_000;
    expect(resumeAtOf(goal)).toBe(resumeAt);
    const turns = await readTurns(sandbox, id);
    expect(agentOf(turns[1]).outcome).toBe('usage-limited');
    expect(turns[1]?.evaluation).toEqual({ kind: 'skipped', reason: `usage-limited until ${new Date(resumeAt).toISOString()}` });

    // Waiting two hours is not the test's business: stopping a paused foreground goal ends it cleanly.
    process.kill(goald.pid, 'SIGTERM');
    const run = await goald.done;
    expect(run.code).toBe(1);
    expect(finishedEvent(goald.events)).toMatchObject({ status: 'failed', reason: 'stopped', breaker: null });
    expect(fake.requests).toHaveLength(1);
  });
});
