// End to end, with the real bubblewrap and hostile scripted agents (test/fixtures/agents/sandbox-probe.mjs)
// run by the real daemon: a sandboxed turn cannot read the evaluator's key from goald's /proc environ,
// cannot write goald's state or the user's config, cannot kill goald, leaves no process behind, cannot
// write outside the workspace — and a helpful agent still installs a package and runs the tests.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectToHold, processState, readGoal, readTurns, submitGoal, waitForFinished, waitForGoal } from '../helpers/daemon.js';
import { waitUntil } from '../helpers/wait.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { isProcessRunning } from '../helpers/processes.js';
import { goaldSandbox, parseJsonLines, repoRoot, sandboxDaemonPid, type GoaldRun, type GoaldSandbox } from '../helpers/run-goald.js';
import { ACHIEVED } from '../evaluator/sample-input.js';
import { bashPayload } from '../hook/support.js';
import type { TurnRecord } from '../../src/supervisor/types.js';

const KEY = 'sk-proj-SandboxE2eKey0123456789abcdefGHIJKLmnop';
const probe = path.join(repoRoot, 'test', 'fixtures', 'agents', 'sandbox-probe.mjs');
const FAST = ['--cooldown', '0', '--max-turns', '1'];

interface Setup {
  sandbox: GoaldSandbox;
  workspace: string;
}

// `required`: a machine where bwrap does not work fails these tests instead of running the hostile agents bare.
async function setup(files: Record<string, string> = {}): Promise<Setup> {
  const repo = await gitdir({ files: { 'README.md': '# demo\n', ...files }, initialCommit: true });
  const sandbox = await goaldSandbox();
  sandbox.env.GOALD_SANDBOX = 'required';
  return { sandbox, workspace: repo.dir };
}

/** `goald start ... --wait --json` with the probe as the agent; the check passes once report.json exists. */
async function runProbe(setup: Setup, behaviour: string, args: string[] = [], options: { env?: NodeJS.ProcessEnv; extra?: string[] } = {}): Promise<{ run: GoaldRun; id: string; report: Record<string, unknown> }> {
  const agent = ['exec', process.execPath, probe, behaviour, ...args.map((arg) => `'${arg}'`)].join(' ');
  const run = await setup.sandbox.run(
    ['start', 'report.json exists', '-C', setup.workspace, ...FAST, '--agent', agent, '--check', 'test -f report.json', ...(options.extra ?? []), '--wait', '--json'],
    options.env ? { env: options.env } : {},
  );
  const events = parseJsonLines(run.stdout);
  const id = String(events.find((event) => event.type === 'goal.submitted')?.id);
  const reportFile = path.join(setup.workspace, 'report.json');
  const report = existsSync(reportFile) ? (JSON.parse(await readFile(reportFile, 'utf8')) as Record<string, unknown>) : {};
  return { run, id, report };
}

