// End to end: `goald watch` in a real terminal (tmux, 100×30) against a real daemon and two scripted goals.
// Keys go in with send-keys, the screen comes back with capture-pane: the list, selecting with j/k, pausing
// with p, resuming with r, stopping with s s, and q leaving the last frame on the screen. The scripted agent
// is hostile: its verdict-free turns print terminal escapes into a file it names, which the view shows as
// text. And `--once` prints one frame; with no goals, the empty state.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readGoal, submitGoal, waitForGoal } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldBin, goaldSandbox, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

const run = promisify(execFile);

interface Terminal {
  keys(...keys: string[]): Promise<void>;
  screen(): Promise<string>;
  waitFor(what: string, predicate: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
}

// A tmux server of this test's own (-L), so nothing else's sessions are touched; killed when the test ends.
async function openTerminal(sandbox: GoaldSandbox, args: string[]): Promise<Terminal> {
  const server = `goald-watch-${process.pid}-${Date.now()}`;
  const env = Object.entries(sandbox.env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && /^(GOALD_|HOME$|XDG_|PATH$)/.test(entry[0]))
    .flatMap(([name, value]) => ['-e', `${name}=${value}`]);
  const tmux = (...tmuxArgs: string[]): Promise<{ stdout: string }> => run('tmux', ['-L', server, '-f', '/dev/null', ...tmuxArgs], { cwd: sandbox.root });
  await tmux('new-session', '-d', '-x', '100', '-y', '30', '-s', 'w', ...env, process.execPath, goaldBin, ...args);
  // The pane stays after goald exits, so its last frame can be read.
  await tmux('set-option', '-t', 'w', 'remain-on-exit', 'on');
  onTestFinished(async () => {
    await tmux('kill-server').catch(() => undefined);
  });
  const screen = async (): Promise<string> => (await tmux('capture-pane', '-p', '-t', 'w')).stdout;
  return {
    keys: async (...keys) => {
      await tmux('send-keys', '-t', 'w', ...keys);
    },
    screen,
    waitFor: (what, predicate, timeoutMs = 15_000) =>
      waitUntil(what, async () => {
        const text = await screen();
        return predicate(text) ? text : undefined;
      }, timeoutMs),
  };
}

// Every turn: a little work, a file whose name holds an OSC title escape, and a check that never passes.
const HOSTILE_AGENT = `sleep 0.3; printf "$GOALD_TURN" > "$(printf 'evil\\033]0;pwned\\007.txt')"; echo "$GOALD_TURN" >> turns.txt`;

async function startGoal(sandbox: GoaldSandbox, condition: string): Promise<string> {
  const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  const { id } = await submitGoal(sandbox, [
    condition, '-C', workspace.dir, '--cooldown', '0', '--max-turns', '200', '--evaluator', 'none', '--check', 'test -f never', '--agent', HOSTILE_AGENT,
  ]);
  return id;
}

describe('goald watch in a real terminal', () => {
  it('lists goals, selects with j/k, pauses, resumes and stops the selected one, and leaves the last frame on q', async () => {
    const sandbox = await goaldSandbox();
    const first = await startGoal(sandbox, 'first goal makes never exist');
    const second = await startGoal(sandbox, 'second goal makes never exist');
    await waitForGoal(sandbox, second, 'to run a turn', (goal) => goal.summary.turns >= 1);

    const term = await openTerminal(sandbox, ['watch']);
    let screen = await term.waitFor('both goals listed and a detail pane', (text) => text.includes(first.slice(0, 10)) && text.includes(second.slice(0, 10)) && text.includes('Goal: '));
    expect(screen).toContain('↑↓/j/k select · p pause · P pause now · r resume · s stop · g guidance · l logs · q quit');
    expect(screen).toContain('tokens/turn');
    // The hostile file name is shown as text: the escape is written out, the terminal title untouched.
    screen = await term.waitFor('the hostile file name, escaped', (text) => text.includes('evil\\u001b]0;pwned\\u0007.txt'));
    expect(screen).not.toContain('\u001b');

    // Newest first: the second goal is selected; j moves to the first, k back.
    const selectedLine = (text: string): string => text.split('\n').find((line) => line.startsWith('›')) ?? '';
    expect(selectedLine(screen)).toContain(second.slice(0, 10));
    await term.keys('j');
    await term.waitFor('the first goal selected', (text) => selectedLine(text).includes(first.slice(0, 10)));
    await term.keys('k');
    await term.waitFor('the second goal selected again', (text) => selectedLine(text).includes(second.slice(0, 10)));

    await term.keys('p');
    await waitForGoal(sandbox, second, 'to be paused', (goal) => goal.status === 'paused');
    await term.waitFor('paused shown', (text) => selectedLine(text).includes('paused (requested)'));
    expect(readGoal(sandbox, first).status).toBe('active');

    await term.keys('r');
    await waitForGoal(sandbox, second, 'to run again', (goal) => goal.status === 'active');
    await term.waitFor('running again', (text) => !selectedLine(text).includes('paused'));

    // One s asks; a second stops.
    await term.keys('s');
    await term.waitFor('the stop question', (text) => text.includes(`stop goal ${second}? press s again`));
    expect(readGoal(sandbox, second).status).toBe('active');
    await term.keys('s');
    await waitForGoal(sandbox, second, 'to be stopped', (goal) => goal.status === 'failed' && goal.reason === 'stopped');
    screen = await term.waitFor('the stop reason and next action', (text) => text.includes('stopped: stopped') && text.includes('next: start it again when ready'));

    await term.keys('q');
    const last = await term.waitFor('goald watch exited, its last frame left', (text) => text.includes('Pane is dead') || text.includes('exited'));
    expect(last).toContain(second.slice(0, 10));
    expect(readGoal(sandbox, first).status).toBe('active'); // watching never disturbed the other goal
  });

  it('--once prints one frame and exits; an unknown goal exits 2; no goals shows the empty state', async () => {
    const sandbox = await goaldSandbox();
    const empty = await sandbox.run(['watch', '--once']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('goald watch: no goals yet.');
    const unknown = await sandbox.run(['watch', 'nosuchgoal', '--once']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no goal matches "nosuchgoal"');

    const id = await startGoal(sandbox, 'a goal to watch once');
    await waitForGoal(sandbox, id, 'to run a turn', (goal) => goal.summary.turns >= 1);
    const once = await sandbox.run(['watch', id, '--once']);
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toContain(`Goal: a goal to watch once`);
    expect(once.stdout).toMatch(/turn \d+\/200/);
    expect(once.stdout).not.toContain('\u001b');
  });
});
