// The inline JSON for Claude Code's `--settings` flag that registers goald's PostToolUse hook for every
// tool. Inline, so nothing is written into the user's repository or ~/.claude.

import { quoteShellWord } from '../agents/shell-quote.js';
import { GoaldError } from '../errors.js';

// Claude Code's hook timeout is in seconds (default 60). The hook takes milliseconds; a stuck one should not
// hold the agent for a minute.
export const HOOK_TIMEOUT_SECONDS = 10;

/**
 * Builds the `--settings` JSON. `goaldCommand` is the argv that runs goald, e.g.
 * `[process.execPath, '/abs/dist/src/cli/bin.js']`; Claude Code runs hook commands with a shell, so each
 * word is quoted as needed. The turn's state directory reaches the hook through the environment the adapter
 * gives Claude Code (GOALD_HOOK_STATE_DIR, GOALD_CONDITION, GOALD_RECITE_EVERY).
 */
export function buildClaudeHookSettings(options: { goaldCommand: readonly string[] }): string {
  if (options.goaldCommand.length === 0) {
    throw new GoaldError('internal', 'the hook settings need the command that runs goald; got an empty argv');
  }
  const command = [...options.goaldCommand, 'hook', 'post-tool-use'].map(quoteShellWord).join(' ');
  const settings = {
    hooks: {
      PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS }] }],
    },
  };
  return JSON.stringify(settings);
}
