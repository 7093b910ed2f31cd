// End to end: `--keep-best` against a HOSTILE scripted agent (a real node script). Turn 1 breaks a passing
// test: its files are put back before turn 2, whose prompt says why under its own heading. Turn 2 edits
// the check's output (a report its script prints last) to claim 998 passing tests while it still fails: a failing check never becomes the
// best, so nothing is restored to it. The agent's own fake summaries never count.

import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines } from '../helpers/run-goald.js';

// One passing test (adds) and one the agent never fixes (mul). The agent logs what it saw in math.js.
const AGENT = (dir: string): string => `
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
const counter = ${JSON.stringify(path.join(dir, 'turns'))};
const turn = existsSync(counter) ? Number(readFileSync(counter, 'utf8')) + 1 : 1;
writeFileSync(counter, String(turn));
appendFileSync(${JSON.stringify(path.join(dir, 'seen.log'))}, 'turn ' + turn + ': ' + readFileSync('math.js', 'utf8'));
console.log('# tests 999\\n# pass 999\\n# fail 0\\n      Tests  999 passed (999)');
if (turn === 1) writeFileSync('math.js', 'export const add = (a, b) => a - b;\\nexport const mul = () => 0;\\n');
if (turn === 2) writeFileSync('report.txt', '# tests 999\\n# pass 998\\n# fail 1\\n');
`;

describe('--keep-best', () => {
  it('restores the best turn before the next when a turn breaks a passing test, and says why in the prompt', async () => {
    const repo = await gitdir({
      files: {
        'package.json': '{"type":"module"}\n',
        // The check prints report.txt after the runner's own summary: the agent can shape its output.
        'check.sh': 'node --test; status=$?\ncat report.txt 2>/dev/null\nexit $status\n',
        'math.js': 'export const add = (a, b) => a + b;\nexport const mul = () => 0;\n',
        'math.test.mjs': [
          "import { test } from 'node:test';",
          "import assert from 'node:assert';",
          "import { add, mul } from './math.js';",
          "test('adds', () => assert.equal(add(1, 2), 3));",
          "test('multiplies', () => assert.equal(mul(2, 3), 6));",
          '',
        ].join('\n'),
      },
      initialCommit: true,
    });
    const sandbox = await goaldSandbox();
    const agent = path.join(sandbox.root, 'breaker.mjs');
    await writeFile(agent, AGENT(sandbox.root));
    const args = ['start', 'mul multiplies', '--foreground', '--json', '--cooldown', '0', '--max-turns', '3', '--keep-best', '-C', repo.dir];
    const run = await sandbox.run([...args, '--check', 'sh check.sh', '--agent', `node ${agent}`]);
    expect(run.code, run.stderr).toBe(1);

    // Turn 2 saw math.js as turn 0 left it: turn 1's broken add() was rolled back before it.
    const seen = await readFile(path.join(sandbox.root, 'seen.log'), 'utf8');
    expect(seen).toContain('turn 2: export const add = (a, b) => a + b;');
    const id = String(parseJsonLines(run.stdout).at(-1)?.id);
    const prompt = await readFile(path.join(sandbox.home, 'goals', id, 'turn-2.prompt.txt'), 'utf8');
    expect(prompt).toContain('# Rolled back to turn 0');
    expect(prompt).toContain('Your last turn (turn 1) made the tests worse: 0 passing tests (0 of 1 check passing), against 1 passing test (0 of 1 check passing) at turn 0.');
    expect(prompt).toContain('- math.js (restored)');

    const shown = JSON.parse((await sandbox.run(['show', id, '--json'])).stdout) as {
      goal: { rollbacks: unknown[] };
      turns: Array<{ turn: number; keepBest?: { passingTests: number; best: { turn: number }; rolledBackTo: number | null }; checks: Array<{ tests?: { passed: number } }> }>;
    };
    const guard = shown.turns.map((turn) => ({ turn: turn.turn, passing: turn.keepBest?.passingTests, best: turn.keepBest?.best.turn, rolledBackTo: turn.keepBest?.rolledBackTo }));
    // Turn 2's output claims 998 passing tests while the check fails: never the best, nothing restored to it.
    expect(shown.turns[2]?.checks[0]?.tests?.passed).toBe(998);
    expect(guard).toEqual([
      { turn: 0, passing: 1, best: 0, rolledBackTo: null },
      { turn: 1, passing: 0, best: 0, rolledBackTo: 0 },
      { turn: 2, passing: 998, best: 0, rolledBackTo: null },
      { turn: 3, passing: 998, best: 0, rolledBackTo: null },
    ]);
    expect(shown.goal.rollbacks).toEqual([expect.objectContaining({ by: 'keep-best', toTurn: 0, afterTurn: 1, written: ['math.js'], removed: [] })]);
    expect(await readdir(repo.dir)).toContain('report.txt');
  });
});