function expectAchieved(run: GoaldRun): void {
  expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
  expect(parseJsonLines(run.stdout).at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved' });
}

// A goal of up to three turns that ends once done.txt exists, run to its end: each turn's tamper findings
// (the pre-check's first), as "kind path".
async function tamperByTurn(context: Setup, agent: string): Promise<string[][]> {
  const run = await context.sandbox.run([
    'start', 'done.txt exists', '-C', context.workspace, '--cooldown', '0', '--max-turns', '3', '--agent', agent, '--check', 'test -f done.txt', '--wait', '--json',
  ]);
  expectAchieved(run);
  const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.submitted')?.id);
  return (await readTurns(context.sandbox, id)).map(tamperOf);
}

/** A turn record's tamper findings as "kind path". */
function tamperOf(turn: TurnRecord | undefined): string[] {
  return turn?.tamper?.map((finding) => `${finding.kind} ${finding.path}`) ?? [];
}

describe('a sandboxed turn (bubblewrap)', () => {
  it("cannot find the evaluator's key in any /proc/*/environ it can read: it sees only its own processes", async () => {
    const llm = await startFakeLlm();
    try {
      llm.openai.reply(ACHIEVED);
      const context = await setup();
      const { run, id, report } = await runProbe(context, 'environ', [], {
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: llm.openaiBaseURL },
        extra: ['--evaluator', 'openai:judge-model'],
      });
      expectAchieved(run);
      expect(report.found).toEqual([]);
      // Its own PID namespace: bwrap's init, the agent, nothing of goald's.
      const seen = report.seen as Array<{ pid: number; cmdline: string }>;
      expect(seen.length).toBeLessThanOrEqual(3);
      expect(seen.map((entry) => entry.cmdline).join('\n')).not.toContain('bin.js');
      // The key was real and in the daemon's environment: the evaluator was called with it.
      expect(llm.openai.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      const [, turn] = await readTurns(context.sandbox, id);
      expect(turn?.sandbox).toBe('bwrap');
    } finally {
      await llm.close();
    }
  });

  it("cannot write GOALD_HOME/state.json, the daemon's status snapshot or the user's config: goald's files are unchanged", async () => {
    const context = await setup();
    const { sandbox } = context;
    const userConfig = path.join(sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    const configText = `${JSON.stringify({ sandbox: { mode: 'required', network: true } })}\n`;
    await writeFile(userConfig, configText);
    const stateFile = path.join(sandbox.home, 'state.json');
    // What a plain `goald status` shows: a forged one could say the goal is gone (src/daemon/status-snapshot.ts).
    const statusFile = path.join(sandbox.home, 'status.json');
    const { run, id, report } = await runProbe(context, 'write-goald', [stateFile, statusFile, userConfig]);
    expectAchieved(run);
    const writes = report.writes as Record<string, string>;
    const deletes = report.deletes as Record<string, string>;
    for (const file of [stateFile, statusFile, userConfig]) {
      expect(writes[file], file).not.toBe('ok');
      expect(deletes[file], file).not.toBe('ok');
    }
    expect(await readFile(userConfig, 'utf8')).toBe(configText);
    const state = await readFile(stateFile, 'utf8');
    expect(state).not.toContain('hacked');
    expect(await readFile(statusFile, 'utf8').catch(() => '')).not.toContain('hacked');
    expect(readGoal(sandbox, id).status).toBe('achieved');
  });

  it('cannot kill goald: kill(-1) and SIGKILL to every pid it sees reach only its own sandbox', async () => {
    const context = await setup();
    const { run, report } = await runProbe(context, 'kill-all');
    expectAchieved(run);
    const daemon = sandboxDaemonPid(context.sandbox);
    expect(daemon).not.toBeNull();
    expect(isProcessRunning(daemon ?? 0)).toBe(true);
    const seen = report.seen as Array<{ pid: number }>;
    expect(seen.length).toBeLessThanOrEqual(2);
    // The same daemon answers the next command.
    const status = await context.sandbox.run(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
  });

  it('leaves no process behind: a setsid sleeper without the turn token is gone when the turn ends', async () => {
    const context = await setup();
    const marker = String(4_000_000 + Math.floor(Math.random() * 1_000_000));
    const { run, report } = await runProbe(context, 'setsid', [marker]);
    expectAchieved(run);
    expect(report.started).toBe(true);
    const sleepers = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
        } catch {
          return false;
        }
      })
      .filter((pid) => isProcessRunning(Number(pid)));
    expect(sleepers).toEqual([]);
  });

  it('cannot write outside the workspace: the rest is read-only, its /tmp private', async () => {
    const context = await setup();
    const inTmp = path.join(context.sandbox.root, 'escaped.txt');
    const inRepoRoot = path.join(repoRoot, 'sandbox-escaped.txt');
    const { run, report } = await runProbe(context, 'write-outside', [inRepoRoot, '/etc/goald-escaped', inTmp]);
    expectAchieved(run);
    const writes = report.writes as Record<string, string>;
    expect(writes[inRepoRoot]).toBe('EROFS');
    expect(writes['/etc/goald-escaped']).toBe('EROFS');
    // Its /tmp is its own: the write works there and vanishes with the turn.
    expect(writes[inTmp]).toBe('ok');
    for (const file of [inRepoRoot, '/etc/goald-escaped', inTmp]) expect(existsSync(file), file).toBe(false);
  });

  it('lets a helpful agent install a package into the workspace and run the tests (the check runs sandboxed too)', async () => {
    const context = await setup({
      'package.json': `${JSON.stringify({ name: 'demo', version: '1.0.0', private: true, scripts: { test: 'node -e "process.exit(require(\'./index.js\') === 42 ? 0 : 1)"' } })}\n`,
      'vendor/answer/package.json': `${JSON.stringify({ name: 'answer', version: '1.0.0', main: 'index.js' })}\n`,
      'vendor/answer/index.js': 'module.exports = 42;\n',
    });
    const run = await context.sandbox.run([
      'start', 'npm test passes', '-C', context.workspace, ...FAST,
      '--agent', `exec ${process.execPath} ${probe} helpful`, '--check', 'npm test', '--wait', '--json',
    ]);
    expectAchieved(run);
    const report = JSON.parse(await readFile(path.join(context.workspace, 'report.json'), 'utf8')) as Record<string, unknown>;
    expect(report.install).toBe('ok');
    expect(report.test).toBe('ok');
    expect(existsSync(path.join(context.workspace, 'node_modules', 'answer', 'index.js'))).toBe(true);
  });
});

