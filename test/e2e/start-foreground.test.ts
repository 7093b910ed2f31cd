// End to end: the built `goald start --foreground` against real git repos, real agent processes and the
// fake LLM server (the real SDK clients talk to it through their base URL).

import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { gatedAgent, stepsCheck, submitGoal, waitForPidFile } from '../helpers/daemon.js';
import { pidsWithMarker, waitUntilGone } from '../helpers/processes.js';
import { goaldSandbox, parseJsonLines } from '../helpers/run-goald.js';

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

const FAST = ['--foreground', '--cooldown', '0'];

async function repoWithCommit(files: Record<string, string> = { 'README.md': '# demo\n' }) {
  return gitdir({ files, initialCommit: true });
}

function finished(stdout: string): Record<string, unknown> {
  const events = parseJsonLines(stdout);
  const last = events.at(-1);
  expect(last?.type).toBe('goal.finished');
  return last as Record<string, unknown>;
}

async function goalDirOf(home: string): Promise<string> {
  const goals = await readdir(path.join(home, 'goals'));
  expect(goals).toHaveLength(1);
  return path.join(home, 'goals', goals[0] as string);
}

describe('goald start --foreground', () => {
  it('achieves a goal that is already met after 0 turns without spawning the agent', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const marker = path.join(sandbox.root, 'agent-ran');
    const result = await sandbox.run(
      ['start', 'the readme exists', ...FAST, '-C', repo.dir, '--check', 'test -f README.md', '--agent', `touch ${marker}`, '--json'],
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(finished(result.stdout)).toMatchObject({ status: 'achieved', turns: 0, reason: null, breaker: null });
    expect(existsSync(marker)).toBe(false);
  });

  it('a turn that makes a nested git repository without a commit (`cargo new`) goes on; its files are not in the snapshot', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const agent = 'mkdir -p crate && git init -q crate && echo "fn main() {}" > crate/main.rs && echo done > notes.txt';
    const result = await sandbox.run(['start', 'the crate exists', ...FAST, '-C', repo.dir, '--check', 'test -f crate/main.rs', '--agent', agent, '--evaluator', 'none', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(finished(result.stdout)).toMatchObject({ status: 'achieved', turns: 1 });
    const turn = parseJsonLines(result.stdout).find((event) => event.type === 'turn.finished');
    expect(turn?.view).toMatchObject({ files: ['notes.txt'] });
    // The judge is told what it cannot see: the turn record's guard notes (the evaluator reads them).
    const records = parseJsonLines(await readFile(path.join(await goalDirOf(sandbox.home), 'turns.jsonl'), 'utf8'));
    // and the files the agent made in it, by name (the look at files no snapshot holds).
    expect(records.at(-1)?.guardNotes).toEqual([
      expect.objectContaining({ path: 'crate/', kind: 'nested-repo' }),
      expect.objectContaining({ path: 'crate/', kind: 'hidden-change', detail: expect.stringContaining('crate/main.rs') }),
    ]);
  });

  it('a goal whose snapshot fails beyond what goald handles ends failed and announced (exit 70), not left active', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    // More nested repositories without a commit than a snapshot leaves out (32): git add keeps failing.
    const agent = 'for n in $(seq 33); do mkdir -p "r$n" && git init -q "r$n" && echo x > "r$n/f"; done';
    const result = await sandbox.run(['start', 'never', ...FAST, '-C', repo.dir, '--check', 'false', '--agent', agent, '--evaluator', 'none', '--json']);
    expect(result.code).toBe(EXIT.internal);
    expect(result.stderr).toMatch(/does not have a commit checked out/);
    expect(finished(result.stdout)).toMatchObject({ status: 'failed', reason: 'stopped', turns: 0 });
    const state = JSON.parse(await readFile(path.join(sandbox.home, 'state.json'), 'utf8')) as { goals: Array<Record<string, unknown>> };
    expect(state.goals).toEqual([expect.objectContaining({ status: 'failed', reason: 'stopped', reasonMessage: expect.stringMatching(/^goald hit an internal error: /) as unknown })]);
  });

  it('achieves a goal after a few turns and prints progress and the final box', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    // Each turn appends a line; the check passes once there are three.
    const agent = 'echo step >> progress.txt';
    const check = 'test "$(wc -l < progress.txt 2>/dev/null || echo 0)" -ge 3';
    const result = await sandbox.run(['start', 'progress.txt has three lines', ...FAST, '-C', repo.dir, '--check', check, '--agent', agent]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/turn 1\/20 .* checks 0\/1/);
    expect(result.stdout).toMatch(/turn 3\/20 .* checks 1\/1/);
    expect(result.stdout).toContain('Goal Achieved');
    expect(result.stdout).toContain('3 turns');
    expect(result.stdout).toContain('progress.txt (+3 -0)');
  });

  it('recites the goal at the end of every prompt with the right turn number', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const result = await sandbox.run([
      'start', 'count to two', ...FAST, '-C', repo.dir, '--max-turns', '4',
      '--check', 'test "$(cat n 2>/dev/null)" = 2', '--agent', 'echo $GOALD_TURN > n', '--json',
    ]);
    expect(result.code).toBe(0);
    const dir = await goalDirOf(sandbox.home);
    for (const turn of [1, 2]) {
      const prompt = await readFile(path.join(dir, `turn-${turn}.prompt.txt`), 'utf8');
      expect(prompt.startsWith('# Goal\ncount to two\n')).toBe(true);
      const recitation = prompt.slice(prompt.lastIndexOf('=== GOAL RECITATION'));
      expect(recitation).toContain(`=== GOAL RECITATION (turn ${turn} of 4) ===`);
      expect(recitation).toContain('Objective: count to two');
      expect(prompt.trimEnd().endsWith('=== END OF GOAL RECITATION ===')).toBe(true);
    }
    const second = await readFile(path.join(dir, 'turn-2.prompt.txt'), 'utf8');
    expect(second).toContain('n (+1 -0)');
  });

  it('fails an idle agent by stagnation at exactly turn 5', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const result = await sandbox.run(['start', 'make the check pass', ...FAST, '-C', repo.dir, '--check', 'exit 1', '--agent', 'true', '--json']);
    expect(result.code).toBe(1);
    expect(finished(result.stdout)).toMatchObject({ status: 'failed', reason: 'stagnation', breaker: 'stagnation', turns: 5 });
  });

  it('stops an agent that applies and reverts the same edit', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const agent = 'if [ -f toggle ]; then rm toggle; else echo on > toggle; fi';
    const result = await sandbox.run(['start', 'make the check pass', ...FAST, '-C', repo.dir, '--check', 'exit 1', '--agent', agent, '--json']);
    expect(result.code).toBe(1);
    const end = finished(result.stdout);
    expect(['oscillation', 'repeated-diff']).toContain(end.breaker);
    expect(end.turns).toBeLessThanOrEqual(5);
  });

  it('kills an agent that prints far too much: turn-token-limit', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const agent = 'head -c 4000000 /dev/zero | tr "\\0" "a"; echo; sleep 30';
    const result = await sandbox.run([
      'start', 'say little', ...FAST, '-C', repo.dir, '--check', 'exit 1', '--agent', agent, '--turn-token-limit', '5000', '--json',
    ]);
    expect(result.code).toBe(1);
    expect(finished(result.stdout)).toMatchObject({ status: 'failed', breaker: 'turn-token-limit', turns: 1 });
    const turn = parseJsonLines(result.stdout).find((event) => event.type === 'turn.finished');
    expect(turn?.outcome).toBe('token-limit');
  });

  it('times out a hanging agent with a grandchild and leaves no process behind', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const pidFile = path.join(sandbox.root, 'grandchild.pid');
    const agent = `sh -c 'sleep 1000 & echo $! > ${pidFile}; wait'`;
    const result = await sandbox.run([
      'start', 'hang', ...FAST, '-C', repo.dir, '--check', 'exit 1', '--agent', agent, '--turn-timeout', '1s', '--max-turns', '1', '--json',
    ]);
    expect(result.code).toBe(1);
    const turn = parseJsonLines(result.stdout).find((event) => event.type === 'turn.finished');
    expect(turn?.outcome).toBe('timed-out');
    expect(finished(result.stdout)).toMatchObject({ breaker: 'max-turns', turns: 1 });
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    await waitUntilGone(pid);
  });

  it('never lets an "achieved" verdict beat a failing check', async () => {
    llm.reset();
    llm.openai.setDefault({ achieved: true, blocked: false, reason: 'looks done to me', remaining: [] });
    const repo = await repoWithCommit({ 'goal.config.json': JSON.stringify({ evaluator: { skipWhenChecksFail: false } }) });
    const sandbox = await goaldSandbox();
    const result = await sandbox.run(
      ['start', 'tests pass', ...FAST, '-C', repo.dir, '--check', 'exit 1', '--agent', 'echo x >> f', '--evaluator', 'openai:judge-model', '--max-turns', '2', '--json'],
      { env: { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL } },
    );
    expect(result.code).toBe(1);
    expect(finished(result.stdout)).toMatchObject({ status: 'failed', breaker: 'max-turns', turns: 2 });
    expect(llm.requests.filter((request) => request.path.includes('chat/completions')).length).toBeGreaterThanOrEqual(2);
  });

  it('fails with evaluator-failures after three malformed verdicts, and sends the condition and files', async () => {
    llm.reset();
    llm.openai.setDefault({ not: 'a verdict' });
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const condition = 'the file "notes/todo.md" lists three items — verbatim check ✓';
    const result = await sandbox.run(
      ['start', condition, ...FAST, '-C', repo.dir, '--check', 'true', '--agent', 'mkdir -p notes; echo "- item $GOALD_TURN" >> notes/todo.md', '--evaluator', 'openai:judge-model', '--json'],
      { env: { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL } },
    );
    expect(result.code).toBe(1);
    expect(finished(result.stdout)).toMatchObject({ status: 'failed', breaker: 'evaluator-failures', turns: 3 });
    const turnRequests = llm.requests.filter((request) => JSON.stringify(request.body).includes('notes/todo.md'));
    expect(turnRequests.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(turnRequests[0]?.body)).toContain(JSON.stringify(condition).slice(1, -1));
  });

  it('refused (another goal runs in the workspace): its pre-check readied its check but never ran it', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    const running = await submitGoal(sandbox, ['steps reach 5', '-C', repo.dir, '--agent', gate.command, '--check', stepsCheck(5), '--cooldown', '0']);
    await waitForPidFile(gate.agentPidFile(1));
    // The pre-check's check process is started while the goal registers, and held until it is registered.
    const refused = await sandbox.run(['start', 'x', ...FAST, '-C', repo.dir, '--agent', 'true', '--check', 'touch foreground-check-ran']);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toMatch(new RegExp(`^goald: goal ${running.id} is already active in `));
    expect(existsSync(path.join(repo.dir, 'foreground-check-ran'))).toBe(false);
    await expect.poll(() => pidsWithMarker('touch foreground-check-ran')).toEqual([]);
    expect(existsSync(path.join(repo.dir, 'foreground-check-ran'))).toBe(false);
    await gate.open(1);
  });

  it('leaves the user index, HEAD and object count untouched', async () => {
    const repo = await repoWithCommit({ 'a.txt': 'a\n' });
    await repo.write('staged.txt', 'staged\n');
    await repo.git('add', 'staged.txt');
    const indexBefore = await readFile(path.join(repo.dir, '.git', 'index'));
    const headBefore = await repo.git('rev-parse', 'HEAD');
    const objectsBefore = await repo.git('count-objects', '-v');
    const sandbox = await goaldSandbox();
    const result = await sandbox.run([
      'start', 'three edits', ...FAST, '-C', repo.dir, '--check', 'test "$(wc -l < b.txt 2>/dev/null || echo 0)" -ge 3', '--agent', 'echo b >> b.txt; echo more >> a.txt',
    ]);
    expect(result.code).toBe(0);
    expect(await readFile(path.join(repo.dir, '.git', 'index'))).toEqual(indexBefore);
    expect(await repo.git('rev-parse', 'HEAD')).toBe(headBefore);
    expect(await repo.git('count-objects', '-v')).toBe(objectsBefore);
    expect(await repo.git('stash', 'list')).toBe('');
  });

  it("a GOALD_HOME inside the repository (dotfiles at $HOME) is none of the turns' work", async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const home = path.join(repo.dir, '.local', 'state', 'goald');
    // Before, each turn's diff listed goald's own state files, and a temporary file renamed away while the
    // snapshot's `git add` listed the tree failed the goal (exit 70, "unable to stat").
    const result = await sandbox.run(
      ['start', 'f.txt says 6', ...FAST, '-C', repo.dir, '--check', 'test "$(cat f.txt 2>/dev/null)" = 6', '--agent', 'echo "$GOALD_TURN" > f.txt', '--evaluator', 'none', '--json'],
      { env: { GOALD_HOME: home } },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(finished(result.stdout)).toMatchObject({ status: 'achieved', turns: 6 });
    const turns = parseJsonLines(result.stdout).filter((event) => event.type === 'turn.finished');
    expect(turns.map((event) => (event.view as { files: unknown }).files)).toEqual(Array.from({ length: 6 }, () => ['f.txt']));
    const state = JSON.parse(await readFile(path.join(home, 'state.json'), 'utf8')) as { goals: Array<{ summary: { files: Array<{ path: string }> } }> };
    expect(state.goals.map((goal) => goal.summary.files.map((file) => file.path))).toEqual([['f.txt']]);
  });

  it('counts commits made by the agent as change', async () => {
    const repo = await repoWithCommit();
    const sandbox = await goaldSandbox();
    const agent = 'echo "$GOALD_TURN" > c.txt && git add c.txt && git -c user.name=a -c user.email=a@b commit -qm turn';
    const result = await sandbox.run([
      'start', 'three commits', ...FAST, '-C', repo.dir, '--check', 'test "$(git rev-list --count HEAD)" -ge 4', '--agent', agent, '--json',
    ]);
    expect(result.code).toBe(0);
    expect(finished(result.stdout)).toMatchObject({ status: 'achieved', turns: 3 });
  });
});

