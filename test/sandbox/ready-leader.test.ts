// An agent's process started ahead in its sandbox (real bwrap) and handed its command at its turn: the
// command sees exactly the argv, environment and stdin it was given, as when spawned at once; nothing runs
// before the claim; a leader never claimed leaves nothing behind.

import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { READ_IN_ONE_GO_MIN_BYTES, execScript, startReadyLeader, type ReadyLeader } from '../../src/process/ready-leader.js';
import { spawnAgentProcess, type SpawnAgentOptions } from '../../src/process/spawn.js';
import { expectToHold } from '../helpers/daemon.js';
import { isProcessRunning, waitingLeadersIn } from '../helpers/processes.js';
import { requiredSandbox } from '../helpers/sandbox.js';

// What the command saw: its argv (one per line, NUL-safe enough here), its environment sorted, its stdin.
const REPORT = 'printf "%s\\n" "$@" > argv.txt; env | sort > env.txt; cat > stdin.txt; readlink /proc/self/fd/0 > fd0.txt';

describe('a ready leader (an agent process started ahead in its sandbox)', () => {
  const args = ['-c', REPORT, 'sh', 'two words', "it's", 'a\nnewline', '$HOME `x` "q"', ''];
  // TMPDIR: the sandbox sets its own (--setenv), over the command's, whether started ahead or not.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ODD: "a'b\nc$d`e`\\", EMPTY: '', LANG: 'C', TMPDIR: '/somewhere' };

  // Each in a workspace of its own: the sandbox runs the command there, whatever cwd says.
  // `base`: the environment the leader is started with; `commandEnv`: the one the command is handed.
  async function runTurn(
    stdin: string | null,
    ready: boolean,
    name: string,
    { base, commandEnv = env, commandArgs = args }: { base?: NodeJS.ProcessEnv; commandEnv?: NodeJS.ProcessEnv; commandArgs?: string[] } = {},
  ) {
    const setup = await requiredSandbox();
    const dir = setup.workspace;
    const wrap = setup.sandbox.forChecks();
    if (wrap === null) throw new Error('bwrap is required for this test');
    // The claim is watched: a leader that fell back to a fresh spawn would pass the comparison unseen.
    let claimedPid: number | null = null;
    const leader = startReadyLeader({ cwd: dir, sandbox: wrap, ...(base === undefined ? {} : { env: base }) });
    const watched: ReadyLeader = {
      claim: (...claim) => {
        const claimed = leader.claim(...claim);
        claimedPid = claimed?.leader.pid ?? null;
        return claimed;
      },
      discard: () => leader.discard(),
    };
    const options: SpawnAgentOptions = {
      command: '/bin/sh', args: commandArgs, cwd: dir, env: commandEnv, stdin, transcriptPath: path.join(setup.home, `${name}.log`), timeoutMs: 30_000,
      sandbox: wrap,
      ...(ready ? { ready: watched } : {}),
    };
    const result = await spawnAgentProcess(options).done;
    if (ready) expect(result.pid === claimedPid && claimedPid !== null).toBe(true);
    else leader.discard();
    const read = (file: string): Promise<string> => readFile(path.join(dir, file), 'utf8');
    return { result, argv: await read('argv.txt'), env: await read('env.txt'), stdin: await read('stdin.txt'), fd0: await read('fd0.txt') };
  }

  it('runs the command with exactly the argv, environment and stdin a fresh spawn gives it', async () => {
    for (const stdin of ['the prompt\nwith lines\n', null]) {
      const fresh = await runTurn(stdin, false, 'fresh');
      const held = await runTurn(stdin, true, 'held');
      expect(held.result).toMatchObject({ exitCode: 0, spawnError: null });
      expect(held.argv).toBe(fresh.argv);
      // The token differs per process, and PWD per workspace (the reporting shell sets it); the rest is the same.
      const withoutToken = (text: string): string => text.replace(/^(GOALD_TURN_TOKEN|PWD)=.*$/gm, '');
      expect(withoutToken(held.env)).toBe(withoutToken(fresh.env));
      expect(held.env).toMatch(/^GOALD_TURN_TOKEN=/m);
      expect(held.stdin).toBe(stdin ?? '');
      expect(held.fd0.replace(/\d+/g, 'N')).toBe(fresh.fd0.replace(/\d+/g, 'N')); // a socket (the pipe), or /dev/null
      expect(held.env).toMatch(/^TMPDIR=\/tmp$/m);
    }
  });

  it('runs a command handed a long script (a 24 KB prompt in argv and environment) exactly as a fresh spawn, with stdin or without', async () => {
    const prompt = Array.from({ length: 600 }, (_, i) => `line ${i}: it's "quoted" $HOME \`x\` \\`).join('\n');
    expect(Buffer.byteLength(prompt)).toBeGreaterThan(READ_IN_ONE_GO_MIN_BYTES * 6);
    const commandArgs = [...args, prompt];
    const commandEnv = { ...env, GOALD_PROMPT: prompt };
    for (const stdin of ['the prompt\nwith lines\n', null]) {
      const fresh = await runTurn(stdin, false, 'fresh-long', { commandArgs, commandEnv });
      const held = await runTurn(stdin, true, 'held-long', { commandArgs, commandEnv });
      expect(held.result).toMatchObject({ exitCode: 0, spawnError: null });
      expect(held.argv).toBe(fresh.argv);
      expect(held.argv).toContain(prompt);
      const withoutToken = (text: string): string => text.replace(/^(GOALD_TURN_TOKEN|PWD)=.*$/gm, '');
      expect(withoutToken(held.env)).toBe(withoutToken(fresh.env));
      expect(held.stdin).toBe(stdin ?? '');
    }
  });

  it('started with an environment of its own, runs the command with exactly the one it is handed', async () => {
    // The shell started with a variable the command must not get, one it gets changed, one the same, and
    // ones a shell sets or ignores itself; the command is handed `env` plus a shell-managed one.
    const handed = { ...env, PS4: '+ traced ', IFS: ':' };
    const base = { ...env, STALE: 'gone at the claim', LANG: 'en_GB.UTF-8', PS4: '+ traced ', IFS: ':', TMPDIR: '/elsewhere', 'NOT-A-NAME': '1' };
    for (const stdin of ['the prompt\n', null]) {
      const fresh = await runTurn(stdin, false, 'fresh-env', { commandEnv: handed });
      const held = await runTurn(stdin, true, 'held-env', { base, commandEnv: handed });
      const withoutToken = (text: string): string => text.replace(/^(GOALD_TURN_TOKEN|PWD)=.*$/gm, '');
      expect(withoutToken(held.env)).toBe(withoutToken(fresh.env));
      expect(held.env).not.toMatch(/STALE|NOT-A-NAME/);
      expect(held.env).toMatch(/^LANG=C$/m);
    }
  });

  it('is claimed once; a leader discarded unclaimed is gone, and a claimed one is not discard()\'s to end', async () => {
    const setup = await requiredSandbox();
    const wrap = setup.sandbox.forChecks();
    if (wrap === null) throw new Error('bwrap is required for this test');
    const ready = startReadyLeader({ cwd: setup.workspace, sandbox: wrap });
    const claimed = ready.claim('/bin/sh', ['-c', 'touch ran'], env, 'ignore', setup.workspace);
    expect(claimed).not.toBeNull();
    expect(ready.claim('/bin/sh', ['-c', 'touch again'], env, 'ignore', setup.workspace)).toBeNull();
    await new Promise((resolve) => claimed?.leader.once('exit', resolve));
    expect(existsSync(path.join(setup.workspace, 'ran'))).toBe(true);

    const unclaimed = startReadyLeader({ cwd: setup.workspace, sandbox: wrap });
    await expect.poll(() => waitingLeadersIn(setup.workspace).length).toBeGreaterThan(0);
    unclaimed.discard();
    await expect.poll(() => waitingLeadersIn(setup.workspace)).toEqual([]);

    const other = startReadyLeader({ cwd: setup.workspace, sandbox: wrap });
    const pid = other.claim('/bin/sh', ['-c', 'exec sleep 600'], env, 'ignore', setup.workspace)?.leader.pid ?? 0;
    other.discard(); // claimed already: not its to end
    await expectToHold('the claimed leader to keep running', 200, () => isProcessRunning(pid));
    process.kill(-pid, 'SIGKILL');
  });

  it('refuses an environment a shell cannot export, or another cwd, so the turn spawns as usual', async () => {
    const setup = await requiredSandbox();
    const wrap = setup.sandbox.forChecks();
    if (wrap === null) throw new Error('bwrap is required for this test');
    const ready = startReadyLeader({ cwd: setup.workspace, sandbox: wrap });
    expect(ready.claim('/bin/sh', ['-c', 'true'], { ...env, 'NOT-A-NAME': '1' }, 'ignore', setup.workspace)).toBeNull();
    const other = startReadyLeader({ cwd: setup.workspace, sandbox: wrap });
    expect(other.claim('/bin/sh', ['-c', 'true'], env, 'ignore', setup.home)).toBeNull(); // not the cwd it started in
    expect(ready.claim('/bin/sh', ['-c', 'true'], env, 'ignore', setup.workspace)).toBeNull(); // ended by the refusal
  });

  it('the script carries only what differs from the environment the shell started with', () => {
    const script = execScript('/bin/cmd', [], { SAME: 'a', CHANGED: 'new', ADDED: 'x' }, 'ignore', { SAME: 'a', CHANGED: 'old', REMOVED: 'r' });
    expect(script.split('\n').slice(1, -1)).toEqual(['unset PWD goald_s REMOVED', "export CHANGED='new'", "export ADDED='x'", 'exec </dev/null', "exec '/bin/cmd'"]);
  });

  it('the script counts its own lines, values with line breaks included, and its bytes when read in one go', () => {
    const script = execScript('/bin/cmd', ['a\nb'], { A: 'x\ny' }, 'pipe');
    const [count, ...rest] = script.split('\n');
    expect(count).toBe(`${rest.length - 1} 0`); // the trailing newline leaves one empty element; 0: by the lines
    const long = execScript('/bin/cmd', ['é\n'.repeat(READ_IN_ONE_GO_MIN_BYTES)], {}, 'ignore');
    const header = long.slice(0, long.indexOf('\n'));
    const body = long.slice(header.length + 1);
    expect(header).toBe(`${body.split('\n').length - 1} ${Buffer.byteLength(body)}`);
  });
});
