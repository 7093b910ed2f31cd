// The files of your repository git runs programs from: its config (core.fsmonitor, filter drivers,
// core.hooksPath, aliases, core.sshCommand, ...) and its hooks, its submodules' too (`git status` runs git in
// each submodule), and the files that say where the git directory is (a linked worktree's `.git` file and
// `commondir`). A sandboxed turn or check sees them read-only (an in-place goal's turn may otherwise write
// the whole git directory): what an agent wrote there would run later, outside any sandbox, the next time
// you run git in that repository, and no diff would show it. The work tree's `.git` directory itself is
// bound onto itself (gitDirectoryToPin), so a turn cannot move it aside and make another. What a mount
// cannot cover, a file that does not exist yet (a `commondir` made in a main `.git`), the guard looks for
// after each turn (guard/git-redirects.ts).

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import type { ResolvedWorkspace } from '../workspace/find-workspace.js';

/**
 * The existing config files and hook directories of the workspace's repository and its submodules, and
 * the files that locate its git directory; `makeHooks`: a hooks directory is made when missing (when a
 * sandbox is about to be used, not when one is only described).
 */
export function gitControlPaths(workspace: Pick<ResolvedWorkspace, 'root' | 'gitDir' | 'commonDir'>, options: { makeHooks: boolean }): string[] {
  const found = controlOf(workspace.gitDir, workspace.commonDir, workspace.root, options);
  // Where git finds the git directory: a `.git` file (`gitdir: …`; a linked worktree, a submodule) and a
  // linked worktree's `commondir`, which names the directory its config and hooks are read from.
  const dotGit = path.join(workspace.root, '.git');
  if (isFile(dotGit)) found.push(dotGit);
  const commondir = path.join(workspace.gitDir, 'commondir');
  if (isFile(commondir)) found.push(commondir);
  found.push(...submoduleControl(path.join(workspace.commonDir, 'modules'), options));
  return [...new Set(found)];
}

// One git directory's config files and hooks (and the directory core.hooksPath names: relative to the
// work tree, so only an absolute one when the work tree is not known).
function controlOf(gitDir: string, commonDir: string, workTree: string | null, options: { makeHooks: boolean }): string[] {
  const found: string[] = [];
  for (const dir of new Set([gitDir, commonDir])) {
    for (const name of ['config', 'config.worktree']) {
      const file = path.join(dir, name);
      if (existsSync(file)) found.push(file);
    }
  }
  // A missing hooks directory would be the agent's to make: made here (git init makes one too), empty.
  const hooks = path.join(commonDir, 'hooks');
  try {
    if (options.makeHooks) mkdirSync(hooks, { recursive: true, mode: 0o755 });
  } catch {
    // A read-only repository: nobody makes it, the agent included.
  }
  if (existsSync(hooks)) found.push(hooks);
  const hooksPath = configuredHooksPath(path.join(commonDir, 'config'));
  if (hooksPath !== null && (workTree !== null || path.isAbsolute(hooksPath))) {
    const resolved = path.resolve(workTree ?? '/', hooksPath);
    if (existsSync(resolved)) found.push(resolved);
  }
  return found;
}

/** The work tree's own `.git` when it is a directory: bound onto itself, it cannot be renamed or removed. */
export function gitDirectoryToPin(workspace: Pick<ResolvedWorkspace, 'root'>): string | null {
  const dotGit = path.join(workspace.root, '.git');
  try {
    return statSync(dotGit).isDirectory() ? dotGit : null;
  } catch {
    return null;
  }
}

// Submodules' git directories (`.git/modules/<name>`, a name may hold slashes, nested ones under their
// own `modules/`): their config and hooks. A directory with HEAD and objects is a git directory, and
// nothing in it but its `modules/` is walked; the directories above one are its name's parts.
const MAX_DIRECTORIES_WALKED = 2_000;

function submoduleControl(modules: string, options: { makeHooks: boolean }): string[] {
  const found: string[] = [];
  if (!existsSync(modules)) return found; // most repositories have no submodule
  const pending = [modules];
  let walked = 0;
  while (pending.length > 0 && walked < MAX_DIRECTORIES_WALKED) {
    const dir = pending.pop() ?? '';
    walked += 1;
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch {
      continue;
    }
    if (isFile(path.join(dir, 'HEAD')) && names.includes('objects')) {
      found.push(...controlOf(dir, dir, null, options));
      if (names.includes('modules')) pending.push(path.join(dir, 'modules'));
      continue;
    }
    for (const name of names) pending.push(path.join(dir, name));
  }
  return found;
}

function isFile(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

// `core.hooksPath` from a config file (the common case: `hooksPath = .husky/_` under `[core]`); includes are
// not followed. Null when unset or unreadable.
function configuredHooksPath(configFile: string): string | null {
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch {
    return null;
  }
  let inCore = false;
  let value: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const section = /^\[\s*([^\s\]"]+)\s*(?:"[^"]*")?\s*\]/.exec(line);
    if (section !== null) {
      inCore = section[1]?.toLowerCase() === 'core' && !line.includes('"');
      continue;
    }
    const entry = inCore ? /^hookspath\s*=\s*(.*)$/i.exec(line) : null;
    if (entry?.[1] !== undefined) value = entry[1].replace(/^"(.*)"$/, '$1').trim();
  }
  return value === null || value === '' ? null : value.replace(/^~(?=\/)/, process.env.HOME ?? '~');
}
