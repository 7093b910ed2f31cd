// Files a turn can make in your repository's `.git` directory that send your git somewhere else: a
// `commondir` (git then reads config and hooks from the directory it names, so its `core.fsmonitor` runs the
// next time you run `git status`, outside any sandbox) and a `config.worktree` (read when the repository
// enables worktreeConfig). The sandbox shows the files that exist read-only (sandbox/git-control.ts), but a
// mount cannot cover a file that does not exist yet, and a turn may write the git directory (it may commit).
// So after each turn one stat each: a file made since the goal started is removed (nothing of yours is lost:
// it was not there) and reported as tamper, with what it pointed at. `.git` replaced as a whole (possible
// only unsandboxed: in the sandbox it is a mount point) is reported; goald cannot put the old one back.

import { lstatSync, rmSync, type Stats } from 'node:fs';
import path from 'node:path';
import { readFileStart } from '../read-file-start.js';
import type { TamperFinding } from './types.js';

const REDIRECT_FILES = ['commondir', 'config.worktree'] as const;
// What a finding quotes of the file: enough to recognise a path, never a flood from the agent.
const QUOTED_CHARS = 160;

export class GitRedirectWatch {
  private readonly dotGit: string;
  private readonly identity: { dev: number; ino: number } | null;
  /** The redirect files that were there at the start: the user's, left alone. */
  private readonly presentAtStart: ReadonlySet<string>;

  /**
   * Looks at `workspace`'s `.git` now. Only a `.git` directory is watched: a `.git` file (a linked worktree,
   * a submodule) is read-only in the sandbox, with the `commondir` it leads to.
   */
  constructor(workspace: string) {
    this.dotGit = path.join(workspace, '.git');
    const stats = lstatOrNull(this.dotGit);
    this.identity = stats?.isDirectory() === true ? { dev: stats.dev, ino: stats.ino } : null;
    this.presentAtStart = new Set(this.identity === null ? [] : REDIRECT_FILES.filter((name) => lstatOrNull(path.join(this.dotGit, name)) !== null));
  }

  /** The redirects made since the start, each removed as it is found; none when `.git` is not watched. */
  sweep(): TamperFinding[] {
    if (this.identity === null) return [];
    const now = lstatOrNull(this.dotGit);
    if (now === null || !now.isDirectory() || now.dev !== this.identity.dev || now.ino !== this.identity.ino) {
      return [{ path: '.git', kind: 'git-control', detail: "the repository's .git directory was moved, removed or replaced since the goal started: your git may now read another's config and hooks" }];
    }
    const findings: TamperFinding[] = [];
    for (const name of REDIRECT_FILES) {
      if (this.presentAtStart.has(name)) continue;
      const file = path.join(this.dotGit, name);
      const stats = lstatOrNull(file);
      if (stats === null) continue;
      const quoted = stats.isFile() ? quote(file) : 'not a plain file';
      try {
        rmSync(file, { recursive: true, force: true });
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        findings.push({ path: `.git/${name}`, kind: 'git-control', detail: `made since the goal started (${quoted}) and could not be removed (${why}): remove it before you run git here` });
        continue;
      }
      findings.push({ path: `.git/${name}`, kind: 'git-control', detail: `made since the goal started (${quoted}): git would have read config and hooks through it, outside the sandbox; goald removed it` });
    }
    return findings;
  }
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

// The file's first line as JSON (its control characters escaped), cut short.
function quote(file: string): string {
  const text = readFileStart(file, QUOTED_CHARS * 4);
  if (text === null) return 'unreadable';
  const line = text.split('\n')[0] ?? '';
  return `it says ${JSON.stringify(line.length > QUOTED_CHARS ? `${line.slice(0, QUOTED_CHARS)}…` : line)}`;
}
