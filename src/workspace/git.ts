// Runs git directly on the snapshot hot path, with an environment goald chooses rather than inherits.
// simple-git's `.env()` replaces the whole environment and refuses EDITOR/PAGER, so it is not used here.

import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

import { GoaldError } from '../errors.js';

/**
 * Variables that would point git at another repository, index or object store than the one goald means.
 * Inherited from a git hook or a wrapper script they would silently redirect every command.
 */
const REPO_LOCATION_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
] as const;

export interface RunGitOptions {
  cwd: string;
  /** Added on top of the curated environment (this is how the snapshotter points git at its index). */
  env?: Record<string, string>;
  /** Written to git's stdin, then stdin is closed. */
  input?: string | Buffer | Readable;
  /** Aborting kills git and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Resolve with the exit code instead of throwing when git exits non-zero. */
  allowFailure?: boolean;
  /** Receive stdout as it arrives instead of buffering it; `stdout` in the result is then empty. */
  onStdout?: (chunk: Buffer) => void;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

// Keeps the end of stderr only: git's useful complaint is the last line, and a chatty hook could flood.
const STDERR_KEEP_BYTES = 64 * 1024;

/** Returns the environment goald runs git with: the caller's, minus repo redirections, plus safe defaults. */
export function gitEnv(extra?: Record<string, string>): NodeJS.ProcessEnv {
  const env = withoutRepoLocationEnv();
  // Optional locks off: read-only commands must never rewrite the user's index behind their back.
  env.GIT_OPTIONAL_LOCKS = '0';
  // Never wait on a credential or passphrase prompt nobody can answer.
  env.GIT_TERMINAL_PROMPT = '0';
  // Stable, parseable messages whatever the user's locale.
  env.LC_ALL = 'C';
  return { ...env, ...extra };
}

/** Returns process.env without the variables that redirect git to another repository or index. */
export function withoutRepoLocationEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...env };
  for (const name of REPO_LOCATION_VARS) delete copy[name];
  return copy;
}

/** Runs one git command and collects its output; throws GoaldError('internal') on unexpected failure. */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitResult> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<GitResult>((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdoutChunks: Buffer[] = [];
    let stderr = Buffer.alloc(0);
    let settled = false;

    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = (): void => {
      child.kill('SIGTERM');
      finish(() => reject(signal?.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (options.onStdout) options.onStdout(chunk);
      else stdoutChunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk]);
      if (stderr.length > STDERR_KEEP_BYTES) stderr = stderr.subarray(stderr.length - STDERR_KEEP_BYTES);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      finish(() => reject(describeSpawnError(error, options.cwd)));
    });
    child.on('close', (code, killSignal) => {
      finish(() => {
        const result: GitResult = {
          stdout: Buffer.concat(stdoutChunks).toString('utf8'),
          stderr: stderr.toString('utf8'),
          exitCode: code ?? 128,
        };
        if (result.exitCode === 0 || options.allowFailure) {
          resolve(result);
          return;
        }
        const how = killSignal ? `was killed by ${killSignal}` : `exited with ${result.exitCode}`;
        const said = result.stderr.trim();
        reject(
          new GoaldError(
            'internal',
            `git ${args.join(' ')} ${how} in ${options.cwd}${said ? `: ${said}` : ''}`,
            'check the repository with `git status` and `git fsck`',
          ),
        );
      });
    });

    // EPIPE on stdin means git stopped reading early; its exit status says whether that was a failure.
    child.stdin.on('error', () => undefined);
    writeInput(child.stdin, options.input);
  });
}

/** Pipes the stdout of one git command into another and returns the second one's result. */
export async function pipeGit(
  producerArgs: readonly string[],
  consumerArgs: readonly string[],
  options: Omit<RunGitOptions, 'input' | 'onStdout'>,
): Promise<GitResult> {
  const { signal } = options;
  if (signal?.aborted) throw signal.reason;
  const producer = spawn('git', producerArgs, {
    cwd: options.cwd,
    env: gitEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const producerDone = collectExit(producer, producerArgs, options.cwd, signal);
  // Surfaces the producer's failure even when the consumer fails first (e.g. on empty input).
  producerDone.catch(() => undefined);
  try {
    const consumed = await runGit(consumerArgs, { ...options, input: producer.stdout });
    await producerDone;
    return consumed;
  } catch (error) {
    producer.kill('SIGTERM');
    await producerDone.catch(() => undefined);
    throw error;
  }
}

function collectExit(
  child: ReturnType<typeof spawn>,
  args: readonly string[],
  cwd: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let stderr = '';
    const onAbort = (): void => {
      child.kill('SIGTERM');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP_BYTES) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      signal?.removeEventListener('abort', onAbort);
      reject(describeSpawnError(error, cwd));
    });
    child.on('close', (code, killSignal) => {
      signal?.removeEventListener('abort', onAbort);
      if (code === 0) resolve();
      else if (signal?.aborted) reject(signal.reason);
      else {
        const how = killSignal ? `was killed by ${killSignal}` : `exited with ${code}`;
        reject(new GoaldError('internal', `git ${args.join(' ')} ${how} in ${cwd}: ${stderr.trim()}`));
      }
    });
  });
}

function writeInput(stdin: NodeJS.WritableStream, input: RunGitOptions['input']): void {
  if (input === undefined) stdin.end();
  else if (typeof input === 'string' || Buffer.isBuffer(input)) stdin.end(input);
  else input.pipe(stdin);
}

function describeSpawnError(error: NodeJS.ErrnoException, cwd: string): GoaldError {
  if (error.code === 'ENOENT') {
    return new GoaldError(
      'internal',
      `could not run git in ${cwd}: git is not on PATH or the directory is gone`,
      'install git (https://git-scm.com) and check that the workspace still exists',
      { cause: error },
    );
  }
  return new GoaldError('internal', `could not run git in ${cwd}: ${error.message}`, undefined, { cause: error });
}
