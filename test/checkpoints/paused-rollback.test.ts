// `goald rollback` of a paused goal goes through its supervisor (the daemon's route calls this): the files
// come back as turn 1 left them, the next turn starts from there and its prompt says so.

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedAgent, setup, waitForEvent } from '../supervisor/support.js';

describe('rollback of a paused goal', () => {
  it('restores turn 1 between turns, refuses while active, and the next turn starts from it', async () => {
    const seen: string[] = [];
    let pauseNow = (): void => undefined;
    const agent = new ScriptedAgent([
      async (input) => {
        seen.push(await readFile(path.join(input.workspace, 'app.js'), 'utf8').catch(() => '(none)'));
        await writeFile(path.join(input.workspace, 'app.js'), `v${input.turn}\n`);
        if (input.turn === 2) pauseNow(); // the owner pauses during turn 2: taken at its end
        return {};
      },
    ]);
    const goal = await setup({ checks: ['false'], agent, limits: { maxTurns: 3, noProgress: 0, stagnation: 0 } });
    await expect(goal.supervisor.rollback(0)).rejects.toThrow(/is active/);
    pauseNow = () => void goal.supervisor.pause(false);
    const running = goal.supervisor.run();
    await waitForEvent(goal.events, (event) => event.type === 'goal.paused');
    await expect(goal.supervisor.rollback(9)).rejects.toThrow(/has no turn 9/);
    const rollback = await goal.supervisor.rollback(1);
    expect(rollback).toMatchObject({ by: 'goald rollback', toTurn: 1, afterTurn: 2, written: ['app.js'], removed: [] });
    expect(await readFile(path.join(goal.workspace.root, 'app.js'), 'utf8')).toBe('v1\n');
    await goal.supervisor.resume();
    expect(await running).toMatchObject({ status: 'failed', breaker: 'max-turns' });
    expect(seen).toEqual(['(none)', 'v1\n', 'v1\n']);
    const prompt = await readFile(path.join(goal.store.goalDir(goal.goal.id), 'turn-3.prompt.txt'), 'utf8');
    expect(prompt).toContain('# Rolled back to turn 1');
    expect(prompt).toContain('The owner rolled the files back to how turn 1 left them (goald rollback) after turn 2.');
    // Turn 3's own delta is its change from the restored tree, not the rollback's.
    expect((await goal.turns()).at(-1)?.files.map((file) => file.path)).toEqual(['app.js']);
  });
});
