// An agent's process started ahead of its turn: its sandbox (bwrap, ~5 ms of set-up) and the fork happen
// while goald still records the turn before and writes the next prompt, and its shell waits at a gate for
// the one command it will exec. The command, its arguments and its environment come over the shell's
// stdin, a pipe only goald holds (never argv: /proc/<pid>/cmdline is world-readable), as a few lines of
// shell that export the environment and exec the command. The shell was started with the turn's token and
// the environment the agent's turns start from (AgentAdapter.environment: already its own, filtered of
// other vendors' keys), so the lines carry only what the turn changes, sets anew or removes, and the
// command runs with exactly the environment it was given. (`read` takes a pipe a byte at a time, and the
// gate's string grows line by line: ~0.3 ms a KB and quadratic beyond, 11 ms for a 16 KB prompt in argv and
// 56 ms for 64 KB. So a long script for a command with no stdin is read by `head -c` in one go, one fork
// for ~1 ms whatever its size: the pipe is ended right after it, so nothing a `head` read past is lost.)
// Nothing of the turn runs before claim(); a leader never claimed is ended by discard() (its shell, never
// sent its command, exits 125), and dies with goald in any case (bwrap's --die-with-parent).

import { quoteForShell } from '../agents/shell-quote.js';
import type { SandboxWrap } from '../sandbox/types.js';
import { markEnvironment, newProcessToken, readForkCount } from './escaped-processes.js';
import { terminateGroup } from './terminate-group.js';
import { spawnGroupLeader, type GroupLeader } from './spawn.js';

// Below this, reading byte by byte costs less than the fork of `head` (measured: even at ~3 KB).
export const READ_IN_ONE_GO_MIN_BYTES = 3 * 1024;

// The script's last line when it is read in one go: a comment, never reached (the line before execs).
const END_MARK = '#goald:end';

// Reads the script's line and byte counts, then the script, then runs it. A byte count of 0: that many
// lines by `read`, builtins only (no fork before the exec; `read` takes one byte at a time from a pipe, so
// whatever follows the script is the command's stdin). Otherwise (a long script, nothing after it) that many
// bytes by `head -c` when the sandbox has a `head`, by the lines when not; a script cut short (goald gone
// mid-write) lacks its last line, the end mark, and runs nothing.
export const READY_GATE =
  'read -r goald_n goald_b || exit 125; if [ "$goald_b" -gt 0 ] && command -v head >/dev/null 2>&1; then ' +
  `goald_s=$(head -c "$goald_b") || exit 125; case $goald_s in *'\n${END_MARK}') ;; *) exit 125 ;; esac; ` +
  'else goald_s=; while [ "$goald_n" -gt 0 ]; do IFS= read -r goald_l || exit 125; ' +
  'goald_s="$goald_s$goald_l\n"; goald_n=$((goald_n - 1)); done; fi; unset goald_n goald_b goald_l; eval "$goald_s"';

// The names a shell can export: others (rare: a dash or dot in the name) make the turn spawn as usual.
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A leader handed its command: the process, the token in its environment, and the fork count as if it had
 * been forked at the claim (its shell forks nothing before the exec, so whatever carries the token was
 * forked after): a turn that started nothing still skips the /proc sweep (escaped-processes.ts). A script
 * read by `head` counts one fork more, so that turn sweeps: never the other way round.
 */
export interface ClaimedLeader {
  leader: GroupLeader;
  token: string;
  forksBefore: number | null;
}

export interface ReadyLeader {
  /**
   * Execs `command args` in the waiting shell, with exactly `env` (and the token); `stdin` 'ignore' gives it
   * /dev/null, 'pipe' leaves it the pipe (write its input to `leader.stdin` and end it). Null, and the
   * leader is ended, when it is gone or was claimed already, `cwd` is not the one it was started in, or
   * `env` cannot be exported by a shell: start the command as usual then.
   */
  claim(command: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin: 'pipe' | 'ignore', cwd: string): ClaimedLeader | null;
  /** Ends the leader unless it was claimed; nothing of any turn ran in it. Idempotent. */
  discard(): void;
}

