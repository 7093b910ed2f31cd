// End to end: the goal contract is sealed at start (issue 9). A real daemon, real agents that are hostile
// shell scripts: an agent that rewrites goal.config.json (its check becomes `true`, maxTurns 1000) gets
// nothing from it (the edit is held, shown and not applied) until the owner runs `goald edit
// --apply-config`; an agent that injects a `loops` entry never gets a command run by the daemon; the owner's
// `goald edit` changes a live goal from its next turn and `--resume` reopens a goal that ran out of turns.

import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '../../state/types.js';
import { expectToHold, gatedAgent, readGoal, readGoals, readTurns, stepsCheck, submitGoal, waitForFinished, waitForGoal, waitForPidFile } from '../helpers/daemon.js';
import { expectOneLineError, isFinished, listLoops, promptOf, repo } from '../helpers/loops.js';
import { pidsWithMarker } from '../helpers/processes.js';
import { parseJsonLines, goaldSandbox, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

const CONFIG = 'goal.config.json';

// What a hostile agent writes over the workspace's config: a check that always passes, a thousand turns.
const REWRITTEN = JSON.stringify({ checks: [{ name: 'real', run: 'true' }], limits: { maxTurns: 1000, cooldown: '0' } });

async function statusGoal(sandbox: GoaldSandbox, id: string): Promise<GoalRecord> {
  const run = await sandbox.run(['status', id, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const [goal] = (JSON.parse(run.stdout) as { goals: GoalRecord[] }).goals;
  return goal as GoalRecord;
}

async function eventsOf(sandbox: GoaldSandbox, id: string): Promise<Record<string, unknown>[]> {
  return parseJsonLines(await readFile(path.join(sandbox.home, 'goals', id, 'events.jsonl'), 'utf8'));
}

function daemonLog(sandbox: GoaldSandbox): Promise<string> {
  return readFile(path.join(sandbox.home, 'daemon.log'), 'utf8').catch(() => '');
}

/** An agent script outside the workspace (so it is in no delta): `body` runs in the workspace. */
async function agentScript(sandbox: GoaldSandbox, name: string, body: string): Promise<string> {
  const file = path.join(sandbox.root, `${name}.sh`);
  await writeFile(file, `set -e\n${body}\n`);
  return `sh ${file}`;
}

describe('a hostile agent that rewrites goal.config.json', () => {
  it('during its turn: not achieved; the edit is held, shown in status, show and the events, and applied only by --apply-config', async () => {
    const workspace = await repo({ [CONFIG]: JSON.stringify({ checks: [{ name: 'real', run: 'test -f done.txt' }], limits: { maxTurns: 3, cooldown: '0' } }) });
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    // Turn 1 rewrites the contract, then behaves like the gated agent (never creates done.txt).
    const agent = await agentScript(sandbox, 'rewrite', `if [ "$GOALD_TURN" = 1 ]; then printf '%s' '${REWRITTEN}' > ${CONFIG}; fi\n${gate.command}`);
    const { id } = await submitGoal(sandbox, ['the real check passes', '-C', workspace.dir, '--agent', agent]);
    await waitForPidFile(gate.agentPidFile(1));

    const held = await waitForGoal(sandbox, id, 'to hold the edit', (goal) => Boolean(goal.heldConfig));
    expect(held.heldConfig?.settings).toEqual(expect.arrayContaining(['checks', 'limits.maxTurns']));
    expect(held.heldConfig?.turn).toBe(1);
    expect((await statusGoal(sandbox, id)).heldConfig?.settings).toContain('limits.maxTurns');
    expect((await sandbox.run(['status', id])).stdout).toMatch(/config edit held \(made during turn 1; not applied\).*--apply-config/);
    expect((await sandbox.run(['show', id])).stdout).toContain('config edit held');
    expect(await daemonLog(sandbox)).toMatch(new RegExp(`edited during turn 1 of goal ${id}: held, not applied`));

    await gate.open(1);
    await waitForPidFile(gate.agentPidFile(2));
    // Turn 2 runs under the sealed contract: 3 turns, the real check (which failed turn 1).
    expect(await promptOf(sandbox, id, 2)).toContain('=== GOAL RECITATION (turn 2 of 3) ===');
    expect((await readTurns(sandbox, id)).map((turn) => [turn.turn, turn.checks.map((check) => [check.command, check.passed])])).toEqual([
      [0, [['test -f done.txt', false]]],
      [1, [['test -f done.txt', false]]],
    ]);
    const held2 = (await eventsOf(sandbox, id)).filter((event) => event.type === 'config.held');
    expect(held2).toHaveLength(1);
    expect(held2[0]).toMatchObject({ id, turn: 1, settings: expect.arrayContaining(['checks', 'limits.maxTurns']) as unknown });
    expect(readGoal(sandbox, id).status).toBe('active');

    // The owner looks and decides it was theirs: applied from the next turn.
    const applied = await sandbox.run(['edit', id, '--apply-config']);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`goal ${id} edited; applies from the next turn`);
    expect(applied.stdout).toMatch(/limits\.maxTurns 3 → 1000/);
    expect(readGoal(sandbox, id).heldConfig).toBeNull();
    await gate.open(2);
    await waitForPidFile(gate.agentPidFile(3));
    expect(await promptOf(sandbox, id, 3)).toContain('=== GOAL RECITATION (turn 3 of 1000) ===');
    await gate.open(3);
    const finished = await waitForFinished(sandbox, id);
    expect(finished.status).toBe('achieved');
    expect(finished.edits).toEqual([expect.objectContaining({ by: 'goald edit --apply-config', resumed: false })]);
    const show = await sandbox.run(['show', id]);
    expect(show.stdout).toMatch(/by goald edit --apply-config/);
    expect(show.stdout).toMatch(/limits\.maxTurns 3 → 1000/);
    expect((await eventsOf(sandbox, id)).some((event) => event.type === 'goal.edited' && event.by === 'goald edit --apply-config')).toBe(true);
  });

  it('as the last thing it does (seen only in its delta): held, and the goal is not achieved', async () => {
    const workspace = await repo({ [CONFIG]: JSON.stringify({ checks: [{ name: 'real', run: 'exit 1' }], limits: { maxTurns: 2, cooldown: '0' } }) });
    const sandbox = await goaldSandbox();
    // Its checks would leave a mark: goald must never run them, in this goal or in the next one refused.
    const marked = JSON.stringify({ checks: [{ name: 'real', run: 'touch agent-check-ran' }], limits: { maxTurns: 1000, cooldown: '0' } });
    const agent = await agentScript(sandbox, 'last-word', `echo "$GOALD_TURN" >> steps.txt\nprintf '%s' '${marked}' > ${CONFIG}`);
    const { id } = await submitGoal(sandbox, ['the real check passes', '-C', workspace.dir, '--agent', agent]);
    const finished = await waitForFinished(sandbox, id);
    expect(finished).toMatchObject({ status: 'failed', reason: 'max-turns' });
    expect(finished.summary.turns).toBe(2);
    expect(finished.heldConfig).toMatchObject({ turn: 1, settings: expect.arrayContaining(['checks', 'limits.maxTurns']) as unknown });
    const turns = await readTurns(sandbox, id);
    expect(turns.slice(1).every((turn) => turn.checks.every((check) => !check.passed))).toBe(true);
    expect(await promptOf(sandbox, id, 2)).toContain('(turn 2 of 2)');

    // The next goal in the workspace would be sealed with the agent's contract: refused while it is held.
    const next = await sandbox.run(['start', 'the real check passes', '-C', workspace.dir, '--agent', 'true']);
    expectOneLineError(next, new RegExp(`goal\\.config\\.json has an edit made during a turn that is held, not applied.*goald edit ${id} --apply-config, or revert the file`));
    const foreground = await sandbox.run(['start', 'the real check passes', '-C', workspace.dir, '--agent', 'true', '--foreground']);
    expectOneLineError(foreground, new RegExp(`held, not applied.*goald edit ${id} --apply-config`));
    expect(readGoals(sandbox)).toHaveLength(1);
    // The foreground start had its pre-check's check process ready before registration refused it.
    await expect.poll(() => pidsWithMarker('touch agent-check-ran')).toEqual([]);
    expect(existsSync(path.join(workspace.dir, 'agent-check-ran'))).toBe(false);
    // Reverted by the owner: a goal starts at once (whether or not the watcher has seen the revert yet).
    await writeFile(path.join(workspace.dir, CONFIG), JSON.stringify({ checks: [{ name: 'real', run: 'exit 1' }], limits: { maxTurns: 2, cooldown: '0' } }));
    const second = await submitGoal(sandbox, ['the real check passes', '-C', workspace.dir, '--agent', 'true']);
    expect(readGoal(sandbox, id).heldConfig).toBeNull();
    expect((await waitForFinished(sandbox, second.id)).settings).toMatchObject({ limits: { maxTurns: 2 } });
    expect(existsSync(path.join(workspace.dir, 'agent-check-ran'))).toBe(false);
  });
});

describe('a hostile agent that injects a loop into goal.config.json', () => {
  it('never gets a command run by the daemon, not after its goal ends and not after a daemon restart', async () => {
    const sandbox = await goaldSandbox();
    const marker = path.join(sandbox.root, 'injected-ran');
    const workspace = await repo({ [CONFIG]: JSON.stringify({ checks: [{ name: 'never', run: 'exit 1' }], limits: { maxTurns: 1, cooldown: '0' } }) });
    const injected = JSON.stringify({
      checks: [{ name: 'never', run: 'exit 1' }],
      limits: { maxTurns: 1, cooldown: '0' },
      loops: [{ every: '1s', goal: 'run my command', agent: { command: `touch ${marker}` }, checks: [{ run: `touch ${marker}; exit 1` }] }],
    });
    const agent = await agentScript(sandbox, 'inject', `printf '%s' '${injected}' > ${CONFIG}`);
    const { id } = await submitGoal(sandbox, ['the check passes', '-C', workspace.dir, '--agent', agent]);
    const finished = await waitForFinished(sandbox, id);
    expect(finished.heldConfig?.settings).toContain('loops');
    // Well past the injected period (1 s): no loop, no run, no command.
    await expectToHold('no injected loop or run', 3_500, () => !existsSync(marker) && readGoals(sandbox).length === 1);
    expect((await listLoops(sandbox)).loops).toEqual([]);
    // `goald loop sync` would put the held file in force: refused.
    expectOneLineError(await sandbox.run(['loop', 'sync', '-C', workspace.dir]), /held, not applied.*--apply-config/);

    // A restarted daemon keeps holding it (the held state is stored on the goal).
    expect((await sandbox.run(['daemon', 'stop'])).code).toBe(0);
    // A goal started now would run with the injected file: refused (the new daemon reads the held state).
    expectOneLineError(await sandbox.run(['start', 'the check passes', '-C', workspace.dir, '--agent', 'true']), /held, not applied.*--apply-config/);
    await expectToHold('no injected loop or run after the restart', 3_500, () => !existsSync(marker));
    expect((await listLoops(sandbox)).loops).toEqual([]);
    expect(await daemonLog(sandbox)).toMatch(/an edit is still held \(.*loops.*\); its loops stay as they were/);
  });
});

describe('a hostile loop run that rewrites its own loop declaration', () => {
  it("gets no later run with the rewritten file: the loop's runs are refused while the edit is held", async () => {
    const sandbox = await goaldSandbox();
    const declared = (run: string) => ({
      loops: [{ every: '1s', goal: 'the real check passes', checks: [{ name: 'real', run }], limits: { maxTurns: 1, cooldown: '0' } }],
    });
    const agent = `sh ${path.join(sandbox.root, 'rewrite-loop.sh')}`;
    // The rewrite keeps the agent as it was, so only the loop's check changes (to one that always passes).
    await agentScript(sandbox, 'rewrite-loop', `printf '%s' '${JSON.stringify({ ...declared('true'), agent: { command: agent } })}' > ${CONFIG}`);
    const workspace = await repo({ [CONFIG]: JSON.stringify({ ...declared('exit 1'), agent: { command: agent } }) });
    const synced = await sandbox.run(['loop', 'sync', '-C', workspace.dir, '--json']);
    expect(synced.code, synced.stderr).toBe(0);
    const [loop] = (JSON.parse(synced.stdout) as { loops: { id: string }[] }).loops;
    const loopId = loop?.id ?? '';

    const first = await waitUntil('the first run to finish', () => readGoals(sandbox).find((goal) => goal.loopId === loopId && isFinished(goal)));
    expect(first).toMatchObject({ status: 'failed', reason: 'max-turns' });
    expect(first.heldConfig?.settings).toContain('loops');
    await waitUntil('the next run to be refused', async () => {
      const listed = (await listLoops(sandbox)).loops.find((candidate) => candidate.id === loopId);
      return listed?.configError?.includes('held, not applied') === true;
    });
    await expectToHold('no second run with the rewritten check', 2_500, () => readGoals(sandbox).filter((goal) => goal.loopId === loopId).length === 1);
    expect(readGoals(sandbox).some((goal) => goal.status === 'achieved')).toBe(false);
  });
});

describe('goald edit', () => {
  it("changes a live goal's limits and checks from its next turn, recorded in its history", async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['steps are recorded', '-C', workspace.dir, '--check', 'exit 1', '--max-turns', '10', '--cooldown', '0', '--agent', gate.command]);
    await waitForPidFile(gate.agentPidFile(1));

    const edited = await sandbox.run(['edit', id, '--max-turns', '2', '--check', stepsCheck(1), '--json']);
    expect(edited.stderr).toBe('');
    expect(edited.code).toBe(0);
    const reply = JSON.parse(edited.stdout) as { resumed: boolean; changes: { setting: string; from: unknown; to: unknown }[] };
    expect(reply.resumed).toBe(false);
    expect(reply.changes).toEqual(
      expect.arrayContaining([
        { setting: 'limits.maxTurns', from: 10, to: 2 },
        expect.objectContaining({ setting: 'checks' }),
      ]),
    );
    await gate.open(1);
    await waitForPidFile(gate.agentPidFile(2));
    expect(await promptOf(sandbox, id, 2)).toContain('=== GOAL RECITATION (turn 2 of 2) ===');
    await gate.open(2);
    const finished = await waitForFinished(sandbox, id);
    expect(finished.status).toBe('achieved');
    const turns = await readTurns(sandbox, id);
    // Turn 1 kept the check it started with; turn 2 ran the edited one.
    expect(turns.map((turn) => [turn.turn, turn.checks.map((check) => check.passed)])).toEqual([
      [0, [false]],
      [1, [false]],
      [2, [true]],
    ]);
    expect(finished.edits).toEqual([expect.objectContaining({ by: 'goald edit', resumed: false })]);
    expect(finished.request).toMatchObject({ flags: { maxTurns: '2', check: [stepsCheck(1)] } });
    const show = await sandbox.run(['show', id]);
    expect(show.stdout).toMatch(/by goald edit\n\s+checks \[exit 1\] → \[.*steps\.txt.*\]/);
    expect(show.stdout).toContain('limits.maxTurns 10 → 2');
  });

  it('--resume reopens a goal that ran out of turns: same id, turns continue, and it can be achieved', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const agent = 'echo "$GOALD_TURN" >> steps.txt';
    const { id } = await submitGoal(sandbox, ['three steps are recorded', '-C', workspace.dir, '--check', stepsCheck(3), '--max-turns', '2', '--cooldown', '0', '--agent', agent]);
    const failed = await waitForFinished(sandbox, id);
    expect(failed).toMatchObject({ status: 'failed', reason: 'max-turns' });

    expectOneLineError(await sandbox.run(['edit', id]), /--resume|--max-turns/);
    expectOneLineError(await sandbox.run(['edit', id, '--token-budget', '900000']), /already failed \(max-turns\).*--max-turns <more> --resume/);
    expectOneLineError(await sandbox.run(['edit', id, '--resume']), /failed on max-turns \(limit 2\): --resume needs a higher --max-turns/);
    expectOneLineError(await sandbox.run(['edit', id, '--max-turns', '2', '--resume']), /needs a higher --max-turns/);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'failed', reason: 'max-turns' });

    const resumed = await sandbox.run(['edit', id, '--max-turns', '4', '--resume']);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`goal ${id} reopened`);
    expect(resumed.stdout).toContain('limits.maxTurns 2 → 4');
    const achieved = await waitForGoal(sandbox, id, 'to be achieved', (goal) => goal.status === 'achieved');
    expect(achieved).toMatchObject({ reason: null, reasonMessage: null, finishedAt: expect.any(String) as unknown });
    expect(Date.parse(achieved.finishedAt ?? '')).toBeGreaterThan(Date.parse(failed.finishedAt ?? ''));
    expect(achieved.summary.turns).toBe(3);
    const turns = await readTurns(sandbox, id);
    expect(turns.map((turn) => turn.turn)).toEqual([0, 1, 2, 3]);
    // The breakers' counters were kept: turn 3 counts three turns.
    expect(turns.at(-1)?.breakers.turns).toBe(3);
    expect(await readFile(workspace.path('steps.txt'), 'utf8')).toBe('1\n2\n3\n');
    expect(await promptOf(sandbox, id, 3)).toContain('(turn 3 of 4)');
    expect(achieved.edits).toEqual([expect.objectContaining({ by: 'goald edit', resumed: true, changes: [{ setting: 'limits.maxTurns', from: 2, to: 4 }] })]);
    // goal.finished is emitted right after the record is stored.
    const events = await waitUntil('the second goal.finished', async () => {
      const all = await eventsOf(sandbox, id);
      return all.filter((event) => event.type === 'goal.finished').length === 2 ? all : undefined;
    });
    expect(events.map((event) => event.type).filter((type) => type === 'goal.finished' || type === 'goal.edited')).toEqual(['goal.finished', 'goal.edited', 'goal.finished']);
    // `logs` follows the reopened run to its real end, not the superseded one.
    const logs = await sandbox.run(['logs', id, '--json']);
    expect(parseJsonLines(logs.stdout).at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved', turns: 3 });
  });

  it('refuses edits that cannot apply with exit 2 and one line', async () => {
    const workspace = await repo();
    const sandbox = await goaldSandbox();
    const met = await sandbox.run(['start', 'already met', '-C', workspace.dir, '--check', 'true', '--agent', 'true', '--wait']);
    expect(met.code, met.stderr).toBe(0);
    const metId = readGoals(sandbox)[0]?.id ?? '';
    expectOneLineError(await sandbox.run(['edit', metId, '--max-turns', '5']), /already achieved/);
    expectOneLineError(await sandbox.run(['edit', metId, '--max-turns', '5', '--resume']), /is achieved; --resume reopens only a goal that failed on a budget breaker/);

    const gate = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['steps', '-C', workspace.dir, '--check', 'exit 1', '--cooldown', '0', '--agent', gate.command]);
    await waitForPidFile(gate.agentPidFile(1));
    expectOneLineError(await sandbox.run(['edit', id]), /needs something to change/);
    expectOneLineError(await sandbox.run(['edit', id, '--max-turns', 'lots']), /--max-turns/);
    expectOneLineError(await sandbox.run(['edit', id, '--evaluator', 'gpt']), /--evaluator: "gpt" is not an evaluator/);
    expectOneLineError(await sandbox.run(['edit', id, '--evaluator', 'none', '--check', '']), /--check: the command is empty/);
    expectOneLineError(await sandbox.run(['edit', id, '--apply-config']), /no edit of .*goal\.config\.json is held/);
    expectOneLineError(await sandbox.run(['edit', id, '--max-turns', '5', '--resume']), /is active; --resume reopens only/);
    expectOneLineError(await sandbox.run(['edit', id, '--agent', 'x']), /unknown option '--agent'/);
    expect(readGoal(sandbox, id).edits).toBeUndefined();

    const stopped = await sandbox.run(['stop', id]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expectOneLineError(await sandbox.run(['edit', id, '--max-turns', '50', '--resume']), /failed on stopped, not on a budget breaker/);
    expect(isFinished(readGoal(sandbox, id))).toBe(true);
  });
});

