// End to end (issue 12, `goald race`): three scripted agents race on one goal in their own worktrees, through
// the real daemon. `first`: the first to achieve wins and the others are stopped; `best`: all finish and
// the (fake) evaluator compares their diffs in one call, ties going to the smaller diff. `race.concurrency`
// keeps members from overlapping, `status` shows a running race with its members, `--n` repeats an agent,
// `--wait` exits 1 when none achieved. Bad input exits 2.

import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectToHold, readGoal } from '../helpers/daemon.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';
import { waitUntil } from '../helpers/wait.js';
import { goaldSandbox, parseJsonLines, writeUserConfig, type GoaldSandbox } from '../helpers/run-goald.js';

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

interface RaceEnd {
  id: string;
  status: string;
  concurrency: number;
  winner: string | null;
  reason: string | null;
  members: { agent: string; goalId: string | null; status: string; diffLines?: number | null }[];
}

function repo(files: Record<string, string> = {}): Promise<Gitdir> {
  return gitdir({ files: { 'README.md': '# demo\n', ...files }, initialCommit: true });
}

async function race(sandbox: GoaldSandbox, dir: string, args: string[]): Promise<{ code: number | null; end: RaceEnd; stderr: string }> {
  const run = await sandbox.run(['race', 'done.txt exists', '-C', dir, '--cooldown', '0', '--check', 'test -f done.txt', ...args, '--wait', '--json']);
  const events = parseJsonLines(run.stdout);
  expect(events[0]?.type, run.stderr).toBe('race.submitted');
  const end = events.at(-1) as unknown as RaceEnd & { type: string };
  expect(end.type).toBe('race.finished');
  return { code: run.code, end, stderr: run.stderr };
}

