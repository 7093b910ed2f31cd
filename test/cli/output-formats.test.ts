// Output formats of the built binary (DESIGN.md § CLI contract): with --json, `start --foreground` and
// `start --wait` print one JSON object per line, the last being `goal.finished` with exactly the contract's
// keys; `status --json` prints `{ daemon, goals }` with or without a daemon.

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldRun } from '../helpers/run-goald.js';

const FINISHED_KEYS = ['breaker', 'id', 'reason', 'status', 'tokens', 'turns', 'type'];

async function repo(): Promise<string> {
  return (await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true })).dir;
}

/** Every stdout line, parsed: each must be one JSON object. */
function jsonLines(run: GoaldRun): Record<string, unknown>[] {
  const objects = parseJsonLines(run.stdout);
  expect(objects).toHaveLength(run.stdout.trimEnd().split('\n').length);
  return objects;
}

/** Event lines: JSON objects, each with a string `type`. */
function eventLines(run: GoaldRun): Record<string, unknown>[] {
  const events = jsonLines(run);
  for (const event of events) expect(event.type).toBeTypeOf('string');
  return events;
}

/** Asserts the contract's `goal.finished` line: exactly its keys, with their types. */
function expectFinished(event: Record<string, unknown> | undefined, expected: Record<string, unknown>): void {
  expect(Object.keys(event ?? {}).sort()).toEqual(FINISHED_KEYS);
  expect(event).toMatchObject({ type: 'goal.finished', ...expected });
  expect(event?.id).toBeTypeOf('string');
  expect(event?.turns).toBeTypeOf('number');
  expect(event?.tokens).toBeTypeOf('number');
}

describe('start --json', () => {
  it('--foreground: event lines about one goal, the last goal.finished (achieved)', async () => {
    const sandbox = await goaldSandbox();
    const check = 'test "$(wc -l < steps 2>/dev/null || echo 0)" -ge 2';
    const run = await sandbox.run(['start', 'two steps', '--foreground', '--json', '--cooldown', '0', '-C', await repo(), '--check', check, '--agent', 'echo step >> steps']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const events = eventLines(run);
    expect(events[0]).toMatchObject({ type: 'goal.started', condition: 'two steps' });
    const id = events[0]?.id;
    for (const event of events) expect(event.id).toBe(id);
    expect(events.filter((event) => event.type === 'turn.finished')).toHaveLength(2);
    expectFinished(events.at(-1), { id, status: 'achieved', reason: null, breaker: null, turns: 2 });
  });

  it('--foreground: a failed goal names its reason and breaker', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['start', 'never', '--foreground', '--json', '--cooldown', '0', '--max-turns', '1', '-C', await repo(), '--check', 'false', '--agent', 'true']);
    expect(run.code).toBe(1);
    expectFinished(eventLines(run).at(-1), { status: 'failed', reason: 'max-turns', breaker: 'max-turns', turns: 1 });
  });

  it('--wait: goal.submitted first, then the goal events, the last goal.finished', async () => {
    const sandbox = await goaldSandbox();
    const dir = await repo();
    const run = await sandbox.run(['start', 'one step', '--wait', '--json', '--cooldown', '0', '-C', dir, '--check', 'test -f step', '--agent', 'touch step']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const events = eventLines(run);
    const submitted = events[0];
    expect(Object.keys(submitted ?? {}).sort()).toEqual(['id', 'queued', 'type', 'workspace']);
    expect(submitted).toMatchObject({ type: 'goal.submitted', queued: false, workspace: dir });
    for (const event of events) expect(event.id).toBe(submitted?.id);
    expectFinished(events.at(-1), { id: submitted?.id, status: 'achieved', reason: null, breaker: null, turns: 1 });
  });
});

describe('status --json', () => {
  it('without a daemon: the stored goals, daemon false', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['status', '--json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(jsonLines(run)).toEqual([{ daemon: false, goals: [] }]);
  });

  it('with a daemon: its live goals, one JSON object', async () => {
    const sandbox = await goaldSandbox();
    const dir = await repo();
    const forever = fileURLToPath(new URL('../fixtures/agents/forever.mjs', import.meta.url));
    const started = await sandbox.run(['start', 'runs a while', '--json', '-C', dir, '--check', 'false', '--agent', forever]);
    expect(started.code).toBe(0);
    const id = jsonLines(started)[0]?.id;
    const run = await sandbox.run(['status', '--json']);
    expect(run.code).toBe(0);
    const [reply, ...rest] = jsonLines(run);
    expect(rest).toEqual([]);
    expect(Object.keys(reply ?? {}).sort()).toEqual(['daemon', 'goals']);
    expect(reply).toMatchObject({ daemon: true, goals: [{ id, condition: 'runs a while', workspace: dir, status: 'active' }] });
    // Naming the goal gives the same shape, with just that goal.
    const named = await sandbox.run(['status', String(id), '--json']);
    expect(jsonLines(named)).toEqual([{ daemon: true, goals: [expect.objectContaining({ id, status: 'active' })] }]);
  });
});

describe('show --receipt', () => {
  it('prints the Markdown receipt and, with --format json, the JSON one; bad flags and unknown goals exit 2', async () => {
    const sandbox = await goaldSandbox();
    const dir = await repo();
    const run = await sandbox.run(['start', 'n has a line', '-C', dir, '--foreground', '--json', '--evaluator', 'none', '--cooldown', '0', '--agent', 'echo x >> n', '--check', 'test -s n']);
    expect(run.code, run.stderr).toBe(0);
    const id = String(eventLines(run)[0]?.id);

    const markdown = await sandbox.run(['show', id, '--receipt']);
    expect(markdown.code, markdown.stderr).toBe(0);
    expect(markdown.stdout).toContain(`## goald receipt · n has a line`);
    expect(markdown.stdout).toMatch(/\| 1 \| completed \| .* \| `[0-9a-f]{12}` \| `[0-9a-f]{12}` \| 1 \| 1\/1 \| achieved: /);
    expect(markdown.stdout).toContain('**Stop:** achieved');

    const json = await sandbox.run(['show', id, '--receipt', '--format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const receipt = JSON.parse(json.stdout) as { receipt: number; goal: { id: string }; turns: { turn: number; tree: string }[]; totals: { turns: number } };
    expect(receipt).toMatchObject({ receipt: 1, goal: { id }, totals: { turns: 1 } });
    expect(receipt.turns.map((turn) => turn.turn)).toEqual([0, 1]);
    expect(receipt.turns[1]?.tree).toMatch(/^[0-9a-f]{40}$/);
    // The same goal, the same receipt.
    expect((await sandbox.run(['show', id, '--receipt', '--format', 'json'])).stdout).toBe(json.stdout);

    const formatAlone = await sandbox.run(['show', id, '--format', 'json']);
    expect(formatAlone.code).toBe(2);
    expect(formatAlone.stderr).toContain('--format applies to --receipt only');
    expect((await sandbox.run(['show', id, '--receipt', '--format', 'xml'])).code).toBe(2);
    expect((await sandbox.run(['show', 'nosuchgoal', '--receipt'])).code).toBe(2);
  });
});