describe('controlling a sandboxed turn', () => {
  it('pause --now stops the agent inside the sandbox (bwrap leads its process group), resume continues it', async () => {
    const context = await setup();
    // The agent waits for a gate file the test writes into the workspace (the one place both can reach).
    const agent = 'touch started; while [ ! -f gate ]; do sleep 0.02; done; echo done > out.txt';
    const { id } = await submitGoal(context.sandbox, ['out.txt exists', '-C', context.workspace, ...FAST, '--agent', agent, '--check', 'test -f out.txt']);
    await waitUntil('the agent to start', () => existsSync(path.join(context.workspace, 'started')) || undefined);
    const running = await waitForGoal(context.sandbox, id, 'to record its agent', (goal) => goal.runningAgent !== null);
    const pid = running.runningAgent?.pid ?? 0;
    const paused = await context.sandbox.run(['pause', id, '--now']);
    expect(paused.code, paused.stderr).toBe(0);
    await waitUntil('bwrap to be stopped', () => processState(pid) === 'T' || undefined);
    await writeFile(path.join(context.workspace, 'gate'), '');
    // Stopped with its sandbox: the agent inside does not see the gate.
    await expectToHold('the agent to stay stopped', 500, () => !existsSync(path.join(context.workspace, 'out.txt')));
    const resumed = await context.sandbox.run(['resume', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const finished = await waitForFinished(context.sandbox, id);
    expect(finished.status).toBe('achieved');
    const turns = await readTurns(context.sandbox, id);
    expect(turns.at(-1)?.sandbox).toBe('bwrap');
  });
});

describe('stopping a sandboxed turn', () => {
  it('goald stop ends the sandbox and everything in it', async () => {
    const context = await setup();
    const { id } = await submitGoal(context.sandbox, ['never', '-C', context.workspace, ...FAST, '--agent', 'touch started; sleep 600', '--check', 'false']);
    await waitUntil('the agent to start', () => existsSync(path.join(context.workspace, 'started')) || undefined);
    const running = await waitForGoal(context.sandbox, id, 'to record its agent', (goal) => goal.runningAgent !== null);
    const stopped = await context.sandbox.run(['stop', id]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect((await waitForFinished(context.sandbox, id)).reason).toBe('stopped');
    expect(isProcessRunning(running.runningAgent?.pid ?? 0)).toBe(false);
  });
});

describe("Claude Code's PostToolUse hook inside the sandbox", () => {
  it("records the tool call in the turn's state directory (bound writable through the hidden GOALD_HOME)", async () => {
    // A `claude` that runs the hook as Claude Code would after a Bash call (in the environment the adapter
    // gives it: GOALD_HOOK_STATE_DIR), then prints a recorded stream.
    const goaldBin = path.join(repoRoot, 'dist', 'bundle', 'bin.js');
    const stream = path.join(repoRoot, 'test', 'fixtures', 'streams', 'claude-tools.jsonl');
    const claude = `#!/bin/sh\n${process.execPath} ${goaldBin} hook post-tool-use < payload.json && touch done.txt && cat ${stream}\n`;
    const context = await setup({ 'payload.json': bashPayload('npm test'), 'fake-claude': claude });
    execFileSync('chmod', ['+x', path.join(context.workspace, 'fake-claude')]);
    const run = await context.sandbox.run(['start', 'done.txt exists', '-C', context.workspace, ...FAST, '--adapter', 'claude-code', '--agent', path.join(context.workspace, 'fake-claude'), '--check', 'test -f done.txt', '--wait', '--json']);
    expectAchieved(run);
    const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.submitted')?.id);
    expect((await readTurns(context.sandbox, id))[0]).toMatchObject({ sandbox: 'bwrap' });
    const stateDir = path.join(context.sandbox.home, 'goals', id, 'turn-1.state');
    const calls = (await readFile(path.join(stateDir, 'tool-calls.jsonl'), 'utf8')).trim().split('\n');
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0] ?? '{}')).toMatchObject({ name: 'Bash', command: 'npm test' });
    expect(existsSync(path.join(stateDir, 'hook-errors.log'))).toBe(false);
  });

  it("writes its own state, but not a configuration file you named in sandbox.readable (README's Limit)", async () => {
    const stream = path.join(repoRoot, 'test', 'fixtures', 'streams', 'claude-tools.jsonl');
    // A hostile turn: a hook for your next interactive `claude` in ~/.claude/settings.json, beside a state write.
    const claude = `#!/bin/sh\n(echo '{"hooks":{"PreToolUse":[]}}' > "$HOME/.claude/settings.json") 2>>denied.log; echo state > "$HOME/.claude/other.txt"; touch done.txt; cat ${stream}\n`;
    const context = await setup({ 'fake-claude': claude });
    execFileSync('chmod', ['+x', path.join(context.workspace, 'fake-claude')]);
    const settings = path.join(context.sandbox.root, '.claude', 'settings.json');
    await mkdir(path.dirname(settings), { recursive: true });
    await writeFile(settings, '{}\n');
    const userConfig = path.join(context.sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { readable: ['~/.claude/settings.json'] } }));
    const run = await context.sandbox.run(['start', 'done.txt exists', '-C', context.workspace, ...FAST, '--adapter', 'claude-code', '--agent', path.join(context.workspace, 'fake-claude'), '--check', 'test -f done.txt', '--wait', '--json']);
    expectAchieved(run);
    expect(await readFile(settings, 'utf8')).toBe('{}\n');
    expect(await readFile(path.join(context.sandbox.root, '.claude', 'other.txt'), 'utf8')).toBe('state\n');
    expect(await readFile(path.join(context.workspace, 'denied.log'), 'utf8')).toMatch(/read-only/i);
  });

  it('a command agent keeps no turn state: no directory is made for it', async () => {
    const context = await setup();
    const run = await context.sandbox.run(['start', 'done.txt exists', '-C', context.workspace, ...FAST, '--agent', 'touch done.txt', '--check', 'test -f done.txt', '--wait', '--json']);
    expectAchieved(run);
    const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.submitted')?.id);
    const goalDir = path.join(context.sandbox.home, 'goals', id);
    expect(existsSync(path.join(goalDir, 'turn-1.prompt.txt'))).toBe(true);
    expect(readdirSync(goalDir).filter((name) => name.endsWith('.state'))).toEqual([]);
  });
});

