// goald's own files that can lie inside a workspace, and whether the agent wrote goal.config.json itself.
// Claude Code's hook settings are passed inline (src/hook/claude-hook-settings.ts), so goald writes no hook
// file into the workspace; `.goald/` is reserved for goald's files in a repository.

import path from 'node:path';
import { GOALD_HOME_CHURN } from '../../state/paths.js';
import { realOrResolved, relativeInside } from '../path-inside.js';
import type { ToolCall } from '../agents/types.js';
import type { GoaldPaths } from './types.js';

/** The workspace file whose edits by a turn are held, or tamper when the agent is seen writing it. */
export const WORKSPACE_CONFIG_FILE = 'goal.config.json';

/** goald's own paths inside `workspace`: `.goald/`, GOALD_HOME and the user's config file when they lie in it. */
export function goaldPathsIn(workspace: string, locations: { home: string; userConfig: string }): GoaldPaths {
  const protect = ['/.goald/**'];
  const ignore: string[] = [];
  const home = inWorkspace(workspace, locations.home);
  if (home !== null) {
    protect.push(home === '' ? '**' : `/${home}/**`);
    ignore.push(...GOALD_HOME_CHURN.map((entry) => (home === '' ? `/${entry}` : `/${home}/${entry}`)));
  }
  const userConfig = inWorkspace(workspace, locations.userConfig);
  if (userConfig !== null && userConfig !== '') protect.push(`/${userConfig}`);
  return { protect, ignore };
}

/** How a finding names a protected file. */
export function whoseFile(protection: 'goald' | 'guard.protect'): string {
  return protection === 'goald' ? "goald's own file" : 'a protected path (guard.protect)';
}

// `target` (its symlinks resolved, as the work tree's top level is) relative to `workspace` with `/`
// separators, or null when it lies outside.
function inWorkspace(workspace: string, target: string): string | null {
  const relative = relativeInside(path.resolve(workspace), realOrResolved(target));
  return relative === null ? null : relative.split(path.sep).join('/');
}

/**
 * Whether a structured adapter reported the agent writing goal.config.json this turn: a write or edit
 * tool on that file, or a shell command that names it (goald cannot parse every shell, and the file did
 * change in the same turn).
 */
export function agentWroteConfig(toolCalls: readonly ToolCall[], workspace: string): boolean {
  const config = path.join(path.resolve(workspace), WORKSPACE_CONFIG_FILE);
  return toolCalls.some(
    (call) =>
      (call.filePath !== undefined && path.resolve(workspace, call.filePath) === config) ||
      (call.command !== undefined && call.command.includes(WORKSPACE_CONFIG_FILE)),
  );
}
