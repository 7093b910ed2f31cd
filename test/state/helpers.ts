// Test helpers for the state layer: temp homes, and a plain-JS build of state/ that child processes can
// import (Node 20 cannot run TypeScript, and the build must not depend on the rest of the tree compiling).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterEach, beforeEach } from 'vitest';

import { GoaldError } from '../../src/errors.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Catches the GoaldError a promise rejects with (throws when it resolves, or rejects with anything else). */
export async function rejectionOf(promise: Promise<unknown>): Promise<GoaldError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GoaldError)) throw new Error(`expected a GoaldError, got ${String(error)}`);
  return error;
}

/** A fresh temp directory; the returned function removes it. */
export async function makeTempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'goald-state-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A fresh temp directory for each test of the file (vitest's hooks), handed to `made`; removed after the test. */
export function tempDirPerTest(made: (dir: string) => void): void {
  let cleanup: (() => Promise<void>) | null = null;
  beforeEach(async () => {
    const temp = await makeTempDir();
    cleanup = temp.cleanup;
    made(temp.dir);
  });
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });
}

/**
 * Transpiles state/, machines/ and the src/ modules state imports (clock, errors, errno, serial queue, process identity,
 * OS random bytes, zod) to JS
 * in a temp dir inside the repo (so bare imports such as `lowdb` resolve from node_modules, and
 * `"type": "module"` applies). Types are not checked.
 */
export async function buildStateForChildren(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(REPO_ROOT, '.goald-test-state-'));
  const sources = [
    ...(await listTs(join(REPO_ROOT, 'state'))),
    ...(await listTs(join(REPO_ROOT, 'machines'))),
    join(REPO_ROOT, 'src', 'clock.ts'),
    join(REPO_ROOT, 'src', 'errors.ts'),
    join(REPO_ROOT, 'src', 'errno.ts'),
    join(REPO_ROOT, 'src', 'os-random.ts'),
    join(REPO_ROOT, 'src', 'daemon', 'serial-queue.ts'),
    join(REPO_ROOT, 'src', 'process', 'process-identity.ts'),
    join(REPO_ROOT, 'src', 'secrets', 'redact.ts'),
    join(REPO_ROOT, 'src', 'guard', 'types.ts'),
    join(REPO_ROOT, 'src', 'zod-mini.ts'),
  ];
  for (const source of sources) {
    const output = ts.transpileModule(await readFile(source, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
      fileName: source,
    });
    const target = join(dir, relative(REPO_ROOT, source)).replace(/\.ts$/, '.js');
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, output.outputText);
  }
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function listTs(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.ts')).map((name) => join(dir, name));
}

/** A child process with its stdout read line by line. */
export interface LineChild {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the first stdout line matching `pattern` (rejects if the child exits first). */
  waitForLine(pattern: RegExp): Promise<string>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  stderr(): string;
}

/** Spawns `node script ...args` and lets the test wait for its output lines. */
export function spawnNode(script: string, args: string[], cwd: string): LineChild {
  const child = spawn(process.execPath, [script, ...args], { cwd, stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  const exited = new Promise<number | string>((resolveExit) => {
    child.on('exit', (code, signal) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`child exited (${code ?? signal}) before printing ${waiter.pattern}; stderr: ${stderr}`));
      }
      resolveExit(code ?? signal ?? 'unknown');
    });
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    child,
    waitForLine: (pattern) => {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      if (child.exitCode !== null || child.signalCode !== null) {
        return Promise.reject(new Error(`child already exited; stderr: ${stderr}`));
      }
      return new Promise((resolveLine, reject) => waiters.push({ pattern, resolve: resolveLine, reject }));
    },
    exited,
    stderr: () => stderr,
  };
}