describe('goald race', () => {
  it('--pick first: the first member to achieve wins, the others are stopped; apply <race> applies the winner', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const signals = path.join(sandbox.root, 'signals');
    await mkdir(signals);
    // The slow member waits for a gate nobody opens: only the race's stop ends it.
    const slow = `touch ${signals}/slow; while [ ! -f ${signals}/never ]; do sleep 0.05; done; echo slow > done.txt`;
    const fast = `while [ ! -f ${signals}/slow ]; do sleep 0.02; done; echo fast > done.txt`;
    const failing = 'echo nothing > other.txt';
    const { code, end } = await race(sandbox, git.dir, ['--evaluator', 'none', '--max-turns', '1', '--agent', slow, '--agent', fast, '--agent', failing]);
    expect(code).toBe(0);
    expect(end.status).toBe('picked');
    const [slowMember, fastMember, failingMember] = end.members;
    expect(end.winner).toBe(fastMember?.goalId);
    expect(end.reason).toBe('the first member to achieve the goal');
    expect(fastMember?.status).toBe('achieved');
    expect(slowMember?.status).toBe('failed');
    expect(['failed']).toContain(failingMember?.status);
    const stopped = readGoal(sandbox, String(slowMember?.goalId));
    expect(stopped).toMatchObject({ status: 'failed', reason: 'stopped' });
    expect(existsSync(stopped.workspace)).toBe(false);

    const shown = await sandbox.run(['show', end.id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`race ${end.id} · pick first · picked`);
    expect(shown.stdout).toMatch(new RegExp(`${String(fastMember?.goalId)} +achieved .*← picked`));
    const applied = await sandbox.run(['apply', end.id, '-C', git.dir]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`applied goal ${String(fastMember?.goalId)}`);
    expect(await git.git('show', 'HEAD:done.txt')).toBe('fast');
  });

  it('--pick best: every member finishes, the evaluator compares the diffs in one call and its pick is recorded; a tie goes to the smaller diff', async () => {
    llm.reset();
    const compared: string[] = [];
    let pickNext = '2';
    llm.openai.setDefaultTurn((body) => {
      const text = JSON.stringify(body);
      if (text.includes('### candidate 1')) {
        compared.push(text);
        return { text: JSON.stringify({ achieved: true, blocked: false, reason: `candidate ${pickNext} is the clearest`, remaining: [], next_step: pickNext, confidence: null }) };
      }
      return { text: JSON.stringify({ achieved: true, blocked: false, reason: 'done.txt exists', remaining: [], next_step: null, confidence: null }) };
    });
    const git = await repo();
    const sandbox = await goaldSandbox();
    const env = { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL };
    await writeFile(path.join(sandbox.root, 'unused'), '');
    // Diffs of 1, 3 and 2 lines.
    const agents = ['echo a > done.txt', 'printf "b\\nb\\nb\\n" > done.txt', 'printf "c\\nc\\n" > done.txt'];
    const args = ['--evaluator', 'openai:judge-model', '--pick', 'best', ...agents.flatMap((agent) => ['--agent', agent])];
    const run = async (): Promise<RaceEnd> => {
      const result = await sandbox.run(['race', 'done.txt exists', '-C', git.dir, '--cooldown', '0', '--check', 'test -f done.txt', ...args, '--wait', '--json'], { env });
      expect(result.code, result.stderr).toBe(0);
      return parseJsonLines(result.stdout).at(-1) as unknown as RaceEnd;
    };
    const picked = await run();
    expect(compared).toHaveLength(1); // one extra call, with every candidate
    expect(compared[0]).toContain('### candidate 3');
    expect(picked.members.map((member) => [member.status, member.diffLines])).toEqual([
      ['achieved', 1],
      ['achieved', 3],
      ['achieved', 2],
    ]);
    expect(picked.winner).toBe(picked.members[1]?.goalId); // the evaluator's pick, not the smallest diff
    expect(picked.reason).toBe('candidate 2 is the clearest');

    pickNext = '2, 3';
    const tie = await run();
    expect(tie.winner).toBe(tie.members[2]?.goalId); // 2 lines beat 3
    expect(tie.reason).toMatch(/a tie of 2: the smaller diff/);
  });

  it('bad input exits 2: one member, an unknown race to apply', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const one = await sandbox.run(['race', 'x', '-C', git.dir, '--agent', 'true', '--n', '1', '--check', 'true', '--evaluator', 'none']);
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(/1 member is no race/);
    const single = await sandbox.run(['race', 'x', '-C', git.dir, '--agent', 'true', '--check', 'true', '--evaluator', 'none']);
    expect(single.code).toBe(2);
    const noCommit = await gitdir();
    const empty = await sandbox.run(['race', 'x', '-C', noCommit.dir, '--agent', 'true', '--agent', 'false', '--check', 'true', '--evaluator', 'none']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('has no commit yet');
    const unknown = await sandbox.run(['apply', 'rnosuchrace', '-C', git.dir]);
    expect(unknown.code).toBe(2);
  });

  it('race.concurrency 1: the second member starts only once the first has ended; status shows the running race with its members', { timeout: 60_000 }, async () => {
    const git = await repo({ 'goal.config.json': JSON.stringify({ race: { concurrency: 1 } }) });
    const sandbox = await goaldSandbox();
    const log = path.join(sandbox.root, 'log');
    const logged = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
    // Each member logs its start, waits for the test's gate, logs its end and achieves.
    const agent = (name: string): string =>
      `echo "start ${name}" >> ${log}; while [ ! -f ${sandbox.root}/go-${name} ]; do sleep 0.02; done; echo "end ${name}" >> ${log}; echo ${name} > done.txt`;
    const running = race(sandbox, git.dir, ['--evaluator', 'none', '--pick', 'best', '--agent', agent('one'), '--agent', agent('two')]);
    void running.catch(() => undefined); // awaited below; a failure before then must not surface as unhandled
    await waitUntil('the first member to start', () => logged().includes('start one'), 30_000);
    await waitUntil('the race to be stored', async () => (await readdir(path.join(sandbox.home, 'races'))).length === 1);

    const status = await sandbox.run(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const [shown, ...others] = (JSON.parse(status.stdout) as { races?: RaceEnd[] }).races ?? [];
    expect(others).toEqual([]);
    expect(shown).toMatchObject({ status: 'running', concurrency: 1, winner: null });
    expect(shown?.members.map((member) => [member.status, member.goalId === null])).toEqual([['running', false], ['waiting', true]]);
    const text = await sandbox.run(['status']);
    expect(text.code, text.stderr).toBe(0);
    // One unit: the race's line, then a line per member right under it (the waiting one has no goal yet).
    const lines = text.stdout.split('\n');
    const at = lines.findIndex((line) => new RegExp(`^${String(shown?.id)}  race best +running \\(1/2 members\\) +done\\.txt exists`).test(line));
    expect(at, text.stdout).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toMatch(new RegExp(`^ +1\\. ${String(shown?.members[0]?.goalId)} +running +echo "start one"`));
    expect(lines[at + 2]).toMatch(/^ +2\. \(not started\) +waiting +echo "start two"/);

    await expectToHold('the second member to wait for a slot', 500, () => !logged().includes('start two'));
    await writeFile(path.join(sandbox.root, 'go-one'), '');
    await waitUntil('the second member to start', () => logged().includes('start two'), 30_000);
    await writeFile(path.join(sandbox.root, 'go-two'), '');
    const { code, end } = await running;
    expect(code).toBe(0);
    expect(logged()).toEqual(['start one', 'end one', 'start two', 'end two']);
    expect(end.members.map((member) => member.status)).toEqual(['achieved', 'achieved']);
    expect(end.members[1]?.goalId).not.toBe(end.members[0]?.goalId);
  });

  it("race.concurrency from the user's config when the workspace sets none: the members' recorded runs do not overlap", async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    await writeUserConfig(sandbox, { race: { concurrency: 1 } });
    const { code, end } = await race(sandbox, git.dir, ['--evaluator', 'none', '--pick', 'best', '--agent', 'echo a > done.txt', '--agent', 'echo b > done.txt']);
    expect(code).toBe(0);
    const shown = await sandbox.run(['show', end.id, '--json']);
    expect((JSON.parse(shown.stdout) as { race: RaceEnd }).race.concurrency).toBe(1);
    const [first, second] = end.members.map((member) => readGoal(sandbox, String(member.goalId)));
    expect(Date.parse(String(second?.startedAt))).toBeGreaterThanOrEqual(Date.parse(String(first?.finishedAt)));
  });

  it('--agent X --n 3: three members, each running X as a goal and branch of its own', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const agent = 'echo "$GOALD_GOAL_ID" > done.txt';
    const { code, end } = await race(sandbox, git.dir, ['--evaluator', 'none', '--pick', 'best', '--agent', agent, '--n', '3']);
    expect(code).toBe(0);
    expect(end.members.map((member) => [member.agent, member.status])).toEqual([
      [agent, 'achieved'],
      [agent, 'achieved'],
      [agent, 'achieved'],
    ]);
    const ids = end.members.map((member) => String(member.goalId));
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(await git.git('show', `goald/${id}:done.txt`)).toBe(id);
    expect(ids).toContain(end.winner);
  });

  it('--wait exits 1 when no member achieved the goal', async () => {
    const git = await repo();
    const sandbox = await goaldSandbox();
    const { code, end } = await race(sandbox, git.dir, ['--evaluator', 'none', '--max-turns', '1', '--agent', 'echo x > x.txt', '--agent', 'true']);
    expect(code).toBe(1);
    expect(end).toMatchObject({ status: 'none', winner: null, reason: 'no member achieved the goal' });
    expect(end.members.map((member) => member.status)).toEqual(['failed', 'failed']);
  });
});
