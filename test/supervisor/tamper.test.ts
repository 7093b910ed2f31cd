// The tamper guard inside the turn pipeline: real git snapshots and checks, a scripted structured agent
// (its tool calls say what it wrote) and a scripted evaluator, so attribution and evidence can be driven.

import { readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnInput } from '../../src/agents/types.js';
import { ScriptedAgent, ScriptedEvaluator, setup, verdict, type Step } from './support.js';

const CONFIG = 'goal.config.json';

// Makes the check pass and rewrites goal.config.json; `reported` says whether the adapter saw the write.
function passAndRewriteConfig(reported: boolean): Step {
  return async (input: TurnInput) => {
    await writeFile(path.join(input.workspace, 'done.txt'), `turn ${input.turn}\n`);
    await writeFile(path.join(input.workspace, CONFIG), JSON.stringify({ checks: [{ run: 'true' }], limits: { maxTurns: 1000 } }));
    return reported ? { toolCalls: [{ name: 'Write', filePath: path.join(input.workspace, CONFIG) }] } : {};
  };
}

describe('the tamper guard in the pipeline', () => {
  it('never achieves a turn whose agent rewrote goal.config.json, asks for the revert, and stops at the second', async () => {
    const agent = new ScriptedAgent([passAndRewriteConfig(true)]);
    const { supervisor, events, turns, store, goal } = await setup({
      checks: ['test -f done.txt'],
      agent,
      files: { 'README.md': '# x\n', [CONFIG]: '{}\n' },
    });
    const outcome = await supervisor.run();
    expect(outcome).toMatchObject({ status: 'failed', breaker: 'tamper', turns: 2 });
    const finished = events.filter((event) => event.type === 'turn.finished');
    expect(finished.map((event) => event.tamper)).toEqual([
      [{ path: CONFIG, kind: 'config-edit', detail: "the agent modified the goal's config file itself" }],
      [{ path: CONFIG, kind: 'config-edit', detail: "the agent modified the goal's config file itself" }],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'failed', reason: 'tamper', breaker: 'tamper' });
    const records = await turns();
    expect(records[1]).toMatchObject({ achieved: false, tamper: [expect.objectContaining({ kind: 'config-edit' })] });
    expect(records[1]?.checks.every((check) => check.passed)).toBe(true);
    expect(records[2]?.trip).toMatchObject({ breaker: 'tamper', value: 2, limit: 2 });

    const second = await readFile(path.join(store.goalDir(goal.id), 'turn-2.prompt.txt'), 'utf8');
    expect(second).toContain('# Revert these changes');
    expect(second).toContain("- goal.config.json: config-edit, the agent modified the goal's config file itself");
    expect(second.slice(second.lastIndexOf('=== GOAL RECITATION'))).toContain('1 tamper turn; goald stops at 2');
    const stored = (await store.read()).goals.find((candidate) => candidate.id === goal.id);
    expect(stored?.summary.tamper).toEqual({ turns: 2, last: [expect.objectContaining({ path: CONFIG })] });
  });

  it('does not count a config change nobody claimed as tamper (it is held for the owner instead)', async () => {
    const agent = new ScriptedAgent([passAndRewriteConfig(false)]);
    const { supervisor, events, turns } = await setup({ checks: ['test -f done.txt'], agent, files: { 'README.md': '# x\n', [CONFIG]: '{}\n' } });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 1 });
    expect(events.find((event) => event.type === 'turn.finished')).toMatchObject({ tamper: [] });
    expect((await turns())[1]?.guardNotes).toEqual([expect.objectContaining({ path: CONFIG, kind: 'config-change' })]);
  });

  it('shows the evaluator the findings, and skips it when no verdict could change the outcome', async () => {
    const deleteTest: Step = async (input) => {
      await unlink(path.join(input.workspace, 'test', 'a.test.js'));
      await writeFile(path.join(input.workspace, 'done.txt'), 'done\n');
      return {};
    };
    const files = { 'test/a.test.js': "test('a', () => { expect(1).toBe(2); });\n" };
    const asked = new ScriptedEvaluator([() => verdict(true, 'looks done')]);
    const shown = await setup({ checks: ['test -f done.txt'], agent: new ScriptedAgent([deleteTest]), evaluator: asked, files, limits: { maxTurns: 1 } });
    // skipWhenChecksFail off: the evaluator is asked and sees the finding; its "achieved" changes nothing.
    shown.settings.evaluator.skipWhenChecksFail = false;
    expect(await shown.supervisor.run()).toMatchObject({ status: 'failed', breaker: 'max-turns' });
    expect(asked.inputs.at(-1)?.tamper).toEqual([{ path: 'test/a.test.js', kind: 'deleted-test', detail: 'test file deleted' }]);

    const skipped = new ScriptedEvaluator([() => verdict(true)]);
    const quiet = await setup({ checks: ['test -f done.txt'], agent: new ScriptedAgent([deleteTest]), evaluator: skipped, files, limits: { maxTurns: 1 } });
    expect(await quiet.supervisor.run()).toMatchObject({ status: 'failed' });
    expect(skipped.inputs).toEqual([]);
    expect((await quiet.turns())[1]?.evaluation).toMatchObject({ kind: 'skipped', reason: expect.stringContaining('tampered') });
  });

  it('finds nothing with the guard off', async () => {
    const agent = new ScriptedAgent([passAndRewriteConfig(true)]);
    const { supervisor, events } = await setup({
      checks: ['test -f done.txt'],
      agent,
      files: { 'README.md': '# x\n', [CONFIG]: '{}\n' },
      guard: { enabled: false },
    });
    expect(await supervisor.run()).toMatchObject({ status: 'achieved', turns: 1 });
    expect(events.find((event) => event.type === 'turn.finished')).toMatchObject({ tamper: [] });
  });
});
