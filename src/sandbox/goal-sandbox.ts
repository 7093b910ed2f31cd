// One goal's sandbox: decided once when the goal is built (mode, bwrap probe, the user's paths checked),
// then asked for a wrapper per agent turn and per check run. `required` without a working bwrap refuses
// the goal (exit 2); `auto` without one runs unsandboxed, warning once per process (a daemon start).

import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { resolveSocketPath } from '../../state/paths.js';
import { readCommandName } from '../agents/which.js';
import { DEFAULT_SANDBOX } from '../config/defaults.js';
import { resolveUserConfigPath } from '../config/resolve-settings.js';
import type { AgentSpec, SandboxMode, SandboxSettings } from '../config/types.js';
import { GoaldError } from '../errors.js';
import { checkSandboxPaths } from './check-paths.js';
import { probeBwrap, type BwrapProbe } from './probe.js';
import { gitControlPaths, gitDirectoryToPin } from './git-control.js';
import { buildView, cacheDirectories, cliStateDirectories, expandHome, type CliProfile, type ProfileInput } from './profile.js';
import { toBwrapArgs } from './bwrap-args.js';
import type { SandboxUse, SandboxView, SandboxWrap } from './types.js';
import { worktreeGoalGitDirs } from '../worktree/sandbox-git-dirs.js';

// Bound over hidden files: an empty file of goald's own, read-only.
const EMPTY_FILE_NAME = 'sandbox-empty';

const CLI_OF_COMMAND: Readonly<Record<string, CliProfile>> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini', aider: 'aider' };

let warnedUnavailable = false;

export interface GoalSandboxInput {
  /** Absent in settings stored before the sandbox existed: the defaults. */
  settings: SandboxSettings | undefined;
  workspace: { root: string; gitDir: string; commonDir: string };
  agent: Pick<AgentSpec, 'adapter' | 'command'>;
  /** GOALD_HOME of the process that runs the goal. */
  goaldHome: string;
  /** Its environment: HOME, XDG_CONFIG_HOME, GOALD_SOCKET, PATH, CLAUDE_CONFIG_DIR, CODEX_HOME. */
  env: NodeJS.ProcessEnv;
}

export interface GoalSandbox {
  readonly mode: SandboxMode;
  readonly use: SandboxUse;
  /** Why bwrap cannot be used, when it cannot (also when the mode is `off`, for `goald sandbox check`). */
  readonly problem: { problem: string; fix: string } | null;
  /** The warning of an `auto` sandbox that fell back, on the first such goal of this process; else null. */
  readonly warning: string | null;
  /** The bwrap executable that works here; null when none does. */
  readonly executable: string | null;
  /** What an agent turn sees (with `files`: its prompt file readable, its hook state directory writable). */
  viewForTurn(files?: TurnFiles): SandboxView;
  /** What a check sees (no agent CLI's state). */
  viewForChecks(): SandboxView;
  /** The wrapper of one agent turn; null when unsandboxed. */
  forTurn(files: TurnFiles): SandboxWrap | null;
  /** The wrapper of the goal's checks; null when unsandboxed. */
  forChecks(): SandboxWrap | null;
}

export interface TurnFiles {
  promptPath: string;
  /** The turn's state directory, writable in the sandbox; null for an adapter that keeps none. */
  stateDir: string | null;
}

// What a goal with sandbox "off" knows of bwrap: nothing, and nothing wrong with it either.
const NOT_PROBED: BwrapProbe = { ok: true, executable: '' };

