// agent.commands: which command lines run_command may run. Patterns are `*` globs over the whole command
// line (`npm *`, `git status`); deny wins; a non-empty allow list must match.

/** Why a command line is refused, or null when it may run. */
export function commandRefusal(command: string, policy: { allow: readonly string[]; deny: readonly string[] }): string | null {
  const line = command.trim();
  const denied = policy.deny.find((pattern) => globMatches(pattern, line));
  if (denied !== undefined) return `the command matches agent.commands.deny ${JSON.stringify(denied)}`;
  if (policy.allow.length > 0 && !policy.allow.some((pattern) => globMatches(pattern, line))) {
    return `the command matches none of agent.commands.allow (${policy.allow.map((pattern) => JSON.stringify(pattern)).join(', ')})`;
  }
  return null;
}

function globMatches(pattern: string, text: string): boolean {
  const source = pattern
    .trim()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(text);
}
