import { PassThrough } from 'node:stream';

import { describe, expect, onTestFinished, test } from 'vitest';

import { GoaldError } from '../../src/errors.js';
import { gitEnv, pipeGit, runGit } from '../../src/workspace/git.js';
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
