// End to end: a daemon that trusts nothing it does not own. A GOALD_HOME, socket directory or state.json
// that another uid owns, or that group/others can write, is refused with exit 2 and one line naming it
// (never chmodded); the CLI sends nothing to a socket another uid owns; the daemon lock holds when many
// daemons start at once; and a daemon that cannot start says why at once instead of serving.
// Foreign ownership needs a second uid: root (as these tests run in CI) chowns to nobody (65534).

import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import { gitdir } from '../helpers/gitdir.js';
import { goaldBin, goaldSandbox, sandboxDaemonPid, type GoaldRun, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

/** Exactly one line on stderr, naming `text`. */
function expectOneLineNaming(run: GoaldRun, text: string): void {
  expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
  expect(run.stderr).toContain(text);
}

async function daemonRefusal(sandbox: GoaldSandbox): Promise<GoaldRun> {
  return sandbox.run(['daemon', '--foreground']);
}

describe('ownership of GOALD_HOME, the socket and state.json', () => {
  it.skipIf(!isRoot)('a GOALD_HOME owned by another uid is refused with exit 2 (needs root to chown)', async () => {
    const sandbox = await goaldSandbox();
    mkdirSync(sandbox.home, { mode: 0o700 });
    chownSync(sandbox.home, NOBODY, NOBODY);
    const daemon = await daemonRefusal(sandbox);
    expect(daemon.code).toBe(2);
    expectOneLineNaming(daemon, `GOALD_HOME ${sandbox.home} is owned by uid ${NOBODY}`);

    const repo = await gitdir({ initialCommit: true, files: { 'a.txt': 'a\n' } });
    const foreground = await sandbox.run(['start', 'x', '-C', repo.dir, '--foreground', '--evaluator', 'none', '--check', 'true', '--agent', 'true']);
    expect(foreground.code).toBe(2);
    expectOneLineNaming(foreground, `GOALD_HOME ${sandbox.home} is owned by uid ${NOBODY}`);
    // Auto-start refuses before it spawns anything.
    const autoStart = await sandbox.run(['daemon']);
    expect(autoStart.code).toBe(2);
    expect(sandboxDaemonPid(sandbox)).toBeNull();
  });

  it('a world-writable GOALD_HOME is refused with exit 2 and left as it is', async () => {
    const sandbox = await goaldSandbox();
    mkdirSync(sandbox.home);
    chmodSync(sandbox.home, 0o777);
    const daemon = await daemonRefusal(sandbox);
    expect(daemon.code).toBe(2);
    expectOneLineNaming(daemon, `GOALD_HOME ${sandbox.home} is writable by group or others (mode 0777)`);
    expect(daemon.stderr).toContain(`chmod go-w ${sandbox.home}`);
    expect(statSync(sandbox.home).mode & 0o777).toBe(0o777);
  });

  it.skipIf(!isRoot)('a state.json owned by another uid is refused with exit 2 (needs root to chown)', async () => {
    const sandbox = await goaldSandbox();
    mkdirSync(sandbox.home, { mode: 0o700 });
    const stateFile = path.join(sandbox.home, 'state.json');
    writeFileSync(stateFile, '{"goals":[],"loops":[]}\n', { mode: 0o600 });
    chownSync(stateFile, NOBODY, NOBODY);
    const daemon = await daemonRefusal(sandbox);
    expect(daemon.code).toBe(2);
    expectOneLineNaming(daemon, `state.json ${stateFile} is owned by uid ${NOBODY}`);
  });

  it('a socket directory that others can write is refused by the daemon and by the CLI', async () => {
    const sandbox = await goaldSandbox();
    const shared = path.join(sandbox.root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const env = { GOALD_SOCKET: path.join(shared, 'g.sock') };
    const daemon = await sandbox.run(['daemon', '--foreground'], { env });
    expect(daemon.code).toBe(2);
    expectOneLineNaming(daemon, `the socket directory ${shared} is writable by group or others`);
  });

  it.skipIf(!isRoot)('the CLI sends nothing to a socket another uid owns (needs root to chown)', async () => {
    const sandbox = await goaldSandbox();
    mkdirSync(sandbox.home, { mode: 0o700 });
    // An impostor listening where the daemon's socket should be.
    let connections = 0;
    const impostor = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => impostor.listen(sandbox.socket, resolve));
    onTestFinished(() => new Promise<void>((resolve) => impostor.close(() => resolve())));
    chownSync(sandbox.socket, NOBODY, NOBODY);

    for (const args of [['status'], ['status', '--json'], ['daemon', 'stop'], ['loop', 'list']]) {
      const run = await sandbox.run(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`the socket ${sandbox.socket} is owned by uid ${NOBODY}`);
    }
    expect(connections).toBe(0);
  });
});

describe('the daemon lock and start-up failures', () => {
  it('of 4 daemons started at once on one home, exactly one serves; the others exit 2 with one line', async () => {
    const sandbox = await goaldSandbox();
    const runs = await Promise.all(
      Array.from({ length: 4 }, () =>
        new Promise<GoaldRun & { pid: number }>((resolve, reject) => {
          const child = spawn(process.execPath, [goaldBin, 'daemon', '--foreground'], { cwd: sandbox.root, env: sandbox.env, stdio: ['ignore', 'pipe', 'pipe'] });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
            // The winner logs that it listens and keeps running: resolve it as running (code null).
            if (stderr.includes('listening on')) resolve({ code: null, signal: null, stdout, stderr, pid: child.pid ?? 0 });
          });
          child.on('error', reject);
          child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, pid: child.pid ?? 0 }));
          onTestFinished(() => void child.kill('SIGKILL'));
        }),
      ),
    );
    const serving = runs.filter((run) => run.code === null);
    const refused = runs.filter((run) => run.code !== null);
    expect(serving, JSON.stringify(runs)).toHaveLength(1);
    expect(refused).toHaveLength(3);
    for (const run of refused) {
      expect(run.code).toBe(2);
      expectOneLineNaming(run, `a goald daemon (pid ${serving[0]?.pid}) already runs for ${sandbox.home}`);
    }
    const ping = await sandbox.run(['daemon', 'status', '--json']);
    expect(JSON.parse(ping.stdout)).toMatchObject({ running: true, pid: serving[0]?.pid });
  });

  it('a corrupt state.json: `daemon --foreground` exits 2 with one line, and auto-start reports it at once', async () => {
    const sandbox = await goaldSandbox();
    mkdirSync(sandbox.home, { mode: 0o700 });
    writeFileSync(path.join(sandbox.home, 'state.json'), '{ not json', { mode: 0o600 });
    const foreground = await sandbox.run(['daemon', '--foreground']);
    expect(foreground.code).toBe(2);
    expectOneLineNaming(foreground, 'state.json');

    const started = performance.now();
    const autoStart = await sandbox.run(['daemon']);
    // Well before the 15 s the CLI would wait for a daemon that never answers.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(autoStart.code).not.toBe(0);
    expect(autoStart.stderr).toContain('the goald daemon exited at start');
    expect(autoStart.stderr).toContain('state.json');
    await waitUntil('no daemon to run', () => (sandboxDaemonPid(sandbox) === null ? true : undefined));
  });
});
