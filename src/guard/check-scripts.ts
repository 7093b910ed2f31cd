// Which package.json scripts the goal's checks run (`npm test`, `npm run lint`, `pnpm build`, `yarn x`,
// `bun run x`, and the scripts those run in turn, with their pre/post hooks), and which of them a turn
// changed. A check whose script became `exit 0` passes without testing anything.

import { z } from '../zod-mini.js';
import { clip } from '../cut-text.js';

const manifestSchema = z.looseObject({ scripts: z.optional(z.record(z.string(), z.unknown())) });

/** A manifest's scripts (string values only); null when the text is not a JSON object. */
function parseScripts(text: string): Map<string, string> | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) return null;
  const scripts = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed.data.scripts ?? {})) if (typeof value === 'string') scripts.set(name, value);
  return scripts;
}

const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
// npm's own commands that run a script of the same name (`npm test` runs scripts.test).
const NPM_SCRIPT_COMMANDS: Record<string, string> = { test: 'test', t: 'test', tst: 'test', start: 'start', stop: 'stop', restart: 'restart' };
const RUN_COMMANDS = new Set(['run', 'run-script', 'rum', 'urn']);
// pnpm and yarn run a script for any word that is not one of their commands; these are the common commands.
const BUILTIN_COMMANDS = new Set([
  'add', 'audit', 'bin', 'cache', 'config', 'create', 'dedupe', 'dlx', 'exec', 'help', 'import', 'info', 'init',
  'install', 'i', 'link', 'list', 'ls', 'outdated', 'pack', 'publish', 'prune', 'rebuild', 'remove', 'rm',
  'root', 'store', 'unlink', 'up', 'update', 'upgrade', 'why', 'workspace', 'workspaces', 'x', 'node', 'set',
  'version', 'patch', 'licenses', 'env', 'setup', 'server', 'plugin', 'npm', 'pm',
]);
// Options of the package managers that take a value, so the value is not read as the command.
const VALUE_OPTIONS = new Set(['--prefix', '-C', '--dir', '--cwd', '--filter', '-F', '-w', '--workspace', '--loglevel', '--reporter']);

// Words that run the rest of the line as a command.
const WRAPPERS = new Set(['env', 'time', 'exec', 'command', 'nice', 'nohup', 'builtin']);

/**
 * The simple commands of a shell line, split at operators and newlines, each from its program on (leading
 * `VAR=value` assignments and wrappers such as `env` and `time` skipped), quotes around words dropped.
 * Quoting is not parsed, which only over-counts: a guard reading this misses no command.
 */
export function simpleCommands(command: string): string[][] {
  const commands: string[][] = [];
  for (const segment of command.split(/&&|\|\||[;|&\n()`]|\$\(/)) {
    const words = segment.trim().split(/\s+/).map((word) => word.replace(/^["']+|["']+$/g, '')).filter((word) => word !== '');
    let at = 0;
    while (at < words.length && (/^\w+=/.test(words[at] ?? '') || WRAPPERS.has(words[at] ?? ''))) at++;
    if (at < words.length) commands.push(words.slice(at));
  }
  return commands;
}

/** The script names one shell command runs through a package manager (not following them further). */
export function scriptsRunBy(command: string): string[] {
  const names: string[] = [];
  for (const [first = '', ...rest] of simpleCommands(command)) {
    const program = first.replace(/^.*\//, '');
    if (!PACKAGE_MANAGERS.has(program)) continue;
    const name = scriptOf(program, rest);
    if (name !== null) names.push(name);
  }
  return names;
}

function scriptOf(program: string, args: string[]): string | null {
  const positional: string[] = [];
  for (let i = 0; i < args.length && positional.length < 2; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (VALUE_OPTIONS.has(arg)) i++;
      continue;
    }
    positional.push(arg);
  }
  const [first, second] = positional;
  if (first === undefined) return null;
  if (RUN_COMMANDS.has(first)) return second ?? null;
  if (program === 'npm') return NPM_SCRIPT_COMMANDS[first] ?? null;
  // `bun test` is bun's own test runner, not a script.
  if (program === 'bun') return null;
  return BUILTIN_COMMANDS.has(first) ? null : first;
}

/** Every script a set of entry scripts reaches in one manifest: pre/post hooks and the scripts they run. */
function reachableScripts(entries: readonly string[], scripts: ReadonlyMap<string, string>): Set<string> {
  const reached = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const name = queue.pop() ?? '';
    if (reached.has(name)) continue;
    reached.add(name);
    for (const hook of [`pre${name}`, `post${name}`]) if (scripts.has(hook)) queue.push(hook);
    const body = scripts.get(name);
    if (body !== undefined) queue.push(...scriptsRunBy(body));
  }
  return reached;
}

const SCRIPT_SHOWN_CHARS = 60;

/**
 * One line per script the checks run (from either version of the manifest) whose text changed, was added
 * or was removed; empty when either version is not valid JSON (the check itself then fails).
 */
export function changedCheckScripts(entries: readonly string[], before: string | null, after: string | null): string[] {
  const old = before === null ? new Map<string, string>() : parseScripts(before);
  const now = after === null ? new Map<string, string>() : parseScripts(after);
  if (old === null || now === null) return [];
  const names = new Set([...reachableScripts(entries, old), ...reachableScripts(entries, now)]);
  const changes: string[] = [];
  for (const name of [...names].sort()) {
    const was = old.get(name);
    const is = now.get(name);
    if (was === is) continue;
    const show = (text: string | undefined): string => (text === undefined ? '(none)' : JSON.stringify(clip(text, SCRIPT_SHOWN_CHARS, '...')));
    changes.push(`script "${name}" changed: ${show(was)} → ${show(is)}`);
  }
  return changes;
}
