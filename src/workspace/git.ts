// Runs git directly on the snapshot hot path, with an environment goald chooses rather than inherits.
// simple-git's `.env()` replaces the whole environment and refuses EDITOR/PAGER, so it is not used here.
// The repository is untrusted (an agent with the user's uid edits its .git/config): no git call goald makes
// runs a program the repository names (fsmonitor, hooks, filter drivers), and every call has a deadline.
// Over 400 lines because every way goald runs git (one call, a pipe, the snapshot's one shell) shares that
// hardening here, and nowhere else.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';

import { quoteForShell } from '../agents/shell-quote.js';
import { GoaldError } from '../errors.js';
import { findTool } from '../process/goald-tools.js';
import { terminateGroup } from '../process/terminate-group.js';
import { splitFirstLine } from './first-line.js';
import { unsetsEveryFilter } from './snapshot-git-dir.js';

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
  /** Kill git (its whole process group) after this long; GIT_TIMEOUT_MS by default, 0 = never. */
  timeoutMs?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

// Keeps the end of stderr only: git's useful complaint is the last line, and a chatty hook could flood.
const STDERR_KEEP_BYTES = 64 * 1024;

/**
 * The longest one git call may take. `git add -A` of a 50k-file tree takes about what `git status` does
 * (~1 s); a minute leaves room for a cold disk and a huge monorepo, and still ends a hung call.
 */
export const GIT_TIMEOUT_MS = 60_000;
// A timed-out or aborted git gets this long between SIGTERM and SIGKILL: git itself stops at once, and
// nothing it was running is worth waiting for.
const GIT_KILL_GRACE_MS = 1_000;

/**
 * Settings that stop a repository's own configuration from running programs: `core.fsmonitor` (a command
 * git runs on every index refresh; `sleep 15` there once stretched a 5 s turn to 61 s) and hooks
 * (`git add` runs `post-index-change`). `/dev/null` is not a directory, so no hook is ever found in it.
 */
const HARDENING_CONFIG = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null'] as const;

/**
 * Commands that never read work-tree files. Any other may run a `.gitattributes` filter driver's clean
 * command on them: not only `add` and `status`, also `write-tree` (it re-checks racily clean entries).
 * git has no switch to turn drivers off (git 2.40's `--attr-source` would hide `.gitattributes`, too new to
 * rely on), so before any other command runs, every driver configured is named and overridden with empty
 * commands (see filterOverrides).
 */
const TREE_ONLY_COMMANDS = new Set([
  'cat-file',
  'commit-tree',
  'config',
  'diff-tree',
  // Object transport and repository set-up: a cluster turn runs several (goal-branch.ts), and none reads
  // a work-tree file.
  'fetch',
  'for-each-ref',
  'init',
  'ls-remote',
  'ls-tree',
  'merge-base',
  'mktree',
  'pack-objects',
  'patch-id',
  'push',
  'rev-list',
  'rev-parse',
  'show-ref',
  'symbolic-ref',
  'update-ref',
  'version',
]);

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
export async function runGit(args: readonly string[], options: RunGitOptions): Promise<GitResult> {
  const { signal } = options;
  if (signal?.aborted) throw signal.reason;
  const extraEnv = await hardenedEnv(args, options);
  return runHardenedGit(args, { ...options, env: extraEnv });
}

/**
 * A snapshot's git calls in one shell, so goald pays one process start instead of several (each spawn
 * blocks Node's event loop for 1–2 ms while it forks and execs): `git <addArgs>` and `git <writeTreeArgs>`,
 * after listing the repository's filter drivers and overriding them all (as hardenedEnv does) unless the
 * git directory already keeps every driver from running (a goal's snapshot git directory). The listing
 * runs after the turn that could have configured a driver has ended, and right before the commands it
 * protects. Resolves with write-tree's output; one deadline covers them all.
 *
 * `thenArgs`: a tree-only git command (diff-tree) the shell then becomes, printing after write-tree's line
 * and reading the shell's stdin (`options.input`), which nothing before it reads: a turn's snapshot and
 * its diff in one process start (WorkspaceTrees.snapshotTurn).
 *
 * `onIndexed`: called once `git add` has succeeded, before write-tree. From then on the work tree may
 * change without changing the snapshot: write-tree and diff-tree read only the index and objects.
 */
