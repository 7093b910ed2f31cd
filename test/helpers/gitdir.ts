// A real git repository in a temp directory for tests: `main` branch, a known user, no signing, no gc.

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { onTestFinished } from 'vitest';

const execFileAsync = promisify(execFile);

// Variables that would point the helper's git at some other repository (e.g. when tests run from a hook).
const REPO_LOCATION_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
];

export interface GitdirOptions {
  /** Files to write before the optional initial commit (path → content). */
  files?: Record<string, string | Uint8Array>;
  /** Commit everything written so far as "initial". Default: false. */
  initialCommit?: boolean;
  /**
   * Remove the directory when the current test finishes (vitest onTestFinished). Default: true when
   * called inside a test; outside one (beforeAll, a benchmark) call cleanup() yourself.
   */
  autoCleanup?: boolean;
}

export interface Gitdir {
  /** Absolute, symlink-free path of the work tree (compares equal to what git reports). */
  dir: string;
  /** Runs git in the repository and returns its stdout without the trailing newline. */
  git(...args: string[]): Promise<string>;
  /** Writes a file (creating parent directories) relative to the repository root. */
  write(file: string, content: string | Uint8Array): Promise<void>;
  /** Stages everything and commits it, even when nothing changed. */
  commitAll(message: string): Promise<void>;
  /** Absolute path of a file in the repository. */
  path(file: string): string;
  cleanup(): Promise<void>;
}

/** Creates a temp git repository for one test. */
export async function gitdir(options: GitdirOptions = {}): Promise<Gitdir> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'goald-git-')));
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const name of REPO_LOCATION_VARS) delete env[name];

  const git = async (...args: string[]): Promise<string> => {
    const { stdout } = await execFileAsync('git', args, { cwd: dir, env, maxBuffer: 256 * 1024 * 1024 });
    return stdout.replace(/\n$/, '');
  };
  const write = async (file: string, content: string | Uint8Array): Promise<void> => {
    const target = path.join(dir, file);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  };
  const commitAll = async (message: string): Promise<void> => {
    await git('add', '--all');
    await git('commit', '--quiet', '--allow-empty', '--no-verify', '-m', message);
  };
  const cleanup = (): Promise<void> => rm(dir, { recursive: true, force: true, maxRetries: 3 });

  if (options.autoCleanup ?? true) {
    try {
      onTestFinished(cleanup);
    } catch {
      // Not inside a running test: the caller owns cleanup().
    }
  }

  await git('init', '--quiet', '--initial-branch=main');
  // Force the branch even where init.defaultBranch or an old git would pick another name.
  await git('symbolic-ref', 'HEAD', 'refs/heads/main');
  for (const [key, value] of [
    ['user.name', 'goald test'],
    ['user.email', 'goald-test@example.invalid'],
    ['commit.gpgsign', 'false'],
    ['tag.gpgsign', 'false'],
    ['gc.auto', '0'],
    ['core.autocrlf', 'false'],
  ] as const) {
    await git('config', key, value);
  }

  for (const [file, content] of Object.entries(options.files ?? {})) await write(file, content);
  if (options.initialCommit) await commitAll('initial');

  return { dir, git, write, commitAll, path: (file) => path.join(dir, file), cleanup };
}
