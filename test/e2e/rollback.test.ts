// End to end: `goald rollback` on an in-place goal (a real scripted agent changed, added and removed files
// over three turns), its refusal when the user edited one of those files since, bad input, and an active
// goal. The user's other files are never touched.

import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readTurns, submitGoal, waitForGoal } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

// Turn n (counted in a file beside the sandbox) writes app.js as version n; turn 2 adds extra.js, turn 3
// deletes notes.txt. The check never passes, so the goal fails on max-turns after 3 turns.
const AGENT = (counter: string): string => `
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
const turn = existsSync(${JSON.stringify(counter)}) ? Number(readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1 : 1;
writeFileSync(${JSON.stringify(counter)}, String(turn));
writeFileSync('app.js', 'export const version = ' + turn + ';\\n');
if (turn === 2) writeFileSync('extra.js', 'export const extra = true;\\n');
if (turn === 3) rmSync('notes.txt');
`;

async function finishedGoal(): Promise<{ sandbox: GoaldSandbox; dir: string; id: string }> {
  const repo = await gitdir({ files: { 'app.js': 'export const version = 0;\n', 'notes.txt': 'keep me\n', 'README.md': '# demo\n' }, initialCommit: true });
  const sandbox = await goaldSandbox();
  const agent = path.join(sandbox.root, 'writer.mjs');
  await writeFile(agent, AGENT(path.join(sandbox.root, 'turns')));
  const run = await sandbox.run(['start', 'never met', '--foreground', '--json', '--cooldown', '0', '--max-turns', '3', '-C', repo.dir, '--check', 'false', '--agent', `node ${agent}`]);
  expect(run.code, run.stderr).toBe(1);
  return { sandbox, dir: repo.dir, id: String(parseJsonLines(run.stdout).at(-1)?.id) };
}

