// Which workspace files a check's command line runs: a program it names by path (`./scripts/ci.sh`), one
// its PATH finds inside the workspace (a `bin/` that direnv put on PATH: a `bin/npm` an agent adds there
// runs instead of npm), and the script an interpreter is handed (`sh scripts/ci.sh`, `node run.js`). A
// check whose runner became `exit 0` passes without testing anything, as one whose package.json script
// did (check-scripts.ts). Pure: read from the command text and PATH, matched against the changed files.

import path from 'node:path';

// Words that run the rest of the line as a command.
const WRAPPERS = new Set(['env', 'time', 'exec', 'command', 'nice', 'nohup', 'builtin']);
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
  const inWorkspace = (word: string): string | null => {
    const relative = path.relative(workspace, path.resolve(workspace, word));
    return relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative) ? null : relative.split(path.sep).join('/');
  };
  for (const command of commands) {
    // Simple commands at operators and newlines; quoting is not parsed, which only over-counts.
    for (const segment of command.split(/&&|\|\||[;|&\n()`]|\$\(/)) {
      const words = segment.trim().split(/\s+/).map(unquote).filter((word) => word !== '');
      let at = 0;
      while (at < words.length && (/^\w+=/.test(words[at] ?? '') || WRAPPERS.has(words[at] ?? ''))) at++;
      const program = words[at];
      if (program === undefined) continue;
      if (program.includes('/')) {
        const file = inWorkspace(program);
        if (file !== null) files.add(file);
      } else {
        programs.add(program);
      }
      if (!INTERPRETERS.has(program.replace(/^.*\//, ''))) continue;
      const operand = words.slice(at + 1).find((word) => !word.startsWith('-') || INLINE_CODE_OPTIONS.has(word));
      if (operand === undefined || INLINE_CODE_OPTIONS.has(operand)) continue;
      const script = inWorkspace(operand);
      if (script !== null) files.add(script);
    }
  }
  const pathDirs = new Set<string>();
  for (const entry of pathVariable.split(path.delimiter)) {
    const relative = path.relative(workspace, path.resolve(workspace, entry));
    if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) continue;
    pathDirs.add(relative.split(path.sep).join('/'));
  }
  return { files, programs, pathDirs };
}

/** Whether a check runs the workspace file `file` (a path from the workspace's top, `/`-separated). */
export function checkRuns(runners: CheckRunners, file: string): boolean {
  if (runners.files.has(file)) return true;
  const slash = file.lastIndexOf('/');
  return runners.programs.has(file.slice(slash + 1)) && runners.pathDirs.has(slash === -1 ? '' : file.slice(0, slash));
}

function unquote(word: string): string {
  return word.replace(/^["']+|["']+$/g, '');
}
