// Which paths a sandboxed turn may write, read or not see: the workspace, the agent CLI's own state
// (per adapter), package caches, goald's files and the user's secret stores, and the user's additions.
// Pure but for existence checks; every path comes out absolute and real (symlinks resolved).

import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { AdapterName, SandboxSettings } from '../config/types.js';
import type { SandboxView } from './types.js';

/** The agent CLIs goald knows the state of (a `command` agent running one of them gets its profile). */
export type CliProfile = Exclude<AdapterName, 'command'>;

/** What each CLI writes under the home directory (its sessions, settings, credentials, history). */
const CLI_STATE: Readonly<Record<CliProfile, { dirs: readonly string[]; files: readonly string[] }>> = {
  'claude-code': { dirs: ['~/.claude'], files: ['~/.claude.json', '~/.claude.json.backup'] },
  codex: { dirs: ['~/.codex'], files: [] },
  gemini: { dirs: ['~/.gemini'], files: [] },
  aider: { dirs: ['~/.aider'], files: ['~/.aider.chat.history.md', '~/.aider.input.history'] },
  // goald's own agent keeps nothing outside the turn's state directory.
  builtin: { dirs: [], files: [] },
};
/** The variables that move a CLI's state directory elsewhere. */
const CLI_STATE_VARIABLES: Readonly<Partial<Record<CliProfile, string>>> = { 'claude-code': 'CLAUDE_CONFIG_DIR', codex: 'CODEX_HOME' };

/** Package caches every turn and check may write (installs work, and stay fast). */
const CACHES: readonly string[] = ['~/.npm', '~/.cache'];

/** The user's secret stores: hidden from every turn and check. */
const SECRET_STORES: readonly string[] = [
  '~/.ssh',
  '~/.aws',
  '~/.azure',
  '~/.config/gcloud',
  '~/.config/gh',
  '~/.docker/config.json',
  '~/.git-credentials',
  '~/.gnupg',
  '~/.kube',
  '~/.netrc',
  '~/.npmrc',
  '~/.pypirc',
];

export interface ProfileInput {
  settings: SandboxSettings;
  /** The user's home directory (`~`). */
  home: string;
  /** The workspace's top level. */
  workspace: string;
  /**
   * Git directories a commit writes: outside the workspace, a linked worktree's git dir and common dir;
   * inside it, its own `.git` directory, whose mount onto itself keeps a turn from renaming or removing it.
   */
  gitDirs: readonly string[];
  /** GOALD_HOME, the user config's directory and the daemon's socket: hidden. */
  goaldPaths: readonly string[];
  /**
   * Directories the sandbox must show read-only whatever else hides them: goald's own installation (a
   * turn runs `goald hook` and `goald agent` from it) and the Node.js that runs it, which may live under
   * the private /tmp (a clone or an npx cache there).
   */
  runtime?: readonly string[];
  /**
   * The repository's config files and hooks directories (git-control.ts): read-only, inside a writable
   * workspace or git directory too. A `sandbox.writable` entry naming one exactly makes it writable again.
   */
  gitControl?: readonly string[];
  /** The CLI whose state the turn may write; null for checks and unknown commands. */
  cli: CliProfile | null;
  env: NodeJS.ProcessEnv;
  /** Per-turn additions: the prompt file (read) and the hook's state directory (write). */
  turn?: { readable: readonly string[]; writable: readonly string[] };
}

/** `~` and `~/x` against `home`; other paths resolved as absolute. */
export function expandHome(file: string, home: string): string {
  if (file === '~') return home;
  if (file.startsWith('~/')) return path.join(home, file.slice(2));
  return path.resolve(file);
}

/** The real path of an existing path; null when it does not exist (or cannot be resolved). */
export function realPathOf(file: string): string | null {
  // Most of a view's paths (secret stores, other CLIs' state) are absent: existsSync answers those
  // without the error object a failed realpath builds.
  if (!existsSync(file)) return null;
  try {
    // realpath(3): one system call, where the JavaScript realpathSync takes an lstat per path component,
    // and a view resolves a few dozen paths per turn and per check.
    return realpathSync.native(file);
  } catch {
    return null;
  }
}

/** What a turn (cli set) or a check (cli null) sees. */
export function buildView(input: ProfileInput): SandboxView {
  const absent: string[] = [];
  const real = (files: readonly string[]): string[] => {
    const found: string[] = [];
    for (const file of files) {
      const expanded = expandHome(file, input.home);
      const resolved = realPathOf(expanded);
      if (resolved === null) absent.push(expanded);
      else if (!found.includes(resolved)) found.push(resolved);
    }
    return found;
  };
  const otherClis = (Object.keys(CLI_STATE) as CliProfile[]).filter((cli) => cli !== input.cli);
  const writable = real([
    input.workspace,
    ...input.gitDirs,
    ...(input.cli === null ? [] : cliState(input.cli, input.env)),
    ...CACHES,
    ...input.settings.writable,
    ...(input.turn?.writable ?? []),
  ]);
  const readable = real([...(input.runtime ?? []), ...(input.gitControl ?? []), ...input.settings.readable, ...(input.turn?.readable ?? [])]);
  // Other CLIs' state holds their vendors' credentials: hidden, like their variables (secrets/child-env.ts).
  const hidden = real([
    ...input.goaldPaths,
    ...SECRET_STORES,
    ...otherClis.flatMap((cli) => cliState(cli, input.env)),
    ...input.settings.hidden,
  ]).filter((file) => !writable.includes(file) && !readable.includes(file));
  return { writable, readable, hidden, private: ['/tmp'], network: input.settings.network, absent };
}

/** The CLI state paths of `cli`, with the directory its state variable names (CLAUDE_CONFIG_DIR, CODEX_HOME). */
function cliState(cli: CliProfile, env: NodeJS.ProcessEnv): string[] {
  return [...cliStateDirectories(cli, env), ...CLI_STATE[cli].files];
}

/** The directories among a CLI's state paths, which goald creates before the first turn so the CLI can write there. */
export function cliStateDirectories(cli: CliProfile, env: NodeJS.ProcessEnv): string[] {
  const variable = CLI_STATE_VARIABLES[cli];
  const moved = variable === undefined ? undefined : env[variable];
  return [...CLI_STATE[cli].dirs, ...(moved !== undefined && path.isAbsolute(moved) ? [moved] : [])];
}

/**
 * Every directory under the home a sandboxed turn may write, whichever CLI it runs (`~/`-relative, or
 * absolute where a variable moved it): goald never takes a program of its own from there (goald-tools.ts).
 */
export function turnWritableHomeDirectories(env: NodeJS.ProcessEnv): string[] {
  return [...CACHES, ...(Object.keys(CLI_STATE) as CliProfile[]).flatMap((cli) => cliStateDirectories(cli, env))];
}

/** The package caches, which goald creates like the CLI's directories. */
export function cacheDirectories(): readonly string[] {
  return CACHES;
}
