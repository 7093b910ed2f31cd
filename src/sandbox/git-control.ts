// The files of your repository git runs programs from: its config (core.fsmonitor, filter drivers,
// core.hooksPath, aliases, core.sshCommand, ...) and its hooks. A sandboxed turn or check sees them read-only
// (an in-place goal's turn may otherwise write the whole git directory): what an agent wrote there would run
// later, outside any sandbox, the next time you run git in that repository, and no diff would show it.
// Not a whole answer for an in-place goal: the git directory stays writable (a turn may commit), so a
// `commondir` file or a `.git` moved aside and made anew can still point git elsewhere (README, Limit).

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { ResolvedWorkspace } from '../workspace/find-workspace.js';

/**
 * The existing config files and hook directories of the workspace's repository; `makeHooks`: the hooks
 * directory is made when missing (when a sandbox is about to be used, not when one is only described).
 */
export function gitControlPaths(workspace: Pick<ResolvedWorkspace, 'root' | 'gitDir' | 'commonDir'>, options: { makeHooks: boolean }): string[] {
  const found: string[] = [];
  for (const dir of new Set([workspace.gitDir, workspace.commonDir])) {
    for (const name of ['config', 'config.worktree']) {
      const file = path.join(dir, name);
      if (existsSync(file)) found.push(file);
    }
  }
  // A missing hooks directory would be the agent's to make: made here (git init makes one too), empty.
  const hooks = path.join(workspace.commonDir, 'hooks');
  try {
    if (options.makeHooks) mkdirSync(hooks, { recursive: true, mode: 0o755 });
  } catch {
    // A read-only repository: nobody makes it, the agent included.
  }
  if (existsSync(hooks)) found.push(hooks);
  const hooksPath = configuredHooksPath(path.join(workspace.commonDir, 'config'));
  if (hooksPath !== null) {
    const resolved = path.resolve(workspace.root, hooksPath);
    if (existsSync(resolved)) found.push(resolved);
  }
  return [...new Set(found)];
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