describe('owner edits of goal.config.json while no turn runs', () => {
  it('apply as before when made while the goal is paused', async () => {
    const workspace = await repo({ [CONFIG]: JSON.stringify({ limits: { maxTurns: 50, cooldown: '0' } }) });
    const sandbox = await goaldSandbox();
    const gate = gatedAgent(sandbox.root);
    const { id } = await submitGoal(sandbox, ['steady progress', '-C', workspace.dir, '--check', 'exit 1', '--agent', gate.command]);
    await waitForPidFile(gate.agentPidFile(1));
    expect((await sandbox.run(['pause', id])).code).toBe(0);
    await gate.open(1);
    await waitForGoal(sandbox, id, 'to pause', (goal) => goal.status === 'paused');

    await writeFile(workspace.path(CONFIG), JSON.stringify({ limits: { maxTurns: 2, cooldown: '0' } }));
    const edited = await waitForGoal(sandbox, id, 'to record the edit', (goal) => (goal.edits ?? []).length > 0);
    expect(edited.heldConfig ?? null).toBeNull();
    expect(edited.edits).toEqual([expect.objectContaining({ by: 'goal.config.json', changes: [{ setting: 'limits.maxTurns', from: 50, to: 2 }] })]);
    expect((await sandbox.run(['resume', id])).code).toBe(0);
    await waitForPidFile(gate.agentPidFile(2));
    expect(await promptOf(sandbox, id, 2)).toContain('(turn 2 of 2)');
    await gate.open(2);
    expect(await waitForFinished(sandbox, id)).toMatchObject({ status: 'failed', reason: 'max-turns' });
    await waitUntil('the log line', async () => (await daemonLog(sandbox)).includes(`goal ${id}: configuration updated; applies from the next turn`));
  });
});
