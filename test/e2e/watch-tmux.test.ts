// End to end: `goald watch` in a real terminal (tmux, 100×30) against a real daemon and two scripted goals.
// Keys go in with send-keys, the screen comes back with capture-pane, and every lever's effect is read back
// from `goald status --json`: selecting with j/k and the arrows, p, r, P, g (guidance the next turn
// carries), l, s s, and q leaving the last frame on the screen; a terminal killed under goald watch ends it
// and the goal runs on. The scripted agent and the evaluator are
// hostile: the agent names a file with an OSC title escape, the evaluator's reason and remaining items carry
// OSC and CSI sequences; the view shows them as text and the terminal's title stays as it was. `--once`
// prints one frame (narrower with COLUMNS, with the loop's next run for a loop's goal, the loop a row of the
// list), an unknown goal exits 2, no goals gives the empty state, and
// without a terminal the live view refuses with exit 2.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { GoalRecord } from '../../state/types.js';
import { readTurns } from '../helpers/daemon.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { createLoop, isFinished, ONE_TURN, repo, waitForRuns } from '../helpers/loops.js';
import { waitUntilGone } from '../helpers/processes.js';
import { goaldBin, goaldSandbox, parseJsonLines, sandboxDaemonPid, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

const run = promisify(execFile);

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// What the pane's shell prints once goald watch has exited, with its exit status.
const EXITED = /\[goald watch exited: (\d+)\]/;

interface Terminal {
  keys(...keys: string[]): Promise<void>;
  screen(): Promise<string>;
  title(): Promise<string>;
  /** goald's pid (the pane's shell's child). */
  goaldPid(): Promise<number>;
  /** Ends the terminal: tmux's server goes, the pane's processes get SIGHUP. */
  kill(): Promise<void>;
  waitFor(what: string, predicate: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
}

// A tmux server of this test's own, its socket in the sandbox (removed with it: tmux leaves the file behind
// when its server is killed), so nothing else's sessions are touched; killed when the test ends.
//
// goald runs under `sh -c '…; echo [goald watch exited: $?]'`: the line after the last frame is the proof
// that goald exited and with what. tmux's own "Pane is dead" line is no proof: Debian's tmux is linked with
// libutempter, whose helper runs (with SIGCHLD set to SIG_DFL) as a pane's pty closes, so a pane process
// that exits at that moment is never reaped and the line never comes (seen as a zombie goald whose parent
// tmux waited on its utempter helper). CI and CONTINUOUS_INTEGRATION are unset in the pane: ink draws only
// its last frame when it believes it runs in CI.
let terminals = 0;
async function openTerminal(sandbox: GoaldSandbox, args: string[], extraEnv: Record<string, string> = {}): Promise<Terminal> {
  const socket = path.join(sandbox.root, `tmux-${++terminals}`);
  const env = Object.entries({ ...sandbox.env, ...extraEnv })
    .filter((entry): entry is [string, string] => entry[1] !== undefined && /^(GOALD_|HOME$|XDG_|PATH$|OPENAI_)/.test(entry[0]))
    .flatMap(([name, value]) => ['-e', `${name}=${value}`]);
  const tmux = (...tmuxArgs: string[]): Promise<{ stdout: string }> => run('tmux', ['-S', socket, '-f', '/dev/null', ...tmuxArgs], { cwd: sandbox.root });
  const script = 'unset CI CONTINUOUS_INTEGRATION; "$@"; echo "[goald watch exited: $?]"';
  // The pane stays after its shell exits (remain-on-exit, set before the pane starts), so the last frame can be read.
  await tmux('start-server', ';', 'set-option', '-wg', 'remain-on-exit', 'on', ';',
    'new-session', '-d', '-x', '100', '-y', '30', '-s', 'w', ...env, 'sh', '-c', script, 'sh', process.execPath, goaldBin, ...args);
  const serverPid = Number((await tmux('display-message', '-p', '-t', 'w', '#{pid}')).stdout.trim());
  onTestFinished(async () => {
    // By its socket; by its pid when the socket has gone first (and the pid is still this tmux).
    await tmux('kill-server').catch(() => {
      try {
        if (readFileSync(`/proc/${serverPid}/cmdline`, 'utf8').includes(socket)) process.kill(serverPid, 'SIGKILL');
      } catch {
        // gone already
      }
    });
  });
  const screen = async (): Promise<string> => (await tmux('capture-pane', '-p', '-t', 'w')).stdout;
  return {
    keys: async (...keys) => {
      await tmux('send-keys', '-t', 'w', ...keys);
    },
    screen,
    title: async () => (await tmux('display-message', '-p', '-t', 'w', '#{pane_title}')).stdout.trim(),
    goaldPid: async () => {
      const shell = Number((await tmux('display-message', '-p', '-t', 'w', '#{pane_pid}')).stdout.trim());
      return waitUntil('goald under the pane shell', () => Number(readFileSync(`/proc/${shell}/task/${shell}/children`, 'utf8').trim().split(' ')[0]) || undefined);
    },
    kill: async () => {
      await tmux('kill-server');
    },
    // A timeout shows the screen it last saw.
    waitFor: async (what, predicate, timeoutMs = 15_000) => {
      let last = '';
      try {
        return await waitUntil(what, async () => {
          last = await screen();
          return predicate(last) ? last : undefined;
        }, timeoutMs);
      } catch (error) {
        throw new Error(`${error instanceof Error ? error.message : String(error)}; the screen:\n${last}`, { cause: error });
      }
    },
  };
}

/** The goal as `goald status <id> --json` reports it. */
async function statusOf(sandbox: GoaldSandbox, id: string): Promise<GoalRecord> {
  const status = await sandbox.run(['status', id, '--json']);
  expect(status.code, status.stderr).toBe(0);
  const goal = (parseJsonLines(status.stdout)[0] as { goals: GoalRecord[] } | undefined)?.goals[0];
  if (goal === undefined) throw new Error(`goald status ${id} --json named no goal: ${status.stdout}`);
  return goal;
}

/** Waits until `goald status <id> --json` shows the goal in the state `predicate` wants. */
function waitForStatus(sandbox: GoaldSandbox, id: string, what: string, predicate: (goal: GoalRecord) => boolean): Promise<GoalRecord> {
  return waitUntil(`goal ${id} ${what} (goald status --json)`, async () => {
    const goal = await statusOf(sandbox, id);
    return predicate(goal) ? goal : undefined;
  }, 20_000);
}

// Every turn: a little work, a file whose name holds an OSC title escape, and a check that never passes.
const HOSTILE_AGENT = `sleep 0.3; printf "$GOALD_TURN" > "$(printf 'evil\\033]0;pwned\\007.txt')"; echo "$GOALD_TURN" >> turns.txt`;

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

async function startGoal(sandbox: GoaldSandbox, condition: string, evaluator: 'none' | 'openai'): Promise<string> {
  const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  const args = ['start', condition, '-C', workspace.dir, '--cooldown', '0', '--max-turns', '200', '--agent', HOSTILE_AGENT, '--json'];
  // The evaluator judges only turns whose checks pass; it never says met, and the same remaining item each
  // turn would trip no-progress after 4.
  const started = await sandbox.run(
    evaluator === 'none'
      ? [...args, '--check', 'test -f never', '--evaluator', 'none']
      : [...args, '--check', 'true', '--evaluator', 'openai:judge-model', '--no-progress', '1000'],
    { env: { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL } },
  );
  expect(started.code, started.stderr).toBe(0);
  const submitted = parseJsonLines(started.stdout).find((event) => event.type === 'goal.submitted');
  return String(submitted?.id);
}

describe('goald watch in a real terminal', () => {
  it('selects with j/k and arrows; p, r, P, g, l and s s act on the selected goal as status --json shows; q leaves the last frame; a dead terminal ends watch, not the goal', async () => {
    llm.reset();
    llm.openai.setDefault({ achieved: false, blocked: false, reason: 'not yet \u001b]0;owned\u0007 \u001b[2Jcleared', remaining: ['fix \u001b[31mred\u001b[0m'] });
    const sandbox = await goaldSandbox();
    const first = await startGoal(sandbox, 'first goal makes never exist', 'none');
    const second = await startGoal(sandbox, 'second goal makes never exist', 'openai');
    await waitForStatus(sandbox, second, 'to run a turn', (goal) => goal.summary.turns >= 1);

    const term = await openTerminal(sandbox, ['watch']);
    const titleBefore = await term.title();
    // Readiness: the hint line and a detail pane are drawn only from the daemon's first answer, which comes
    // after ink has put the terminal in raw mode and listens (both happen as the first frame mounts).
    let screen = await term.waitFor('both goals listed and a detail pane', (text) => text.includes(first.slice(0, 10)) && text.includes(second.slice(0, 10)) && text.includes('Goal: '));
    expect(screen).toContain('↑↓/j/k select · p pause · P pause now · r resume · s stop · g guidance · l logs · q quit');
    expect(screen).toContain('tokens/turn');
    // Hostile text is shown as text: the escapes are written out, the terminal's title untouched.
    screen = await term.waitFor('the hostile file name and verdict, escaped', (text) =>
      text.includes('evil\\u001b]0;pwned\\u0007.txt') && text.includes('evaluator: not yet \\u001b]0;owned\\u0007 \\u001b[2Jcleared'));
    expect(screen).toContain('remaining: fix \\u001b[31mred\\u001b[0m');
    expect(await term.title()).toBe(titleBefore);
    expect(await term.title()).not.toMatch(/owned|pwned/);

    // Newest first: the second goal is selected; j moves to the first, k back, and the arrows the same.
    const selectedLine = (text: string): string => text.split('\n').find((line) => line.startsWith('›')) ?? '';
    expect(selectedLine(screen)).toContain(second.slice(0, 10));
    await term.keys('j');
    await term.waitFor('j: the first goal selected', (text) => selectedLine(text).includes(first.slice(0, 10)) && text.includes('Goal: first goal'));
    await term.keys('k');
    await term.waitFor('k: the second goal selected again', (text) => selectedLine(text).includes(second.slice(0, 10)));
    await term.keys('Down');
    await term.waitFor('down arrow: the first goal', (text) => selectedLine(text).includes(first.slice(0, 10)));
    await term.keys('Up');
    await term.waitFor('up arrow: the second goal', (text) => selectedLine(text).includes(second.slice(0, 10)) && text.includes('Goal: second goal'));

    await term.keys('p');
    await waitForStatus(sandbox, second, 'paused by p', (goal) => goal.status === 'paused' && goal.pauseReason === 'requested');
    await term.waitFor('paused shown', (text) => selectedLine(text).includes('paused (requested)'));
    expect((await statusOf(sandbox, first)).status).toBe('active');

    await term.keys('r');
    await waitForStatus(sandbox, second, 'running again after r', (goal) => goal.status === 'active');
    await term.waitFor('running again', (text) => !selectedLine(text).includes('paused'));

    await term.keys('P');
    await waitForStatus(sandbox, second, 'paused at once by P', (goal) => goal.status === 'paused');
    await term.keys('r');
    await waitForStatus(sandbox, second, 'running again after the second r', (goal) => goal.status === 'active');

    // g: guidance typed in the prompt reaches the goal's next turn, as `goald say` would.
    await term.keys('g');
    await term.waitFor('the guidance prompt', (text) => text.includes(`guidance for ${second}`));
    await term.keys('-l', 'look at src/net first');
    await term.waitFor('typed', (text) => text.includes('look at src/net first'));
    await term.keys('Enter');
    await term.waitFor('guidance queued', (text) => text.includes(`goal ${second}: guidance queued`));
    await waitUntil('a turn carrying the guidance', async () =>
      (await readTurns(sandbox, second)).some((turn) => turn.guidance?.some((text) => text.includes('look at src/net first')) === true), 20_000);

    await term.keys('l');
    await term.waitFor('the log pane', (text) => text.includes('── log ──') && /turn \d+\/200 ·/.test(text.slice(text.indexOf('── log ──'))));
    await term.keys('l');
    await term.waitFor('the log pane closed', (text) => !text.includes('── log ──'));

    // One s asks; a second stops.
    await term.keys('s');
    await term.waitFor('the stop question', (text) => text.includes(`stop goal ${second}? press s again`));
    expect((await statusOf(sandbox, second)).status).toBe('active');
    await term.keys('s');
    await waitForStatus(sandbox, second, 'stopped by s s', (goal) => goal.status === 'failed' && goal.reason === 'stopped');
    await term.waitFor('the stop reason and next action', (text) => text.includes('stopped: stopped') && text.includes('next: start it again when ready'));

    await term.keys('q');
    const last = await term.waitFor('goald watch exited, its last frame left above', (text) => EXITED.test(text));
    expect(last.match(EXITED)?.[1]).toBe('0');
    const frame = last.slice(0, last.search(EXITED));
    expect(frame).toContain(second.slice(0, 10));
    expect(frame).toContain('next: start it again when ready');
    expect(frame).toContain('q quit');
    expect((await statusOf(sandbox, first)).status).toBe('active'); // watching never disturbed the other goal

    // A terminal that dies under a watching goald: goald goes with it, the goal it watched runs on.
    const again = await openTerminal(sandbox, ['watch', first]);
    await again.waitFor('watching the first goal', (text) => text.includes('Goal: first goal') && text.includes('q quit'));
    const watcher = await again.goaldPid();
    const turnsBefore = (await statusOf(sandbox, first)).summary.turns;
    await again.kill();
    await waitUntilGone(watcher, 10_000);
    await waitForStatus(sandbox, first, 'to run on after its watcher died', (goal) => goal.status === 'active' && goal.summary.turns > turnsBefore);
  });

  it('--once prints one frame and exits, narrower with COLUMNS, loops as rows; an unknown goal exits 2; no goals shows the empty state', async () => {
    const sandbox = await goaldSandbox();
    // Without a terminal (the test's pipes) only --once can work: exit 2 naming it, no daemon started for it.
    const piped = await sandbox.run(['watch']);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toBe('goald: goald watch needs a terminal, and its input is not one — for scripts: goald watch --once prints one frame\n');
    expect(sandboxDaemonPid(sandbox)).toBeNull();
    const empty = await sandbox.run(['watch', '--once']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('goald watch: no goals yet.');
    const unknown = await sandbox.run(['watch', 'nosuchgoal', '--once']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no goal or loop matches "nosuchgoal"');

    const id = await startGoal(sandbox, 'a goal to watch once', 'none');
    await waitForStatus(sandbox, id, 'to run a turn', (goal) => goal.summary.turns >= 1);
    const once = await sandbox.run(['watch', id, '--once']);
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toContain(`Goal: a goal to watch once`);
    expect(once.stdout).toMatch(/turn \d+\/200/);
    expect(once.stdout).toContain('tok');
    expect(once.stdout).toContain('evil\\u001b]0;pwned\\u0007.txt');
    expect(once.stdout).not.toContain('\u001b');

    const narrow = await sandbox.run(['watch', id, '--once'], { env: { COLUMNS: '50' } });
    expect(narrow.code, narrow.stderr).toBe(0);
    expect(narrow.stdout).toContain('j/k p P r s g l q');
    const rows = narrow.stdout.trimEnd().split('\n');
    for (const row of rows) expect([...row].length, row).toBeLessThanOrEqual(50);
    expect(rows.find((row) => row.includes(id.slice(0, 10)))).not.toContain(' tok');

    // A goal a loop started shows the loop's next run.
    const looped = await repo();
    const loop = await createLoop(sandbox, ['1d', 'a looped goal', '-C', looped.dir, ...ONE_TURN, '--agent', 'true']);
    expect((await sandbox.run(['loop', 'run', loop.id])).code).toBe(0);
    const [run] = await waitForRuns(sandbox, loop.id, 'one run finished', (goals) => goals.length === 1 && goals.every(isFinished));
    const loopFrame = await sandbox.run(['watch', String(run?.id), '--once']);
    expect(loopFrame.code, loopFrame.stderr).toBe(0);
    expect(loopFrame.stdout).toContain(`next loop run: ${new Date(loop.nextRunAt).toISOString().replace('T', ' ').slice(0, 16)} UTC`);
    expect(once.stdout).not.toContain('next loop run');
    // The loop is a row of the list, after the live goal and before the finished ones: its schedule, time
    // to its next run (a day less the time since it was armed: 1d 00h when that is under half a second,
    // rounded, else 23h 59m), its last run's status, the end of its workspace's path; wider, its condition too.
    const listed = await sandbox.run(['watch', '--once'], { env: { COLUMNS: '160' } });
    expect(listed.code, listed.stderr).toBe(0);
    const rows160 = listed.stdout.split('\n');
    const loopRow = rows160.findIndex((row) => row.includes(loop.id.slice(0, 10)));
    expect(rows160[loopRow]).toMatch(new RegExp(`^  ↻ ${loop.id.slice(0, 10)} +every 1d +in (?:23h \\d\\dm|1d 00h) +last ✖ failed +\\S*${escapeRegExp(path.basename(loop.workspace))} +a looped goal$`));
    expect(loopRow).toBeGreaterThan(rows160.findIndex((row) => row.includes(id.slice(0, 10))));
    expect(loopRow).toBeLessThan(rows160.findIndex((row) => row.includes(String(run?.id).slice(0, 10))));
    // A loop's id (or a prefix) selects its row: the detail pane is the loop's, with its last run.
    const selectedLoop = await sandbox.run(['watch', loop.id.slice(0, 8), '--once'], { env: { COLUMNS: '160' } });
    expect(selectedLoop.code, selectedLoop.stderr).toBe(0);
    expect(selectedLoop.stdout).toContain('Loop: a looped goal');
    expect(selectedLoop.stdout).toMatch(new RegExp(`last runs:\\n +✖ ${String(run?.id)} failed`));
    const neither = await sandbox.run(['watch', 'zzz', '--once']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('no goal or loop matches "zzz"');
  });
});
