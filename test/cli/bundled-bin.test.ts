// The executable users get (package.json's bin, the bundle `npm run build` makes): its own fast paths
// (`--version` before anything loads, the `hook` route) answer exactly as the full CLI does, and the
// version it prints (src/version.ts, which the daemon reports too) is the package's.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, test } from 'vitest';

import { main } from '../../src/cli/main.js';
import { GOALD_VERSION } from '../../src/version.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, repoRoot } from '../helpers/run-goald.js';

function captureIO(): { io: Parameters<typeof main>[1] & object; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (text) => out.push(text), err: (text) => err.push(text), env: {}, cwd: repoRoot }, out, err };
}

/** The bundle's files a run traced by test/fixtures/load-trace/print-loaded.mjs loaded (its LOADED_OUT). */
function loadedChunks(out: string): string[] {
  return readFileSync(out, 'utf8').split('\n').filter((file) => file.includes(`${path.sep}bundle${path.sep}`));
}

describe('goald --version', () => {
  test("is package.json's version", () => {
    const manifest: unknown = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ version: GOALD_VERSION });
  });

  test('the fast path prints what commander prints, for --version and -v', async () => {
    const sandbox = await goaldSandbox();
    const viaCommander = captureIO();
    expect(await main(['node', 'goald', '--version'], viaCommander.io)).toBe(0);
    expect(viaCommander.out.join('')).toBe(GOALD_VERSION);
    for (const flag of ['--version', '-v']) {
      const run = await sandbox.run([flag]);
      expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: `${GOALD_VERSION}\n`, stderr: '' });
    }
  });

  // Its target is ≤ 1.2× node -e 0: bin.js answers from its own text. (A module bin.js shares with another
  // entry of the bundle, as src/version.ts once did with the start-up snapshot's, becomes a chunk of its own.)
  test('loads nothing of the bundle but bin.js and its runtime', async () => {
    const sandbox = await goaldSandbox();
    const out = path.join(sandbox.root, 'loaded.txt');
    const tracer = fileURLToPath(new URL('../fixtures/load-trace/print-loaded.mjs', import.meta.url));
    const run = await sandbox.run(['--version'], { env: { NODE_OPTIONS: `--import ${tracer}`, LOADED_OUT: out } });
    expect(run.code).toBe(0);
    expect(loadedChunks(out).map((file) => path.basename(file).replace(/-[\w-]{8}\.js$/, '.js'))).toEqual(['bin.js', 'rolldown-runtime.js']);
  });

  test('with anything else on the line, the full CLI answers (as it would in-process)', async () => {
    const sandbox = await goaldSandbox();
    for (const args of [['status', '-v'], ['--versions'], ['-v', '-v']]) {
      const inProcess = captureIO();
      const code = await main(['node', 'goald', ...args], inProcess.io);
      const run = await sandbox.run(args);
      expect({ args, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
        args,
        code,
        stdout: inProcess.out.map((line) => `${line}\n`).join(''),
        stderr: inProcess.err.map((line) => `${line}\n`).join(''),
      });
    }
  });
});

describe('goald hook', () => {
  test('routes to the hook: a wrong hook name is a usage error naming the known ones', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['hook', 'pre-tool-use']);
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: 'goald hook: unknown hook "pre-tool-use"; expected one of: post-tool-use\n',
    });
  });
});

describe('goald status', () => {
  // Its fast path (fast-command.ts) is a start-up target of its own (npm run bench: ≤ 1.5× node -e 0):
  // zod alone costs it a third of that, and a view helper that imported a zod schema once did.
  test('with a daemon running, loads neither commander nor zod', async () => {
    const sandbox = await goaldSandbox();
    const workspace = (await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true })).dir;
    const forever = fileURLToPath(new URL('../fixtures/agents/forever.mjs', import.meta.url));
    expect((await sandbox.run(['start', 'runs a while', '-C', workspace, '--check', 'false', '--agent', forever])).code).toBe(0);
    const out = path.join(sandbox.root, 'loaded.txt');
    const tracer = fileURLToPath(new URL('../fixtures/load-trace/print-loaded.mjs', import.meta.url));
    const run = await sandbox.run(['status'], { env: { NODE_OPTIONS: `--import ${tracer}`, LOADED_OUT: out } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Goal: runs a while');
    const loaded = loadedChunks(out);
    expect(loaded.length).toBeGreaterThan(1);
    for (const file of loaded) {
      const code = readFileSync(file, 'utf8');
      expect({ file: path.basename(file), zod: code.includes('ZodError'), commander: code.includes('CommanderError') }).toEqual({ file: path.basename(file), zod: false, commander: false });
    }
  });
});

describe('goald start', () => {
  // Its start-up is a target too (npm run bench: to the first agent, ≤ 4× node -e 0): commander and the
  // full CLI are ~10 ms of it, so a plain start line is read by start-args.ts instead.
  test('in the foreground, runs the goal without loading commander or the daemon client; --help still gets commander', async () => {
    const sandbox = await goaldSandbox();
    const workspace = (await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true })).dir;
    const out = path.join(sandbox.root, 'loaded.txt');
    const tracer = fileURLToPath(new URL('../fixtures/load-trace/print-loaded.mjs', import.meta.url));
    const traced = { env: { NODE_OPTIONS: `--import ${tracer}`, LOADED_OUT: out } };
    const run = await sandbox.run(['start', 'f exists', '--foreground', '-C', workspace, '--agent', 'touch f', '--check', 'test -f f', '--json'], traced);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toContain('"status":"achieved"');
    const loadsCommander = (): boolean => loadedChunks(out).some((file) => readFileSync(file, 'utf8').includes('CommanderError'));
    expect(loadsCommander()).toBe(false);
    // Nor the daemon client, which status's chunk holds (scripts/bundle.mjs): ~36 KB of a start's loading.
    expect(loadedChunks(out).filter((file) => readFileSync(file, 'utf8').includes('function createDaemonClient(')).map((file) => path.basename(file))).toEqual([]);
    const help = await sandbox.run(['start', '--help'], traced);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--max-turns <n>');
    expect(loadsCommander()).toBe(true);
  });
});
