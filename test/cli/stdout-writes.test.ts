// How the CLI writes its output (src/cli/io.ts): straight to fd 1, and still whole and in order when the
// descriptor it shares is non-blocking and its reader slow, and quiet when the reader has gone.

import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { gitdir } from '../helpers/gitdir.js';
import { runProcess } from '../helpers/processes.js';
import { goaldBin, goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';

/** A goal achieved at its pre-check (check `true`), so that `history` has a line to print. */
async function finishedGoal(sandbox: GoaldSandbox, condition: string): Promise<void> {
  const { dir } = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  const run = await sandbox.run(['start', condition, '--foreground', '--json', '-C', dir, '--agent', 'true', '--check', 'true', '--evaluator', 'none']);
  expect(run.code).toBe(0);
}

// Longer than any command here takes, far shorter than the agent's sleep: a goald still running then is killed.
const STILL_RUNNING_MS = 20_000;

/**
 * Runs goald with a stdout whose reader is gone before goald writes (EPIPE): its exit code (null: still
 * running after STILL_RUNNING_MS, then killed) and stderr.
 */
function runWithReaderGone(sandbox: GoaldSandbox, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [goaldBin, ...args], { cwd: sandbox.root, env: sandbox.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // node takes tens of milliseconds to start: gone well before the first write
    const timer = setTimeout(() => child.kill('SIGKILL'), STILL_RUNNING_MS);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('CLI output', () => {
  it('a reader that went away (EPIPE) ends goald quietly, exit 0, from the full CLI and the fast path', async () => {
    const sandbox = await goaldSandbox();
    await finishedGoal(sandbox, 'done at once');
    // `history` goes through the full CLI: its write used to fail with an unhandled EPIPE and a stack trace.
    for (const args of [['history'], ['history', '--json'], ['status'], ['status', '--json']]) {
      // What it says on stderr with a reader (status: that no daemon runs), and nothing more without one.
      const read = await sandbox.run(args);
      expect(read.code).toBe(0);
      expect(read.stdout).not.toBe('');
      const run = await runWithReaderGone(sandbox, args);
      expect({ args, ...run }).toEqual({ args, code: 0, stderr: read.stderr });
    }
  });

  it('a foreground goal whose reader went away is stopped cleanly, as by Ctrl-C, not left running unheard', async () => {
    const sandbox = await goaldSandbox();
    const { dir } = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const args = ['start', 'never heard', '--foreground', '--json', '-C', dir, '--agent', 'sleep 600', '--check', 'false', '--evaluator', 'none'];
    const run = await runWithReaderGone(sandbox, args);
    expect(run).toEqual({ code: 1, stderr: '' });
    const history = await sandbox.run(['history', '--json']);
    const goals = JSON.parse(history.stdout) as { goals: { condition: string; status: string; reason: string | null; reasonMessage?: string }[] };
    expect(goals.goals).toEqual([expect.objectContaining({ condition: 'never heard', status: 'failed', reason: 'stopped', reasonMessage: expect.stringContaining('SIGPIPE') as unknown })]);
  });

  it('`logs -f` whose reader went away stops following, exit 0; the goal runs on in the daemon', async () => {
    const sandbox = await goaldSandbox();
    const { dir } = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const started = await sandbox.run(['start', 'followed', '--json', '-C', dir, '--agent', 'sleep 600', '--check', 'false', '--evaluator', 'none']);
    expect(started.code).toBe(0);
    const { id } = JSON.parse(started.stdout.split('\n')[0] ?? '') as { id: string };
    expect(await runWithReaderGone(sandbox, ['logs', '-f', id])).toEqual({ code: 0, stderr: '' });
    const status = await sandbox.run(['status', id, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ goals: [{ id, status: 'active' }] });
  });

  it('a non-blocking stdout whose reader is slow still gets the whole output, in order', async () => {
    const sandbox = await goaldSandbox();
    const { dir } = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    // One event line of ~100 KB (the condition), more than a pipe holds: the direct write meets EAGAIN.
    const condition = `long ${'x'.repeat(100_000)}`;
    // perl sets O_NONBLOCK on the pipe goald inherits (as a node process sharing it would), and the reader
    // waits before it reads anything.
    const script = `perl -e 'use Fcntl; fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV' "$@" | (sleep 1; cat)`;
    const args = [process.execPath, goaldBin, 'start', condition, '--foreground', '--json', '-C', dir, '--agent', 'true', '--check', 'true', '--evaluator', 'none'];
    const result = await runProcess('/bin/sh', ['-c', script, 'sh', ...args], { cwd: sandbox.root, env: sandbox.env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const events = parseJsonLines(result.stdout);
    expect(events).toHaveLength(result.stdout.trimEnd().split('\n').length);
    expect(events[0]).toMatchObject({ type: 'goal.started', condition });
    expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved' });
  });
});