// direnv's `PATH_add bin` (or `./node_modules/.bin` on PATH) puts a directory of the workspace on PATH: an
// agent that writes a `sh`, `git` or `find` there must not have it run as goald, outside its sandbox.
describe("goald's own programs never come from where an agent writes", () => {
  const plant = (tool: string, marker: string): string =>
    `printf '#!/bin/sh\\ntouch ${marker}\\nexit 0\\n' > bin/${tool} && chmod +x bin/${tool}`;
  for (const sandboxed of [true, false]) {
    it(`a check run by a planted sh, snapshots by a planted git, the look by a planted find: none of them (${sandboxed ? 'sandboxed' : '--no-sandbox'})`, async () => {
      const context = await setup();
      const markers = path.join(context.sandbox.root, 'ran');
      await mkdir(markers);
      const agent = [
        'mkdir -p bin',
        plant('sh', path.join(markers, 'sh')),
        plant('git', path.join(markers, 'git')),
        plant('find', path.join(markers, 'find')),
        // The second turn makes the real check pass, so the look at ignored files runs too.
        'if [ "$GOALD_TURN" = 2 ]; then touch done.txt; fi',
      ].join(' && ');
      const env = { PATH: `${path.join(context.workspace, 'bin')}${path.delimiter}${process.env.PATH ?? ''}` };
      const flags = sandboxed ? [] : ['--no-sandbox'];
      const run = await context.sandbox.run(
        ['start', 'done.txt exists', '-C', context.workspace, '--cooldown', '0', '--max-turns', '3', '--agent', agent, '--check', 'test -f done.txt', ...flags, '--foreground', '--json'],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      const events = parseJsonLines(run.stdout);
      // Turn 1 planted the tools and its check failed (with the planted sh, `exit 0` would have passed it).
      const checksPassed = events.filter((event) => event.type === 'turn.finished').map((event) => (event.checks as Array<{ passed: boolean }>)[0]?.passed);
      expect(checksPassed).toEqual([false, true]);
      expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved', turns: 2 });
      expect(readdirSync(markers)).toEqual([]);
    });
  }
});

describe("a sandboxed turn and your repository's git", () => {
  it('cannot change what git runs for you later (config, hooks), and can still commit', async () => {
    const context = await setup();
    const marker = path.join(context.sandbox.root, 'pwned');
    const agent = [
      `git config core.fsmonitor 'touch ${marker}' 2>>denied.log`,
      `(printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout) 2>>denied.log`,
      'echo x > f.txt && git add f.txt && git -c user.name=a -c user.email=a@example.com commit -qm agent',
      'touch done.txt',
    ].join('; ');
    const run = await context.sandbox.run(['start', 'done.txt exists', '-C', context.workspace, ...FAST, '--agent', agent, '--check', 'test -f done.txt', '--wait', '--json']);
    expectAchieved(run);
    expect(execFileSync('git', ['-C', context.workspace, 'log', '--format=%s', '-1'], { encoding: 'utf8' }).trim()).toBe('agent');
    expect(await readFile(path.join(context.workspace, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
    expect(existsSync(path.join(context.workspace, '.git', 'hooks', 'post-checkout'))).toBe(false);
    expect((await readFile(path.join(context.workspace, 'denied.log'), 'utf8')).split('\n').filter((line) => line !== '')).toHaveLength(2);
    execFileSync('git', ['-C', context.workspace, 'status'], { stdio: 'ignore' });
    expect(existsSync(marker)).toBe(false);
  });

  it('cannot point your git elsewhere: .git stays where it is, and a commondir made in it is removed as tamper', async () => {
    const context = await setup();
    const marker = path.join(context.sandbox.root, 'pwned');
    // Turn 1 tries both ways: .git moved aside (and a new one made), and a commondir naming a git
    // directory of its own whose config runs the marker; turn 2 only finishes.
    const agent = [
      'if [ "$GOALD_TURN" = 1 ]; then',
      '(mv .git .git-aside) 2>>denied.log;',
      `git init -q --bare evil && git config --file evil/config core.fsmonitor 'touch ${marker}' && printf '%s\n' "$PWD/evil" > .git/commondir;`,
      'fi; touch done.txt',
    ].join(' ');
    // The first agent turn could not achieve the goal: its redirect was found (and removed) after it.
    expect(await tamperByTurn(context, agent)).toEqual([
      [],
      ['git-control .git/commondir'],
      [],
    ]);
    expect(existsSync(path.join(context.workspace, '.git', 'commondir'))).toBe(false);
    expect(existsSync(path.join(context.workspace, '.git-aside'))).toBe(false);
    expect(await readFile(path.join(context.workspace, 'denied.log'), 'utf8')).toMatch(/busy/i);
    execFileSync('git', ['-C', context.workspace, 'status'], { stdio: 'ignore' });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('a check that points your git elsewhere (the tests it runs are the agent\'s)', () => {
  it('is found after the checks too: the commondir it made is removed and the turn cannot achieve', async () => {
    const context = await setup();
    const run = await context.sandbox.run([
      'start', 'done.txt exists', '-C', context.workspace, '--cooldown', '0', '--max-turns', '1', '--agent', 'touch done.txt',
      '--check', 'test -f done.txt && printf "%s\\n" "$PWD" > .git/commondir', '--wait', '--json',
    ]);
    expect(run.code, run.stderr).toBe(1);
    const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.submitted')?.id);
    const turns = await readTurns(context.sandbox, id);
    expect(tamperOf(turns[1])).toEqual(['git-control .git/commondir']);
    expect(existsSync(path.join(context.workspace, '.git', 'commondir'))).toBe(false);
  });
});

describe('a repository the agent stages as a submodule', () => {
  it('naming a program in its config is tamper until undone, and what it names never runs for goald', async () => {
    const context = await setup();
    const marker = path.join(context.sandbox.root, 'pwned');
    // Turn 1 makes lib/ a repository with a commit, stages it in your index and names the marker as its
    // fsmonitor (your `git status` would run it); turn 2 takes the setting back out.
    const agent = [
      'if [ "$GOALD_TURN" = 1 ]; then',
      'git init -q lib && git -C lib -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m lib && git add lib &&',
      `git -C lib config core.fsmonitor 'touch ${marker}';`,
      'else git -C lib config --unset core.fsmonitor; fi; touch done.txt',
    ].join(' ');
    expect(await tamperByTurn(context, agent)).toEqual([
      [],
      ['git-control lib/.git/config'],
      [],
    ]);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('sandbox modes', () => {
  it('`required` without a working bwrap exits 2 naming the fix, and starts nothing', async () => {
    const context = await setup();
    const userConfig = path.join(context.sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { mode: 'required', bwrap: path.join(context.sandbox.root, 'no-such-bwrap') } }));
    const run = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'true', '--check', 'true'], { env: { GOALD_SANDBOX: '' } });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('sandbox "required"');
    expect(run.stderr).toContain('apt-get install bubblewrap');
    expect(existsSync(path.join(context.sandbox.home, 'state.json'))).toBe(false);
  });

  it('`auto` without bwrap warns and runs unsandboxed; --no-sandbox runs off; each turn records how it ran', async () => {
    const context = await setup();
    const userConfig = path.join(context.sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { bwrap: path.join(context.sandbox.root, 'no-such-bwrap') } }));
    const auto = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'true', '--check', 'test -f x', '--max-turns', '1', '--cooldown', '0', '--foreground', '--json'], { env: { GOALD_SANDBOX: '' } });
    expect(auto.stderr).toContain('goald: warning: agent turns and checks run without a sandbox');
    const autoId = String(parseJsonLines(auto.stdout).find((event) => event.type === 'goal.started')?.id);
    expect((await readTurns(context.sandbox, autoId)).map((turn) => turn.sandbox)).toEqual(['unavailable', 'unavailable']);

    const off = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'true', '--check', 'test -f x', '--max-turns', '1', '--cooldown', '0', '--foreground', '--json', '--no-sandbox'], { env: { GOALD_SANDBOX: '' } });
    expect(off.stderr).toBe('');
    const offId = String(parseJsonLines(off.stdout).find((event) => event.type === 'goal.started')?.id);
    expect((await readTurns(context.sandbox, offId)).map((turn) => turn.sandbox)).toEqual(['off', 'off']);
    const show = await context.sandbox.run(['show', offId]);
    expect(show.stdout).toContain('sandbox off');
  });

  it("a workspace goal.config.json cannot turn the sandbox off or widen its paths", async () => {
    const context = await setup();
    await writeFile(
      path.join(context.workspace, 'goal.config.json'),
      JSON.stringify({ sandbox: { mode: 'off', writable: ['~/'], readable: ['~/.ssh'] } }),
    );
    const run = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'true', '--check', 'test -f x', '--max-turns', '1', '--cooldown', '0', '--foreground', '--json'], { env: { GOALD_SANDBOX: '' } });
    expect(run.stderr).toContain('sandbox.writable is ignored');
    expect(run.stderr).toContain('sandbox.readable is ignored');
    expect(run.stderr).toContain('the workspace\'s sandbox "off" is ignored');
    const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.started')?.id);
    expect((await readTurns(context.sandbox, id)).map((turn) => turn.sandbox)).toEqual(['bwrap', 'bwrap']);
  });

  it.each([
    ['outside the home and the workspace', '/usr/local/lib', 'is outside your home'],
    ['overlapping GOALD_HOME', '~/h', 'overlaps GOALD_HOME'],
    ["containing goald's config directory", '~/config', "overlaps goald's config directory"],
  ])('a sandbox.writable path %s is refused with exit 2', async (_what, writable, message) => {
    const context = await setup();
    const userConfig = path.join(context.sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { writable: [writable] } }));
    const run = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'true', '--check', 'true']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(existsSync(path.join(context.sandbox.home, 'state.json'))).toBe(false);
  });
});

