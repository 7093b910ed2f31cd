// Which workspace files a check's command line runs: a program it names by path (`./scripts/ci.sh`), one
// its PATH finds inside the workspace (a `bin/` that direnv put on PATH: a `bin/npm` an agent adds there
// runs instead of npm), and the script an interpreter is handed (`sh scripts/ci.sh`, `node run.js`). A
// check whose runner became `exit 0` passes without testing anything, as one whose package.json script
// did (check-scripts.ts). Pure: read from the command text and PATH, matched against the changed files.

import path from 'node:path';

import { relativeInside } from '../path-inside.js';
import { simpleCommands } from './check-scripts.js';

// Interpreters whose first operand is the script they run (unless the code comes with -c, -e or -m).
const INTERPRETERS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'node', 'python', 'python3', 'ruby', 'perl', 'deno', 'bun', 'tsx', 'ts-node']);
const INLINE_CODE_OPTIONS = new Set(['-c', '-e', '--eval', '-m', '-p', '--print']);

/** What a set of check commands runs in the workspace: paths (from its top, `/`-separated) and PATH finds. */
export interface CheckRunners {
  /** Files named by path, relative to the workspace (programs and interpreted scripts). */
  files: ReadonlySet<string>;
  /** Bare program names, found through PATH: a file of that name in a PATH directory inside the workspace runs. */
  programs: ReadonlySet<string>;
  /** The PATH directories inside the workspace, relative to it ('' for its top). */
  pathDirs: ReadonlySet<string>;
}

/** The runners of `commands`, for checks that run in `workspace` with `pathVariable` as PATH. */
export function checkRunners(commands: readonly string[], workspace: string, pathVariable: string): CheckRunners {
  const files = new Set<string>();
  const programs = new Set<string>();
  // A word as a path from the workspace's top ('/'-separated, '' for the top itself); null outside it.
  const fromTop = (word: string): string | null => relativeInside(workspace, path.resolve(workspace, word))?.split(path.sep).join('/') ?? null;
  const inWorkspace = (word: string): string | null => {
    const file = fromTop(word);
    return file === '' ? null : file;
  };
  for (const command of commands) {
    for (const [program = '', ...args] of simpleCommands(command)) {
      if (program.includes('/')) {
        const file = inWorkspace(program);
        if (file !== null) files.add(file);
      } else {
        programs.add(program);
      }
      if (!INTERPRETERS.has(program.replace(/^.*\//, ''))) continue;
      const operand = args.find((word) => !word.startsWith('-') || INLINE_CODE_OPTIONS.has(word));
      if (operand === undefined || INLINE_CODE_OPTIONS.has(operand)) continue;
      const script = inWorkspace(operand);
      if (script !== null) files.add(script);
    }
  }
  const pathDirs = new Set<string>();
  for (const entry of pathVariable.split(path.delimiter)) {
    const dir = fromTop(entry);
    if (dir !== null) pathDirs.add(dir);
  }
  return { files, programs, pathDirs };
}

/** Whether a check runs the workspace file `file` (a path from the workspace's top, `/`-separated). */
export function checkRuns(runners: CheckRunners, file: string): boolean {
  if (runners.files.has(file)) return true;
  const slash = file.lastIndexOf('/');
  return runners.programs.has(file.slice(slash + 1)) && runners.pathDirs.has(slash === -1 ? '' : file.slice(0, slash));
}
