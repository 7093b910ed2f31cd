import { existsSync } from 'node:fs';
import { appendFile, chmod, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';

import { describe, expect, onTestFinished, test } from 'vitest';

import { GoaldError } from '../../src/errors.js';
import { addAndWriteTree, GIT_TIMEOUT_MS, gitEnv, pipeGit, runGit, unreadableDirsIn } from '../../src/workspace/git.js';
import { prepareSnapshotGitDir, unsetsEveryFilter } from '../../src/workspace/snapshot-git-dir.js';
import { gitdir } from '../helpers/gitdir.js';

describe('runGit', () => {
  test('the environment drops repo redirections and pins locks, prompts and locale', () => {
    const saved = { ...process.env };
    onTestFinished(() => {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    });
    Object.assign(process.env, {
      GIT_DIR: '/elsewhere/.git',
      GIT_WORK_TREE: '/elsewhere',
      GIT_INDEX_FILE: '/elsewhere/index',
      GIT_OBJECT_DIRECTORY: '/elsewhere/objects',
      GIT_ALTERNATE_OBJECT_DIRECTORIES: '/elsewhere/alt',
      EDITOR: 'vi',
      LC_ALL: 'fr_FR.UTF-8',
    });
    const env = gitEnv({ GIT_INDEX_FILE: '/mine/index' });
    expect(env.GIT_DIR).toBeUndefined();
    expect(env.GIT_WORK_TREE).toBeUndefined();
    expect(env.GIT_OBJECT_DIRECTORY).toBeUndefined();
    expect(env.GIT_ALTERNATE_OBJECT_DIRECTORIES).toBeUndefined();
    expect(env.GIT_INDEX_FILE).toBe('/mine/index');
    expect(env.EDITOR).toBe('vi');
    expect(env).toMatchObject({ GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' });
  });

  test('an inherited GIT_DIR does not redirect commands', async () => {
    const repo = await gitdir();
    const other = await gitdir();
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = `${other.dir}/.git`;
    onTestFinished(() => {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    });
    const { stdout } = await runGit(['rev-parse', '--show-toplevel'], { cwd: repo.dir });
    expect(stdout.trim()).toBe(repo.dir);
  });

  test('feeds stdin and returns large output whole', async () => {
    const repo = await gitdir();
    const big = 'z'.repeat(3 * 1024 * 1024);
    const hashed = await runGit(['hash-object', '-w', '--stdin'], { cwd: repo.dir, input: big });
    const id = hashed.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{40}$/);
    const shown = await runGit(['cat-file', 'blob', id], { cwd: repo.dir });
    expect(shown.stdout.length).toBe(big.length);
  });

  test('a failure throws an internal GoaldError carrying git’s stderr, unless allowed', async () => {
    const repo = await gitdir();
    const error: unknown = await runGit(['rev-parse', '--verify', 'no-such-ref'], { cwd: repo.dir }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GoaldError);
    expect((error as GoaldError).code).toBe('internal');
    expect((error as GoaldError).message).toContain('Needed a single revision');

    const allowed = await runGit(['rev-parse', '--verify', 'no-such-ref'], { cwd: repo.dir, allowFailure: true });
    expect(allowed.exitCode).toBe(128);
  });

  test('an abort kills git and rejects with the signal’s reason', async () => {
    const repo = await gitdir();
    const controller = new AbortController();
    // hash-object --stdin waits for stdin that never ends, so only the abort can finish it.
    const never = new PassThrough();
    const running = runGit(['hash-object', '--stdin'], { cwd: repo.dir, input: never, signal: controller.signal });
    controller.abort(new Error('stop now'));
    await expect(running).rejects.toThrow('stop now');
    never.destroy();
  });

  test('pipeGit streams one command into another', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'a.txt': 'a\n' } });
    const piped = await pipeGit(['cat-file', 'blob', 'HEAD:a.txt'], ['hash-object', '--stdin'], { cwd: repo.dir });
    expect(piped.stdout.trim()).toBe(await repo.git('rev-parse', 'HEAD:a.txt'));
    await expect(pipeGit(['cat-file', 'blob', 'HEAD:nope'], ['hash-object', '--stdin'], { cwd: repo.dir })).rejects.toThrow(
      GoaldError,
    );
  });
});