export async function addAndWriteTree(
  addArgs: readonly string[],
  writeTreeArgs: readonly string[],
  options: RunGitOptions & { onIndexed?: () => void },
  thenArgs?: readonly string[],
): Promise<GitResult> {
  if (thenArgs !== undefined && !TREE_ONLY_COMMANDS.has(subcommandOf(thenArgs) ?? '')) {
    throw new GoaldError('internal', `git ${thenArgs.join(' ')} may read work-tree files: it cannot follow a snapshot in its shell`);
  }
  const executable = quoteForShell(gitExecutable(options.cwd));
  const git = (args: readonly string[]): string => `${executable} ${[...HARDENING_CONFIG, ...args].map(quoteForShell).join(' ')}`;
  const script = [
    `g() { ${executable} ${HARDENING_CONFIG.map(quoteForShell).join(' ')} "$@"; }`,
    ...(driversCannotRun(addArgs, options.env) ? [] : OVERRIDE_DRIVERS_IN_SHELL),
    // add's stdout goes to stderr: the shell's stdout holds only the marker and what write-tree prints.
    `g ${addArgs.map(quoteForShell).join(' ')} </dev/null >&2 || exit`,
    ...(options.onIndexed === undefined ? [] : [`echo ${INDEXED_LINE}`]),
    thenArgs === undefined ? `exec ${git(writeTreeArgs)} </dev/null` : `${git(writeTreeArgs)} </dev/null || exit\nexec ${git(thenArgs)}`,
  ].join('\n');
  const then = thenArgs === undefined ? '' : ` + ${subcommandOf(thenArgs) ?? 'diff-tree'}`;
  const label = `${subcommandOf(addArgs) ?? 'add'} + ${subcommandOf(writeTreeArgs) ?? 'write-tree'}${then} (one shell)`;
  const { onIndexed, ...gitOptions } = options;
  if (onIndexed === undefined) return runHardenedGit([label], gitOptions, ['/bin/sh', ['-c', script]]);
  const collected: Buffer[] = [];
  const deliver = gitOptions.onStdout ?? ((chunk: Buffer): void => void collected.push(chunk));
  const onStdout = splitFirstLine((line) => {
    if (line.toString('utf8') === INDEXED_LINE) onIndexed();
    else deliver(Buffer.concat([line, Buffer.from('\n')])); // not the marker: whoever reads the output says so
    return deliver;
  });
  const result = await runHardenedGit([label], { ...gitOptions, onStdout }, ['/bin/sh', ['-c', script]]);
  return gitOptions.onStdout === undefined ? { ...result, stdout: Buffer.concat(collected).toString('utf8') } : result;
}

// The snapshot shell's version of hardenedEnv: lists the drivers with `g` (git, hardened) and exports an
// override of each, as filterOverrides does.
const OVERRIDE_DRIVERS_IN_SHELL = [
  // Newline-separated: a subsection name cannot hold a newline (git's config parser refuses one).
  `keys=$(g config --name-only --get-regexp '^filter\\.' </dev/null)`,
  'status=$?',
  'if [ "$status" -gt 1 ]; then exit "$status"; fi', // 1: no driver configured
  'n=0',
  'while IFS= read -r key; do',
  // filter.<driver>.<setting>: the driver (a subsection) may itself hold dots, `=` or quotes; it is only
  // ever expanded inside double quotes, never evaluated.
  '  case $key in filter.*.*) ;; *) continue ;; esac',
  '  driver=${key#filter.}',
  '  driver=${driver%.*}',
  '  for setting in clean smudge process required; do',
  '    value=',
  '    if [ "$setting" = required ]; then value=false; fi',
  '    export "GIT_CONFIG_KEY_$n=filter.$driver.$setting" "GIT_CONFIG_VALUE_$n=$value"',
  '    n=$((n + 1))',
  '  done',
  'done <<GOALD_FILTER_KEYS',
  '$keys',
  'GOALD_FILTER_KEYS',
  'if [ "$n" -gt 0 ]; then export GIT_CONFIG_COUNT="$n"; fi',
];