/** Decides and prepares one goal's sandbox; throws a `config` GoaldError for bad paths and for `required` without bwrap. */
export async function openGoalSandbox(
  input: GoalSandboxInput,
  options: { refuse?: boolean; probeWhenOff?: boolean; freshProbe?: boolean } = {},
): Promise<GoalSandbox> {
  const settings = input.settings ?? { ...DEFAULT_SANDBOX };
  const home = input.env.HOME !== undefined && input.env.HOME !== '' ? input.env.HOME : homedir();
  const userConfigDir = path.dirname(resolveUserConfigPath(input.env));
  checkSandboxPaths(settings, {
    home,
    workspace: input.workspace.root,
    goald: [
      { path: input.goaldHome, name: 'GOALD_HOME' },
      { path: userConfigDir, name: "goald's config directory" },
    ],
  });
  // A goal that runs unsandboxed by setting does not pay for bwrap's set-up (a process start) to learn
  // whether it works; `goald sandbox` asks anyway, to report it.
  const probe: BwrapProbe =
    settings.mode === 'off' && options.probeWhenOff !== true
      ? NOT_PROBED
      : await probeBwrap(settings.bwrap === null ? null : expandHome(settings.bwrap, home), settings.network, input.env, {
          goaldHome: input.goaldHome,
          fresh: options.freshProbe === true,
        });
  const problem = probe.ok ? null : { problem: probe.problem, fix: probe.fix };
  if (settings.mode === 'required' && problem !== null && options.refuse !== false) {
    throw new GoaldError('config', `sandbox "required": ${problem.problem}`, problem.fix);
  }
  const use: SandboxUse = settings.mode === 'off' ? 'off' : problem === null ? 'bwrap' : 'unavailable';
  let warning: string | null = null;
  if (use === 'unavailable' && problem !== null && !warnedUnavailable && options.refuse !== false) {
    warnedUnavailable = true;
    warning = `agent turns and checks run without a sandbox: ${problem.problem} (fix: ${problem.fix})`;
  }

  const cli = cliOf(input.agent);
  const outside = (dir: string): boolean => path.relative(input.workspace.root, dir).startsWith('..');
  const base: Omit<ProfileInput, 'cli' | 'turn'> = {
    settings,
    home,
    workspace: input.workspace.root,
    gitDirs: [
      ...(worktreeGoalGitDirs(input.workspace, input.goaldHome) ?? [...new Set([input.workspace.gitDir, input.workspace.commonDir])]).filter(outside),
      // The work tree's own `.git` directory, bound onto itself: a turn cannot move it aside (git-control.ts).
      ...[gitDirectoryToPin(input.workspace)].filter((dir) => dir !== null),
    ],
    goaldPaths: [input.goaldHome, userConfigDir, resolveSocketPath(input.env, input.goaldHome)],
    runtime: [goaldInstallRoot(), path.dirname(process.execPath)],
    env: input.env,
  };
  // Looked up when the sandbox is first used (a hooks directory may be made), not when only validated.
  let gitControl: string[] | null = null;
  const emptyFile = path.join(input.goaldHome, EMPTY_FILE_NAME);
  let prepared = false;
  // On first use, not when the goal is only validated: the empty file, and the CLI's and caches' directories.
  const prepare = (): void => {
    if (prepared) return;
    prepared = true;
    if (!existsSync(emptyFile)) writeFileSync(emptyFile, '', { mode: 0o400 });
    for (const dir of [...(cli === null ? [] : cliStateDirectories(cli, input.env)), ...cacheDirectories()]) {
      try {
        mkdirSync(expandHome(dir, home), { recursive: true, mode: 0o700 });
      } catch {
        // A read-only home: the directory stays absent, and the sandbox mounts nothing for it.
      }
    }
  };
  const executable = probe.ok ? probe.executable : '';
  // The view is built only for bwrap: an unsandboxed turn has no use for its few dozen path lookups.
  const wrap = (view: () => SandboxView): SandboxWrap | null => {
    if (use !== 'bwrap') return null;
    prepare();
    return { executable, args: toBwrapArgs(view(), { cwd: input.workspace.root, emptyFile, isDirectory }) };
  };
  const controlled = (): string[] => (gitControl ??= gitControlPaths(input.workspace, { makeHooks: prepared }));
  const viewForTurn = (files?: TurnFiles): SandboxView =>
    buildView({
      ...base,
      gitControl: controlled(),
      cli,
      ...(files === undefined ? {} : { turn: { readable: [files.promptPath], writable: files.stateDir === null ? [] : [files.stateDir] } }),
    });
  const viewForChecks = (): SandboxView => buildView({ ...base, gitControl: controlled(), cli: null });
  return {
    mode: settings.mode,
    use,
    executable: probe.ok && probe !== NOT_PROBED ? probe.executable : null,
    problem,
    warning,
    viewForTurn,
    viewForChecks,
    forTurn: (files) => wrap(() => viewForTurn(files)),
    forChecks: () => wrap(viewForChecks),
  };
}

/** The CLI profile of an agent: its adapter's, or for a `command` agent the CLI its command runs. */
export function cliOf(agent: Pick<AgentSpec, 'adapter' | 'command'>): CliProfile | null {
  if (agent.adapter !== 'command') return agent.adapter;
  const name = readCommandName(agent.command)?.split('/').at(-1);
  return name === undefined ? null : (CLI_OF_COMMAND[name] ?? null);
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The directory goald is installed in: the nearest one above this module whose package.json names goald
 * (the bundle's own dist/bundle/package.json names nothing), else this module's directory.
 */
function goaldInstallRoot(): string {
  let dir = import.meta.dirname;
  for (;;) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && Reflect.get(parsed, 'name') === 'goald') return dir;
    } catch {
      // no package.json here, or not JSON: look further up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return import.meta.dirname;
    dir = parent;
  }
}