// A repository is untrusted: an agent with the user's uid can point its config at any program. Each hostile
// setting below writes a marker file when git runs it; goald's git must never run it.
describe('runGit against a hostile repository', () => {
  async function hostileRepo() {
    const repo = await gitdir({ initialCommit: true, files: { 'a.txt': 'hello\n' } });
    const marker = (name: string): string => repo.path(`../${path.basename(repo.dir)}-${name}.ran`);
    onTestFinished(async () => {
      for (const name of ['fsmonitor', 'hook', 'clean', 'process', 'odd-clean']) await rm(marker(name), { force: true });
    });
    return { repo, marker };
  }

  test('core.fsmonitor and hooks set by the repository never run', async () => {
    const { repo, marker } = await hostileRepo();
    await repo.git('config', 'core.fsmonitor', `touch ${marker('fsmonitor')}; sleep 15`);
    await repo.git('config', 'core.hooksPath', '.githooks');
    await repo.write('.githooks/post-index-change', `#!/bin/sh\ntouch ${marker('hook')}\n`);
    await chmod(repo.path('.githooks/post-index-change'), 0o755);
    await repo.write('b.txt', 'new\n');
    const started = performance.now();
    await runGit(['status', '--porcelain'], { cwd: repo.dir });
    await runGit(['add', '--all'], { cwd: repo.dir });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(existsSync(marker('fsmonitor'))).toBe(false);
    expect(existsSync(marker('hook'))).toBe(false);
    expect(await runGit(['ls-files'], { cwd: repo.dir })).toMatchObject({ stdout: expect.stringContaining('b.txt') as unknown });
  });

  test('filter drivers named by .gitattributes never run; files are stored as they are', async () => {
    const { repo, marker } = await hostileRepo();
    await repo.git('config', 'filter.evil.clean', `touch ${marker('clean')}; sleep 15; cat`);
    await repo.git('config', 'filter.evil.required', 'true');
    await repo.git('config', 'filter.lfsish.process', `sh -c 'touch ${marker('process')}; sleep 15'`);
    // A driver name holding '=' and dots: `-c filter.a=b.c.clean=` would split at the wrong '='.
    await repo.git('config', 'filter.a=b.c.clean', `touch ${marker('odd-clean')}; cat`);
    await repo.write('.gitattributes', '*.txt filter=evil\n*.bin filter=lfsish\n*.odd filter=a=b.c\n');
    await repo.write('a.txt', 'changed\n');
    await repo.write('x.bin', 'binary-ish\n');
    await repo.write('y.odd', 'odd\n');
    const started = performance.now();
    await runGit(['add', '--all'], { cwd: repo.dir });
    // write-tree re-checks racily clean entries, which runs clean filters too.
    await runGit(['write-tree'], { cwd: repo.dir });
    expect(performance.now() - started).toBeLessThan(5_000);
    for (const name of ['clean', 'process', 'odd-clean']) expect(existsSync(marker(name)), name).toBe(false);
    const staged = (await runGit(['ls-files', '-s', 'a.txt'], { cwd: repo.dir })).stdout.split(/\s+/)[1];
    expect(staged).toBe(await repo.git('hash-object', '--no-filters', 'a.txt'));
  });

  test('a snapshot (add, then write-tree in one shell) lists the drivers once and runs none, whatever their names', async () => {
    const { repo, marker } = await hostileRepo();
    await repo.git('config', 'filter.evil.clean', `touch ${marker('clean')}; cat`);
    await repo.git('config', 'filter.lfsish.process', `sh -c 'touch ${marker('process')}; sleep 15'`);
    // Names the shell must take as data: '=', dots, quotes, a command substitution, a glob.
    // (No space: .gitattributes ends a value at whitespace; ${IFS} is one only to a shell that evaluates it.)
    const odd = `a=b.c'"$(touch\${IFS}${marker('odd-clean')})\`*`;
    await repo.git('config', `filter.${odd}.clean`, `touch ${marker('odd-clean')}; cat`);
    await repo.git('config', `filter.${odd}.required`, 'true');
    await repo.write('.gitattributes', `*.txt filter=evil\n*.bin filter=lfsish\n*.odd filter=${odd}\n`);
    // The attribute names the odd driver: without goald's overrides git would run it.
    expect(await repo.git('check-attr', 'filter', 'y.odd')).toBe(`y.odd: filter: ${odd}`);
    await repo.write('a.txt', 'changed\n');
    await repo.write('x.bin', 'binary-ish\n');
    await repo.write('y.odd', 'odd\n');
    const trace = repo.path('../git-trace.log');
    onTestFinished(() => rm(trace, { force: true }));
    const started = performance.now();
    const written = await addAndWriteTree(['add', '--all'], ['write-tree'], { cwd: repo.dir, env: { GIT_TRACE: trace } });
    expect(performance.now() - started).toBeLessThan(5_000);
    for (const name of ['clean', 'process', 'odd-clean']) expect(existsSync(marker(name)), name).toBe(false);
    expect(written.stdout.trim()).toMatch(/^[0-9a-f]{40}$/);
    expect((await runGit(['ls-files'], { cwd: repo.dir })).stdout.split('\n')).toEqual(expect.arrayContaining(['x.bin', 'y.odd']));
    const staged = (await runGit(['ls-files', '-s', 'a.txt'], { cwd: repo.dir })).stdout.split(/\s+/)[1];
    expect(staged).toBe(await repo.git('hash-object', '--no-filters', 'a.txt'));
    const listings = (await readFile(trace, 'utf8')).split('\n').filter((line) => line.includes('config --name-only --get-regexp'));
    expect(listings).toHaveLength(1);
  });

  test("in a goal's snapshot git directory no driver can run, so none is listed; without goald's line they are", async () => {
    const { repo, marker } = await hostileRepo();
    await repo.git('config', 'filter.evil.clean', `touch ${marker('clean')}; cat`);
    await repo.git('config', 'filter.evil.required', 'true');
    await repo.git('config', 'filter.lfsish.process', `sh -c 'touch ${marker('process')}; sleep 15'`);
    // Through a macro too: it expands at the .gitattributes' rank, below the snapshot directory's line.
    await repo.write('.gitattributes', '[attr]opaque filter=evil\n*.txt opaque\n*.bin filter=lfsish\n');
    await repo.write('a.txt', 'changed\n');
    await repo.write('x.bin', 'binary-ish\n');
    // The snapshot git directory a goal gets (the repository's config copied, drivers and all).
    const gitDir = repo.path('../snapshot-git');
    const index = repo.path('../snapshot-index');
    onTestFinished(async () => {
      await Promise.all([gitDir, index].map((made) => rm(made, { recursive: true, force: true })));
    });
    prepareSnapshotGitDir(gitDir, { gitDir: repo.path('.git'), commonDir: repo.path('.git') });
    expect(unsetsEveryFilter(gitDir)).toBe(true);
    const env = { GIT_DIR: gitDir, GIT_WORK_TREE: repo.dir, GIT_INDEX_FILE: index, GIT_OBJECT_DIRECTORY: repo.path('.git/objects') };
    const snapshot = async (): Promise<string[]> => {
      const trace = repo.path('../git-trace.log');
      await rm(trace, { force: true });
      onTestFinished(() => rm(trace, { force: true }));
      const written = await addAndWriteTree(['add', '--all'], ['write-tree'], { cwd: repo.dir, env: { ...env, GIT_TRACE: trace } });
      expect(written.stdout.trim()).toMatch(/^[0-9a-f]{40}$/);
      await runGit(['ls-files', '--stage'], { cwd: repo.dir, env: { ...env, GIT_TRACE: trace } });
      for (const name of ['clean', 'process']) expect(existsSync(marker(name)), name).toBe(false);
      const staged = (await runGit(['ls-files', '-s', 'a.txt'], { cwd: repo.dir, env })).stdout.split(/\s+/)[1];
      expect(staged).toBe(await repo.git('hash-object', '--no-filters', 'a.txt'));
      return (await readFile(trace, 'utf8')).split('\n').filter((line) => line.includes(' config ') && line.includes('--get-regexp'));
    };
    expect(await snapshot()).toEqual([]);
    // A line after goald's may set the attribute again: then the drivers are listed and overridden, as in
    // a directory an older goald made without the line.
    await appendFile(path.join(gitDir, 'info', 'attributes'), '*.txt filter=evil\n');
    expect(unsetsEveryFilter(gitDir)).toBe(false);
    await repo.write('a.txt', 'changed again\n');
    expect(await snapshot()).toHaveLength(2);
    for (const glued of ['x* !diff !filter\n', '* !diff !filter']) {
      await writeFile(path.join(gitDir, 'info', 'attributes'), glued);
      expect(unsetsEveryFilter(gitDir), glued).toBe(false);
    }
    await rm(path.join(gitDir, 'info', 'attributes'));
    expect(unsetsEveryFilter(gitDir)).toBe(false);
  });

  test('a snapshot in a repository without filter drivers, and one whose add fails, say so', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'a.txt': 'hello\n' } });
    const written = await addAndWriteTree(['add', '--all'], ['write-tree'], { cwd: repo.dir });
    expect(written.stdout.trim()).toBe(await repo.git('rev-parse', 'HEAD^{tree}'));
    const failed: unknown = await addAndWriteTree(['add', '--all', '--', ':(nosuchmagic)x'], ['write-tree'], { cwd: repo.dir }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(GoaldError);
    expect((failed as GoaldError).message).toMatch(/^git add \+ write-tree \(one shell\) exited with 128 in .*: fatal: /);
  });

  test('a git call past its deadline is killed with its process group, with an error naming the call', async () => {
    const repo = await gitdir();
    const never = new PassThrough();
    onTestFinished(() => void never.destroy());
    const started = performance.now();
    const error: unknown = await runGit(['hash-object', '--stdin'], { cwd: repo.dir, input: never, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GoaldError);
    expect((error as GoaldError).message).toMatch(/^git hash-object --stdin did not finish within 0 s in /);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  test('without a timeout option, calls are bounded by GIT_TIMEOUT_MS (one minute)', () => {
    expect(GIT_TIMEOUT_MS).toBe(60_000);
  });
});

describe('unreadableDirsIn', () => {
  test("reads the directories git could not open for lack of permission from its warnings, nothing else", () => {
    const stderr = [
      "warning: unable to access '/root/.config/git/ignore': Permission denied",
      "warning: could not open directory 'hide/': Permission denied",
      "warning: could not open directory 'a dir/with 'quotes'/': Permission denied",
      "warning: could not open directory 'gone/': No such file or directory",
      '',
    ].join('\n');
    expect(unreadableDirsIn(stderr)).toEqual(['hide/', "a dir/with 'quotes'/"]);
    expect(unreadableDirsIn('')).toEqual([]);
    // A name with a newline, as git prints it; one that forges the rest of the line yields its first part.
    expect(unreadableDirsIn("warning: could not open directory 'odd\nname/': Permission denied\n")).toEqual(['odd\nname/']);
    expect(unreadableDirsIn("warning: could not open directory 'x': Permission denied\ny/': Permission denied\n")).toEqual(['x/']);
  });
});
