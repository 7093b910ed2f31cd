// The documented exit codes (DESIGN.md § CLI contract) of the built binary: 0 success or achieved, 1 goal
// failed, 2 usage or configuration error, 3 daemon unreachable, 70 internal error.

import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, type GoaldRun } from '../helpers/run-goald.js';

async function repo(): Promise<string> {
  return (await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true })).dir;
}

/** One line on stderr, `goald: ` first: the shape of every error. */
function oneErrorLine(run: GoaldRun): string {
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^goald: /);
  return lines[0] ?? '';
}

/** Something that is not a goald daemon listening on `socket`: it answers every request with `reply`. */
async function impostorDaemon(socket: string, reply: { status: number; body: string }): Promise<void> {
  const server = createServer((_req, res) => {
    res.writeHead(reply.status, { 'Content-Type': 'text/plain' });
    res.end(reply.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

describe('0: success', () => {
  it('--version prints the package version', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['--version']);
    const pkg: unknown = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'));
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg !== null && typeof pkg === 'object' && 'version' in pkg ? pkg.version : 'no version');
  });

  it.each([{ args: ['--help'] }, { args: ['start', '--help'] }, { args: ['loop', '--help'] }])('$args', async ({ args }) => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: goald/);
    expect(run.stderr).toBe('');
  });

  it('an achieved goal', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['start', 'the readme exists', '--foreground', '-C', await repo(), '--check', 'test -f README.md', '--agent', 'true']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Goal Achieved');
  });
});

describe('1: the goal failed', () => {
  it('in this process (--foreground)', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['start', 'never', '--foreground', '-C', await repo(), '--check', 'false', '--agent', 'true', '--max-turns', '1', '--cooldown', '0']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
  });

  it('through the daemon (--wait)', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['start', 'never', '--wait', '-C', await repo(), '--check', 'false', '--agent', 'true', '--max-turns', '1', '--cooldown', '0']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
  });
});

describe('2: usage or configuration', () => {
  it('a usage error (a bad flag value)', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['start', 'x', '--foreground', '-C', await repo(), '--agent', 'true', '--check', 'true', '--max-turns', 'many']);
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(/--max-turns/);
  });

  it('a configuration error (goal.config.json)', async () => {
    const dir = await repo();
    await writeFile(path.join(dir, 'goal.config.json'), JSON.stringify({ limits: { maxTurns: 'lots' } }));
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['start', 'x', '--foreground', '-C', dir, '--agent', 'true', '--check', 'true']);
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(/goal\.config\.json.*limits\.maxTurns/);
  });

  it('a goal id that matches nothing', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['show', 'nosuchgoal']);
    expect(run.code).toBe(2);
    oneErrorLine(run);
  });

  it('start, when GOALD_SOCKET points where no daemon can be started', async () => {
    // A socket inside a regular file: the directory cannot be created, so the CLI says so at once
    // instead of spawning a daemon that cannot listen and waiting for its ping.
    const sandbox = await goaldSandbox();
    const file = path.join(sandbox.root, 'not-a-dir');
    await writeFile(file, '');
    const run = await sandbox.run(['start', 'x', '-C', await repo(), '--agent', 'true', '--check', 'true'], {
      env: { GOALD_SOCKET: path.join(file, 'goald.sock') },
    });
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(/the socket directory .*not-a-dir cannot be created \(a parent of it is not a directory\)/);
  });
});

describe('3: the daemon is unreachable', () => {
  it.each(['pause', 'resume'])('%s without a daemon', async (command) => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run([command]);
    expect(run.code).toBe(3);
    expect(oneErrorLine(run)).toMatch(/the goald daemon is not running — start/);
  });
});

describe('70: internal error', () => {
  it.each([{ args: ['status', '--json'] }, { args: ['pause'] }])('$args when what answers on the socket does not speak goald', async ({ args }) => {
    const sandbox = await goaldSandbox();
    const socket = path.join(sandbox.root, 'impostor.sock');
    await impostorDaemon(socket, { status: 200, body: 'hello, I am not goald' });
    const run = await sandbox.run(args, { env: { GOALD_SOCKET: socket } });
    expect(run.code).toBe(70);
    expect(run.stdout).toBe('');
    expect(oneErrorLine(run)).toMatch(/the goald daemon sent a reply that is not JSON \(HTTP 200\)/);
  });
});