// Variables a shell sets or ignores from its environment (dash takes no IFS from it, bash sets SHLVL and
// `_`): never left to the shell's environment, always set by the lines themselves.
const SHELL_MANAGED = new Set(['IFS', 'PS1', 'PS2', 'PS4', 'OPTIND', 'PPID', 'PWD', 'OLDPWD', 'ENV', 'LINENO', 'SHLVL', '_', 'BASH_ENV', 'SHELLOPTS', 'BASHOPTS']);

/**
 * Starts a waiting shell in `sandbox`, in `cwd`, leading its own process group; `env`: the environment the
 * command is expected to have (a claim sends only how its own differs).
 */
export function startReadyLeader(options: { cwd: string; sandbox: SandboxWrap; env?: NodeJS.ProcessEnv }): ReadyLeader {
  // What the sandbox sets (`--setenv TMPDIR /tmp`) overrides the command's environment, as when spawned at once.
  const setBySandbox = new Set(options.sandbox.args.flatMap((arg, at, all) => (arg === '--setenv' && all[at + 1] !== undefined ? [all[at + 1]] : [])));
  const token = newProcessToken();
  const base: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value !== undefined && SHELL_NAME.test(name) && !SHELL_MANAGED.has(name) && !setBySandbox.has(name)) base[name] = value;
  }
  let leader: GroupLeader | null = spawnGroupLeader('/bin/sh', ['-c', READY_GATE], {
    cwd: options.cwd,
    env: markEnvironment(base, token),
    stdin: 'pipe',
    sandbox: options.sandbox,
  });
  // A shell that ended (bwrap could not set up) leaves nothing to write to: claim() then finds it gone.
  leader.stdin?.on('error', () => undefined);
  leader.on('error', () => undefined);

  const discard = (): void => {
    const unclaimed = leader;
    leader = null;
    if (unclaimed === null) return;
    unclaimed.stdin?.destroy();
    unclaimed.stdout.destroy();
    unclaimed.stderr.destroy();
    if (unclaimed.pid !== undefined && unclaimed.exitCode === null && unclaimed.signalCode === null) void terminateGroup(unclaimed.pid);
  };

  return {
    claim(command, args, env, stdin, cwd) {
      const waiting = leader;
      if (waiting === null) return null;
      const gone = waiting.pid === undefined || waiting.exitCode !== null || waiting.signalCode !== null || waiting.stdin === null || cwd !== options.cwd;
      const marked = Object.fromEntries(Object.entries(markEnvironment(env, token)).filter(([name]) => !setBySandbox.has(name)));
      if (gone || Object.keys(marked).some((name) => !SHELL_NAME.test(name))) {
        discard();
        return null;
      }
      leader = null;
      const forks = readForkCount();
      waiting.stdin?.write(execScript(command, args, marked, stdin, base));
      if (stdin === 'ignore') waiting.stdin?.end();
      return { leader: waiting, token, forksBefore: forks === null ? null : forks - 1 };
    },
    discard,
  };
}

/**
 * What the gate reads: the script's line count and byte count (0: read it by the lines), then the script
 * that makes the shell's environment `env` (it started with `base`: what is the same is left as it is) and
 * execs. Read in one go only when nothing follows it (`stdin` 'ignore') and it is long.
 */
export function execScript(command: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin: 'pipe' | 'ignore', base: Readonly<Record<string, string>> = {}): string {
  // The shell exports a PWD of its own, and keeps the script in goald_s: neither is the command's.
  const gone = Object.keys(base).filter((name) => env[name] === undefined);
  const lines = [['unset PWD goald_s', ...gone].join(' ')];
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (!Object.hasOwn(base, name) || value !== base[name])) lines.push(`export ${name}=${quoteForShell(value)}`);
  }
  if (stdin === 'ignore') lines.push('exec </dev/null');
  lines.push(`exec ${[command, ...args].map(quoteForShell).join(' ')}`);
  const script = lines.join('\n');
  if (stdin === 'pipe' || Buffer.byteLength(script) < READ_IN_ONE_GO_MIN_BYTES) return `${script.split('\n').length} 0\n${script}\n`;
  const marked = `${script}\n${END_MARK}\n`;
  return `${marked.split('\n').length - 1} ${Buffer.byteLength(marked)}\n${marked}`;
}
