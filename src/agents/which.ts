// Finds a command agent's executable before the first turn, so a typo in `--agent` fails the goal with
// reason `agent-missing` and a clear message instead of burning a turn on "sh: 1: cluade: not found".

import { resolve } from 'node:path';

import { executableProblem, findOnPath } from '../process/find-on-path.js';

export type ExecutableLookup =
  | { status: 'found'; name: string; path: string }
  | { status: 'missing'; name: string; message: string }
  /** The command starts with shell syntax or a shell builtin: only running it can tell. */
  | { status: 'unknown'; reason: string };

// Words `sh -c` handles itself: a command line starting with one of these names no executable.
const SHELL_WORDS = new Set([
  '.', ':', '[', '!', '{', '}', 'alias', 'bg', 'break', 'builtin', 'case', 'cd', 'command', 'continue', 'eval',
  'exit', 'export', 'false', 'fg', 'for', 'function', 'getopts', 'hash', 'if', 'jobs', 'kill', 'local',
  'nohup', 'printf', 'pwd', 'read', 'readonly', 'return', 'select', 'set', 'shift', 'source', 'test', 'time',
  'times', 'trap', 'true', 'type', 'ulimit', 'umask', 'unalias', 'unset', 'until', 'wait', 'while', 'echo',
  'env', 'sudo', 'xargs',
]);
// Characters that make the first word something other than a plain executable name.
const SHELL_SYNTAX = /["'`$\\|&;<>(){}[\]*?~#=]/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=[^\s"'`$\\|&;<>(){}]*$/;

/**
 * The executable a command line runs: its first word after any leading `NAME=value` assignments and
 * `exec`; null
 * when that word is shell syntax or a shell builtin (or a wrapper such as `env`, `sudo`).
 */
export function readCommandName(commandLine: string): string | null {
  const words = commandLine.trim().split(/\s+/);
  let index = 0;
  while (index < words.length && (ASSIGNMENT.test(words[index] ?? '') || words[index] === 'exec')) index += 1;
  const word = words[index];
  if (word === undefined || word === '' || SHELL_SYNTAX.test(word) || SHELL_WORDS.has(word)) return null;
  return word;
}

/** Resolves a command line's executable on PATH (or as a path from `cwd`) without running anything. */
export function findExecutable(commandLine: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ExecutableLookup {
  const name = readCommandName(commandLine);
  if (name === null) return { status: 'unknown', reason: 'the command starts with shell syntax or a builtin' };
  const cwd = options.cwd ?? process.cwd();

  if (name.includes('/')) {
    const path = resolve(cwd, name);
    const problem = executableProblem(path);
    return problem === null
      ? { status: 'found', name, path }
      : { status: 'missing', name, message: `agent command ${name} ${problem}` };
  }

  const path = findOnPath(name, { pathVariable: (options.env ?? process.env).PATH ?? '', cwd });
  if (path !== null) return { status: 'found', name, path };
  return { status: 'missing', name, message: `agent command ${name} was not found on PATH` };
}