// The line the snapshot's shell prints between `git add` and write-tree (a tree id is hex: never this).
const INDEXED_LINE = 'indexed';

function runHardenedGit(args: readonly string[], options: RunGitOptions, program?: [string, string[]]): Promise<GitResult> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<GitResult>((resolve, reject) => {
    const child = spawnGit(args, options.cwd, options.env, ['pipe', 'pipe', 'pipe'], program);
    const stdoutChunks: Buffer[] = [];
    let stderr = Buffer.alloc(0);
    let settled = false;

    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = (): void => {
      killGit(child);
      finish(() => reject(signal?.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            killGit(child);
            finish(() => reject(timeoutError(args, options.cwd, timeoutMs)));
          }, timeoutMs)
        : undefined;

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
    child.stdin?.on('error', () => undefined);
    if (child.stdin !== null) writeInput(child.stdin, options.input);
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
  const [producerEnv, consumerEnv] = await Promise.all([hardenedEnv(producerArgs, options), hardenedEnv(consumerArgs, options)]);
  const producer = spawnGit(producerArgs, options.cwd, producerEnv, ['ignore', 'pipe', 'pipe']);
  const producerDone = collectExit(producer, producerArgs, options.cwd, signal);
  // Surfaces the producer's failure even when the consumer fails first (e.g. on empty input).
  producerDone.catch(() => undefined);
  try {
    // The consumer's deadline ends the producer too (below): the pair is one call with one deadline.
    const consumed = await runHardenedGit(consumerArgs, { ...options, env: consumerEnv, input: producer.stdout });
    await producerDone;
    return consumed;
  } catch (error) {
    killGit(producer);
    await producerDone.catch(() => undefined);
    throw error;
  }
}

// git leads its own process group, so a timeout or an abort also ends whatever it started.
function spawnGit(
  args: readonly string[],
  cwd: string,
  env: Record<string, string> | undefined,
  stdio: ['pipe' | 'ignore', 'pipe', 'pipe'],
  program: [string, string[]] = [gitExecutable(cwd), [...HARDENING_CONFIG, ...args]],
): ChildProcess & { stdout: Readable; stderr: Readable } {
  const child = spawn(program[0], program[1], { cwd, env: gitEnv(env), stdio, detached: true });
  if (child.stdout === null || child.stderr === null) throw new Error('git was spawned without its output pipes');
  return Object.assign(child, { stdout: child.stdout, stderr: child.stderr });
}

// Fire and forget: the caller settles at once; the group gets SIGTERM, then SIGKILL after the grace.
function killGit(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  void terminateGroup(child.pid, { graceMs: GIT_KILL_GRACE_MS });
}

function timeoutError(args: readonly string[], cwd: string, timeoutMs: number): GoaldError {
  return new GoaldError(
    'internal',
    `git ${args.join(' ')} did not finish within ${Math.round(timeoutMs / 1000)} s in ${cwd}`,
    'check the repository with `git status` (a huge untracked directory? add it to .gitignore)',
  );
}

/**
 * The caller's extra environment, plus, for a command that may read work-tree files, an override of every
 * filter driver the repository's configuration names. The overrides travel in GIT_CONFIG_COUNT/KEY/VALUE,
 * not `-c`, because a driver's name may hold `=` and `-c` splits at the first one.
 */
async function hardenedEnv(args: readonly string[], options: RunGitOptions): Promise<Record<string, string> | undefined> {
  const command = subcommandOf(args);
  if (command === undefined || TREE_ONLY_COMMANDS.has(command) || driversCannotRun(args, options.env)) return options.env;
  const drivers = await listFilterDrivers(options);
  if (drivers.length === 0) return options.env;
  return { ...options.env, ...filterOverrides(drivers) };
}

/**
 * Whether git, run with these arguments in this environment, can run no filter driver at all: its git
 * directory is a snapshot's (GIT_DIR, absolute and not overridden by an argument), whose attributes unset
 * `filter` for every path (snapshot-git-dir.ts). Listing the drivers to override them is then a git
 * process of its own for nothing, on every snapshot (2.5–3 ms of a turn).
 */
function driversCannotRun(args: readonly string[], env: Record<string, string> | undefined): boolean {
  const gitDir = env?.GIT_DIR;
  if (gitDir === undefined || !path.isAbsolute(gitDir) || args.some((arg) => arg.startsWith('--git-dir'))) return false;
  return unsetsEveryFilter(gitDir);
}

/** The git subcommand of an argument list: the first word that is not a global option. */
function subcommandOf(args: readonly string[]): string | undefined {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg === '-c' || arg === '-C') index += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** The names of the filter drivers any configuration of this repository defines (includes followed). */
async function listFilterDrivers(options: RunGitOptions): Promise<string[]> {
  const listed = await runHardenedGit(['config', '--null', '--name-only', '--get-regexp', '^filter\\.'], {
    cwd: options.cwd,
    env: options.env,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    allowFailure: true, // exit 1: no filter configured
  });
  const names = new Set<string>();
  for (const key of listed.stdout.split('\0')) {
    // filter.<driver>.<setting>: the driver (a subsection) may itself hold dots.
    const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (match?.[1] !== undefined) names.add(match[1]);
  }
  return [...names];
}

/**
 * Config, as environment, that makes each driver run nothing: empty clean/smudge commands are skipped, an
 * empty long-running `process` fails to start, and `required=false` lets git fall back to the file as it is.
 */
function filterOverrides(drivers: readonly string[]): Record<string, string> {
  const entries = drivers.flatMap((driver) =>
    ['clean', 'smudge', 'process', 'required'].map((setting) => [`filter.${driver}.${setting}`, setting === 'required' ? 'false' : ''] as const),
  );
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

function collectExit(
  child: ChildProcess & { stderr: Readable },
  args: readonly string[],
  cwd: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let stderr = '';
    const onAbort = (): void => {
      killGit(child);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr.on('data', (chunk: Buffer) => {
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

/**
 * The git goald runs in `cwd`: the first on PATH outside that work tree and the directories agent turns
 * may write (process/goald-tools.ts), so no agent's `git` ever takes a snapshot.
 */
function gitExecutable(cwd: string): string {
  const git = findTool('git', { cwd });
  if (git !== null) return git;
  throw new GoaldError(
    'internal',
    `could not run git in ${cwd}: no git on PATH outside the work tree and the directories agent turns may write`,
    'install git (https://git-scm.com), and have PATH name the directory that holds it',
  );
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

/** The directories git (`add`, `ls-files`) warned it could not open for lack of permission, from its stderr (paths from the top, ending in `/`). */
export function unreadableDirsIn(stderr: string): string[] {
  return deniedDirsIn(stderr, GIT_DENIED);
}

// git's warning about a directory it could not list; a name may hold newlines (git prints it as it is).
const GIT_DENIED = /^warning: could not open directory '([\s\S]*?)': Permission denied$/gm;

/**
 * The directories a tool's complaints name, by `pattern` (global, multiline, the path as its first group),
 * each ending in `/`. A name with a newline is matched across lines, up to the first `': Permission denied`
 * that ends one; a name forging that text yields a path that does not exist (ignored-changes.ts counts such
 * a directory as changed).
 */
export function deniedDirsIn(stderr: string, pattern: RegExp): string[] {
  const dirs: string[] = [];
  for (const match of stderr.matchAll(pattern)) {
    const dir = match[1] ?? '';
    if (dir !== '') dirs.push(dir.endsWith('/') ? dir : `${dir}/`);
  }
  return dirs;
}
