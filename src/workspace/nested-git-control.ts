// A repository inside the work tree has a git directory of its own, with a config and hooks no snapshot,
// diff or sandbox mount covers (its `.git` is left out of every look at files). Staged in your index as a
// submodule, it is a repository your `git status` runs git in, and that git runs what its config names
// (`core.fsmonitor`, a filter driver, an include) outside any sandbox; `git submodule update` runs its
// hooks. This finds, for each nested repository, the config files and hooks changed during the agent's
// turns (by ctime, as ignored-changes.ts does) that name a program: a fresh `git init` or `git remote add`
// names none.

import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

import { readFileStart } from '../read-file-start.js';
import { withinWindows, type TimeWindow } from './time-window.js';

/** A nested repository's config or hook, changed during the agent's turns, that makes git run a program. */
export interface NestedGitControlChange {
  /** The repository's path from the top (no trailing `/`). */
  repo: string;
  /** The file, from the top when it lies in the work tree, else absolute. */
  file: string;
  /** What it names: `core.fsmonitor`, `a hook`, ... */
  names: string;
}

// Config sections and keys through which git runs a program (or reads another file that may).
const PROGRAM_KEYS: ReadonlyArray<[RegExp, string]> = [
  [/^\s*fsmonitor\s*=/im, 'core.fsmonitor'],
  [/^\s*hookspath\s*=/im, 'core.hooksPath'],
  [/^\s*(?:sshcommand|askpass|gitproxy|editor|pager)\s*=/im, 'a command (core)'],
  [/^\s*\[\s*(?:filter|diff|merge)\b/im, 'a filter, diff or merge driver'],
  [/^\s*\[\s*include(?:if)?\b/im, 'an include of another config'],
  [/^\s*(?:program|helper)\s*=/im, 'a program (gpg, credential)'],
  [/^\s*\[\s*(?:alias|pager)\b/im, 'an alias or pager'],
];
// Read of one config: git's own are a few hundred bytes.
const CONFIG_READ_BYTES = 64 * 1024;

/** For each repository (paths from `cwd`), its config and hooks changed within `windows` that name a program. */
export async function nestedGitControlChanges(cwd: string, repos: readonly string[], windows: readonly TimeWindow[]): Promise<NestedGitControlChange[]> {
  const found = await Promise.all(repos.map((repo) => controlChangesOf(cwd, repo, windows)));
  return found.flat();
}

async function controlChangesOf(cwd: string, repo: string, windows: readonly TimeWindow[]): Promise<NestedGitControlChange[]> {
  const gitDir = await gitDirOf(path.join(cwd, repo));
  if (gitDir === null) return [];
  const commonDir = firstLine(path.join(gitDir, 'commondir')) ?? '';
  const dirs = [...new Set([gitDir, commonDir === '' ? gitDir : path.resolve(gitDir, commonDir)])];
  const shown = (file: string): string => {
    const relative = path.relative(cwd, file);
    return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative.split(path.sep).join('/');
  };
  const changes: NestedGitControlChange[] = [];
  for (const dir of dirs) {
    for (const name of ['config', 'config.worktree']) {
      const file = path.join(dir, name);
      if (!(await changedWithin(file, windows))) continue;
      const text = readFileStart(file, CONFIG_READ_BYTES) ?? '';
      const names = PROGRAM_KEYS.filter(([pattern]) => pattern.test(text)).map(([, what]) => what);
      if (names.length > 0) changes.push({ repo, file: shown(file), names: names.join(', ') });
    }
  }
  const hooks = path.join(dirs.at(-1) ?? gitDir, 'hooks');
  let entries: string[] = [];
  try {
    entries = await readdir(hooks);
  } catch {
    // No hooks directory: nothing runs from it.
  }
  for (const name of entries.filter((entry) => !entry.endsWith('.sample')).sort()) {
    const file = path.join(hooks, name);
    if (await changedWithin(file, windows)) changes.push({ repo, file: shown(file), names: `a hook (${name})` });
  }
  return changes;
}

// The repository's git directory: its `.git` directory, or where its `.git` file (`gitdir: …`) points.
async function gitDirOf(repoDir: string): Promise<string | null> {
  const dotGit = path.join(repoDir, '.git');
  try {
    const stats = await lstat(dotGit);
    if (stats.isDirectory()) return dotGit;
    if (!stats.isFile()) return null;
  } catch {
    return null;
  }
  const line = firstLine(dotGit);
  const target = line?.startsWith('gitdir:') === true ? line.slice('gitdir:'.length).trim() : '';
  return target === '' ? null : path.resolve(repoDir, target);
}

async function changedWithin(file: string, windows: readonly TimeWindow[]): Promise<boolean> {
  try {
    return withinWindows((await lstat(file)).ctimeMs, windows);
  } catch {
    return false;
  }
}

function firstLine(file: string): string | null {
  const text = readFileStart(file, 4_096) ?? '';
  return text === '' ? null : (text.split('\n')[0] ?? '').trim();
}