describe('the bwrap probe, remembered in GOALD_HOME', () => {
  it('probes once while nothing it depends on changes; a changed bwrap, and `goald sandbox check`, probe again', async () => {
    const context = await setup();
    const { root } = context.sandbox;
    await mkdir(context.sandbox.home, { mode: 0o700 });
    // The configured bwrap: the real one, noting each probe (the only call whose command is `true`). A flag
    // file makes its probe fail while leaving the wrapper itself, and so its key, unchanged.
    const probes = path.join(root, 'probes.log');
    const failFlag = path.join(root, 'fail-probe');
    const wrapper = path.join(root, 'bwrap-wrapper');
    const realBwrap = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    await writeFile(
      wrapper,
      `#!/bin/sh\nfor last; do :; done\nif [ "$last" = true ]; then echo probe >> '${probes}'; [ -e '${failFlag}' ] && { echo 'bwrap: fake failure' >&2; exit 1; }; fi\nexec '${realBwrap}' "$@"\n`,
      { mode: 0o755 },
    );
    const userConfig = path.join(root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { bwrap: wrapper } }));
    const start = async (): Promise<void> => {
      const run = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'touch y', '--check', 'test -f x', '--foreground', '--json', ...FAST]);
      const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.started')?.id);
      expect((await readTurns(context.sandbox, id)).map((turn) => turn.sandbox), run.stderr).toEqual(['bwrap', 'bwrap']);
    };
    const probed = (): number => (existsSync(probes) ? readFileSync(probes, 'utf8').split('\n').filter(Boolean).length : 0);

    await start();
    expect(probed()).toBe(1);
    await start();
    await start();
    expect(probed()).toBe(1); // remembered: no bwrap started before the first check

    // The executable changed (an upgrade, or another file at its path): probed again, then remembered.
    await writeFile(wrapper, `${readFileSync(wrapper, 'utf8')}# upgraded\n`);
    await start();
    await start();
    expect(probed()).toBe(2);

    // `goald sandbox check` always probes; a failing probe is reported, and forgets what was remembered.
    await writeFile(failFlag, '');
    const check = await context.sandbox.run(['sandbox', 'check', '-C', context.workspace, '--json']);
    expect(probed()).toBe(3);
    expect(JSON.parse(check.stdout)).toMatchObject({ bwrap: { works: false, problem: expect.stringContaining('fake failure') } });
    expect(check.code).toBe(2);
    const refused = await context.sandbox.run(['start', 'done', '-C', context.workspace, '--agent', 'touch y', '--check', 'test -f x', '--foreground']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('fake failure');
    expect(probed()).toBe(4);
    await rm(failFlag);
    await start();
    expect(probed()).toBe(5);
  });
});

