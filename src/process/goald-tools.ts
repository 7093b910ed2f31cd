// Where goald's own programs come from: git (snapshots, diffs), find (the look at ignored files), bwrap,
// setpriv, and the notifiers. They run outside any sandbox, as you, and what git and find report is what
// the judge sees. So they are looked up on PATH as you set it, but never in a directory an agent turn may
// write: not through a relative entry, not inside the work tree they run for (a `bin/` that direnv's
// `PATH_add bin` put on PATH, `./node_modules/.bin`), not inside the package caches and agent CLIs' state
// a sandboxed turn may write (sandbox/profile.ts). An agent that put a `git` or a `find` there would
// otherwise have it run as goald: out of its sandbox, and able to forge the snapshot the judge reads.
// (The shell goald runs checks and commands with is /bin/sh, as Node's own `shell: true` uses.)

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

import { isInsideResolved, realOrResolved } from '../path-inside.js';
import { expandHome, turnWritableHomeDirectories } from '../sandbox/profile.js';
import { executableProblem } from './find-on-path.js';

export interface ToolLookup {
  /** The environment whose PATH is searched (and whose CLAUDE_CONFIG_DIR / CODEX_HOME move CLI state). */
  env?: NodeJS.ProcessEnv;
  /** The directory the program will run in: the work tree that holds it is never searched. */
  cwd?: string;
}

// One answer per program, PATH and work tree, and one work tree per directory, for the life of the process
// (git is looked up on every call goald makes).
const found = new Map<string, string | null>();
const MEMO_LIMIT = 256;
const workTrees = new Map<string, string | null>();

/** The absolute path of goald's program `name`; null when PATH holds none outside the places above. */
export function findTool(name: string, lookup: ToolLookup = {}): string | null {
  const env = lookup.env ?? process.env;
  const pathVariable = env.PATH ?? '';
  const { cwd } = lookup;
  let tree: string | null = null;
  if (cwd !== undefined) {
    const known = workTrees.get(cwd);
    tree = known !== undefined ? known : workTreeOf(cwd);
    if (workTrees.size >= MEMO_LIMIT) workTrees.clear();
    workTrees.set(cwd, tree);
  }
  const key = `${name}\0${pathVariable}\0${tree ?? ''}\0${env.CLAUDE_CONFIG_DIR ?? ''}\0${env.CODEX_HOME ?? ''}`;
  const answer = found.get(key);
  if (answer !== undefined) return answer;
  const avoided = [...(tree === null ? [] : [tree]), ...avoidedHomeDirectories(env)];
  let result: string | null = null;
  for (const entry of pathVariable.split(path.delimiter)) {
    if (!path.isAbsolute(entry)) continue;
    const directory = realOrResolved(entry);
    if (avoided.some((dir) => isInsideResolved(directory, dir))) continue;
    const candidate = path.join(directory, name);
    if (executableProblem(candidate) === null) {
      result = candidate;
      break;
    }
  }
  if (found.size >= MEMO_LIMIT) found.clear(); // a worker's every turn has a checkout of its own
  found.set(key, result);
  return result;
}

// The directories under the home a turn may write, resolved, per CLI state variables (the home is the
// process's own): a dozen paths, most of them absent, looked up once rather than for each program.
const homeDirectories = new Map<string, string[]>();

function avoidedHomeDirectories(env: NodeJS.ProcessEnv): string[] {
  const key = `${env.CLAUDE_CONFIG_DIR ?? ''}\0${env.CODEX_HOME ?? ''}`;
  const known = homeDirectories.get(key);
  if (known !== undefined) return known;
  const home = homedir();
  const resolved = turnWritableHomeDirectories(env).map((dir) => realOrResolved(expandHome(dir, home)));
  if (homeDirectories.size >= MEMO_LIMIT) homeDirectories.clear();
  homeDirectories.set(key, resolved);
  return resolved;
}

// The top of the work tree `cwd` is in (the nearest directory up holding `.git`), else `cwd` itself; null
// for the root, which holds everything.
function workTreeOf(cwd: string): string | null {
  const start = realOrResolved(path.resolve(cwd));
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return dir === path.parse(dir).root ? null : dir;
    if (dir === path.dirname(dir)) return start === dir ? null : start;
  }
}