describe('bad input: one line, exit 2, nothing written', () => {
  async function expectUsageError(args: string[], pattern: RegExp, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    const sandbox = await goaldSandbox();
    const result = await sandbox.run(args, options);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(pattern);
    expect(existsSync(sandbox.home)).toBe(false);
    return result;
  }

  it('empty condition', async () => {
    const repo = await repoWithCommit();
    await expectUsageError(['start', '   ', '--foreground', '-C', repo.dir, '--check', 'true', '--agent', 'true'], /condition is empty/);
  });

  it('unknown flag', async () => {
    await expectUsageError(['start', 'x', '--foreground', '--frobnicate'], /unknown option '--frobnicate'/);
  });

  it('directory not inside a git work tree', async () => {
    const sandbox = await goaldSandbox();
    const plain = path.join(sandbox.root, 'plain');
    await import('node:fs/promises').then((fs) => fs.mkdir(plain));
    await expectUsageError(['start', 'x', '--foreground', '-C', plain, '--check', 'true', '--agent', 'true'], /not inside a git work tree.*git init/);
  });

  it('neither a check nor an evaluator', async () => {
    const repo = await repoWithCommit();
    await expectUsageError(['start', 'x', '--foreground', '-C', repo.dir, '--agent', 'true'], /no checks.*--check/);
  });

  it('agent executable missing', async () => {
    const repo = await repoWithCommit();
    await expectUsageError(['start', 'x', '--foreground', '-C', repo.dir, '--check', 'true', '--agent', 'no-such-agent-xyz -p {prompt}'], /no-such-agent-xyz.*not found/);
  });

  it('evaluator without its API key names the variable', async () => {
    const repo = await repoWithCommit();
    await expectUsageError(['start', 'x', '--foreground', '-C', repo.dir, '--agent', 'true', '--evaluator', 'anthropic:claude-judge'], /ANTHROPIC_API_KEY/);
  });

  it('malformed goal.config.json names the file and the dot path', async () => {
    const repo = await repoWithCommit({ 'goal.config.json': JSON.stringify({ limits: { maxTurns: 'lots' } }) });
    await expectUsageError(['start', 'x', '--foreground', '-C', repo.dir, '--agent', 'true', '--check', 'true'], /goal\.config\.json.*limits\.maxTurns/);
  });

  it('invalid JSON in goal.config.json', async () => {
    const repo = await repoWithCommit();
    await writeFile(path.join(repo.dir, 'goal.config.json'), '{ "goal": ');
    await expectUsageError(['start', 'x', '--foreground', '-C', repo.dir, '--agent', 'true', '--check', 'true'], /goal\.config\.json.*JSON/);
  });

  it.each([
    ['--turn-timeout', 'soon', /--turn-timeout.*duration/],
    ['--cooldown', '5 minutes', /--cooldown.*duration/],
    ['--max-turns', '12abc', /--max-turns/],
    ['--token-budget', '-5', /--token-budget/],
  ])('malformed %s %s', async (flag, value, pattern) => {
    const repo = await repoWithCommit();
    await expectUsageError(['start', 'x', '--foreground', '-C', repo.dir, '--agent', 'true', '--check', 'true', flag, value], pattern);
  });
});