describe('goald sandbox check', () => {
  it('says whether bwrap works, the mode, and what a turn and a check see (--json)', async () => {
    const context = await setup();
    await mkdir(path.join(context.sandbox.root, '.claude'));
    await mkdir(path.join(context.sandbox.root, '.ssh'));
    await mkdir(path.join(context.sandbox.root, 'data'));
    await mkdir(context.sandbox.home, { mode: 0o700 });
    const userConfig = path.join(context.sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { network: false, writable: ['~/data'] } }));
    const run = await context.sandbox.run(['sandbox', 'check', '-C', context.workspace, '--adapter', 'claude-code', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    const root = context.sandbox.root;
    expect(report).toMatchObject({ mode: 'required', use: 'bwrap', bwrap: { works: true }, workspace: context.workspace, agent: { adapter: 'claude-code', profile: 'claude-code' } });
    const turn = report.turn as { writable: string[]; hidden: string[]; network: boolean };
    expect(turn.writable).toEqual(expect.arrayContaining([context.workspace, path.join(root, '.claude'), path.join(root, 'data')]));
    expect(turn.hidden).toEqual(expect.arrayContaining([context.sandbox.home, path.join(root, '.ssh'), path.join(root, 'config', 'goald')]));
    expect(turn.network).toBe(false);
    // A check gets no agent CLI's state: Claude Code's directory is hidden from it.
    const checks = report.checks as { writable: string[]; hidden: string[] };
    expect(checks.writable).not.toContain(path.join(root, '.claude'));
    expect(checks.hidden).toContain(path.join(root, '.claude'));
  });

  it('exits 2 when the mode is required and bwrap does not work, naming the fix', async () => {
    const context = await setup();
    const userConfig = path.join(context.sandbox.root, 'config', 'goald', 'config.json');
    await mkdir(path.dirname(userConfig), { recursive: true });
    await writeFile(userConfig, JSON.stringify({ sandbox: { bwrap: path.join(context.sandbox.root, 'no-such-bwrap') } }));
    const run = await context.sandbox.run(['sandbox', 'check', '-C', context.workspace]);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('sandbox: required → refused');
    expect(run.stdout).toContain('apt-get install bubblewrap');
  });
});