describe('goald rollback', () => {
  it("restores only the goal's files as turn n left them, and records it on the goal's history", async () => {
    const { sandbox, dir, id } = await finishedGoal();
    await writeFile(path.join(dir, 'mine.txt'), 'the user works on\n'); // not the goal's: left alone
    const run = await sandbox.run(['rollback', id, '--to-turn', '1', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'goal.rolled-back', id, toTurn: 1, afterTurn: 3, by: 'goald rollback', written: ['app.js', 'notes.txt'], removed: ['extra.js'] });
    expect(await readFile(path.join(dir, 'app.js'), 'utf8')).toBe('export const version = 1;\n');
    expect(await readFile(path.join(dir, 'notes.txt'), 'utf8')).toBe('keep me\n');
    expect(existsSync(path.join(dir, 'extra.js'))).toBe(false);
    expect(await readFile(path.join(dir, 'mine.txt'), 'utf8')).toBe('the user works on\n');

    // Then back to before the first turn: compared with what the first rollback left, not the last turn.
    const again = await sandbox.run(['rollback', id.slice(0, 6), '--to-turn', '0']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`goal ${id} rolled back to turn 0: 1 file restored, 0 removed: app.js\n`);
    expect(await readFile(path.join(dir, 'app.js'), 'utf8')).toBe('export const version = 0;\n');
    const shown = JSON.parse((await sandbox.run(['show', id, '--json'])).stdout) as { goal: { rollbacks: unknown[] } };
    expect(shown.goal.rollbacks).toEqual([
      expect.objectContaining({ by: 'goald rollback', toTurn: 1, afterTurn: 3, writtenCount: 2, removedCount: 1 }),
      expect.objectContaining({ by: 'goald rollback', toTurn: 0, afterTurn: 3, written: ['app.js'], removed: [] }),
    ]);
  });

  it('refuses (exit 2, nothing changed) when the user edited one of those files since', async () => {
    const { sandbox, dir, id } = await finishedGoal();
    await writeFile(path.join(dir, 'app.js'), 'export const version = "mine";\n');
    const run = await sandbox.run(['rollback', id, '--to-turn', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("goald: app.js changed since the goal's last turn; a rollback would overwrite that edit — commit, stash or move your edits (or undo them), then run the rollback again\n");
    expect(await readFile(path.join(dir, 'app.js'), 'utf8')).toBe('export const version = "mine";\n');
    expect(existsSync(path.join(dir, 'extra.js'))).toBe(true);
  });

  it('exits 2 for a turn that does not exist and for a missing or bad --to-turn', async () => {
    const { sandbox, id } = await finishedGoal();
    for (const [args, says] of [
      [['--to-turn', '7'], `goald: goal ${id} has no turn 7 (its turns are 0 to 3)`],
      [[], 'goald: goald rollback needs --to-turn <n>'],
      [['--to-turn', '-1'], 'goald: --to-turn: "-1" is not a turn number'],
    ] as const) {
      const run = await sandbox.run(['rollback', id, ...args]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(says);
    }
  });

  it('a paused goal rolled back keeps its rollback across a daemon restart: the next turn starts from it, and its prompt says so', async () => {
    const repo = await gitdir({ files: { 'app.js': 'export const version = 0;\n', 'notes.txt': 'keep me\n', 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    const writer = path.join(sandbox.root, 'writer.mjs');
    await writeFile(writer, AGENT(path.join(sandbox.root, 'turns')));
    const agent = `cp "$GOALD_PROMPT_FILE" ${sandbox.root}/prompt-$GOALD_TURN.txt; sleep 0.3; node ${writer}`;
    const { id } = await submitGoal(sandbox, ['never met', '-C', repo.dir, '--cooldown', '0', '--max-turns', '20', '--check', 'false', '--evaluator', 'none', '--agent', agent]);
    await waitForGoal(sandbox, id, 'ran two turns', (goal) => goal.summary.turns >= 2);
    expect((await sandbox.run(['pause', id])).code).toBe(0);
    const paused = await waitForGoal(sandbox, id, 'paused', (goal) => goal.status === 'paused');
    const rollback = await sandbox.run(['rollback', id, '--to-turn', '1']);
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(await readFile(path.join(repo.dir, 'app.js'), 'utf8')).toBe('export const version = 1;\n');

    expect((await sandbox.run(['daemon', 'stop'])).code).toBe(0);
    expect((await sandbox.run(['daemon'])).code).toBe(0);
    expect((await sandbox.run(['resume', id])).code).toBe(0);
    const next = paused.summary.turns + 1;
    const prompt = await waitUntil(`turn ${next}'s prompt`, () => (existsSync(path.join(sandbox.root, `prompt-${next}.txt`)) ? readFile(path.join(sandbox.root, `prompt-${next}.txt`), 'utf8') : undefined), 15_000);
    expect(prompt).toContain('# Rolled back to turn 1');
    await waitForGoal(sandbox, id, `ran turn ${next}`, (goal) => goal.summary.turns >= next);
    // The turn's delta starts from the restored tree (extra.js was gone there already), not from the last turn's.
    const changed = (await readTurns(sandbox, id)).find((turn) => turn.turn === next)?.files.map((file) => file.path);
    expect(changed).toContain('app.js');
    expect(changed).not.toContain('extra.js');
    await sandbox.run(['stop', id]);
  });

  it('refuses an active goal (exit 2): it must be paused first', async () => {
    const repo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    const forever = fileURLToPath(new URL('../fixtures/agents/forever.mjs', import.meta.url));
    const started = await sandbox.run(['start', 'x', '-C', repo.dir, '--check', 'false', '--agent', `node ${forever}`, '--json']);
    expect(started.code, started.stderr).toBe(0);
    const id = String(parseJsonLines(started.stdout)[0]?.id);
    const run = await sandbox.run(['rollback', id, '--to-turn', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^goald: goal ${id} is active: its agent may be writing the files — pause it first: goald pause ${id}, then goald rollback\\n$`));
    await sandbox.run(['stop', id]);
  });
});
