// What the guard says of files no snapshot holds (ignored, or inside a nested repository) that changed
// during the agent's turns (found by workspace/ignored-changes.ts): no diff or inspection shows them, yet
// the checks ran with them. A protected path (goald's own files, `guard.protect`) is tamper there as
// anywhere; every other such file is a note the evaluator reads, one per top directory or nested
// repository. Not tamper by default: `npm install`, a build or a cache write changes ignored files as
// legitimately as a rewritten test runner does, and a goal may well be about a vendored repository.

import { matchesPathPattern } from '../breakers/noise.js';
import type { IgnoredChange, IgnoredChanges } from '../workspace/ignored-changes.js';
import { whoseFile } from './goald-paths.js';
import type { GoaldPaths, GuardReport } from './types.js';

/** Why a file is protected (inspect-turn.ts, protectionOf, bound to the goal's settings), or null. */
export type ProtectionOf = (file: string) => 'goald' | 'guard.protect' | null;

// Files named in one note; the rest are counted.
const NAMED_PER_NOTE = 5;
// Notes at most (one per top directory); the last one covers the rest.
const MAX_NOTES = 8;

/** The findings and notes for the ignored files changed so far (all of them, every turn: they stand until undone). */
export function judgeIgnoredChanges(changes: IgnoredChanges, input: { protection: ProtectionOf; goaldPaths: GoaldPaths }): GuardReport {
  const report: GuardReport = { tamper: [], notes: [] };
  const { goaldPaths } = input;
  const groups = new Map<string, IgnoredChange[]>();
  for (const file of changes.files) {
    const protection = input.protection(file.path);
    if (protection !== null) {
      const detail = `${whoseFile(protection)} changed during the agent's turns, in a path git ignores: no snapshot or diff shows it, so neither can show it undone`;
      report.tamper.push({ path: file.path, kind: 'protected-path', detail });
      continue;
    }
    if (matchesPathPattern(file.path, goaldPaths.ignore)) continue; // goald's own state and logs, written while goals run
    const top = file.repo === undefined ? topOf(file.path) : `${file.repo}/`;
    const group = groups.get(top);
    if (group === undefined) groups.set(top, [file]);
    else group.push(file);
  }
  const tops = [...groups.keys()].sort();
  const shown = tops.length > MAX_NOTES ? tops.slice(0, MAX_NOTES - 1) : tops;
  for (const top of shown) report.notes.push({ path: top, kind: 'hidden-change', detail: describe(groups.get(top) ?? []) });
  const rest = tops.slice(shown.length).flatMap((top) => groups.get(top) ?? []);
  if (rest.length > 0) report.notes.push({ path: '.', kind: 'hidden-change', detail: `${describe(rest)} (under ${tops.length - shown.length} more paths)` });
  for (const dir of changes.unreadable ?? []) {
    if (dir.changed) {
      report.tamper.push({ path: dir.path, kind: 'unreadable-dir', detail: "made unreadable during the agent's turns: goald cannot list it, so a file made in it is in no snapshot, yet a check can run it by name" });
    } else {
      report.notes.push({ path: dir.path, kind: 'hidden-change', detail: 'goald cannot list this directory (permission denied): a file made in it is in no snapshot, diff or inspection' });
    }
  }
  for (const change of changes.gitControl ?? []) {
    report.tamper.push({
      path: change.file,
      kind: 'git-control',
      detail: `changed during the agent's turns in the nested repository ${change.repo}/ and names ${change.names}: staged as a submodule, git runs it when you run git status here, outside any sandbox`,
    });
  }
  if (changes.more > 0) {
    report.notes.push({ path: '.', kind: 'hidden-change', detail: `${changes.more} more ignored files changed since the agent's first turn were not looked at one by one (too many)` });
  }
  return report;
}

// `node_modules/.bin/x` → `node_modules/`; a file at the top is its own group.
function topOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash + 1);
}

function describe(files: readonly IgnoredChange[]): string {
  const repo = files[0]?.repo;
  if (repo !== undefined && files.every((file) => file.repo === repo)) {
    return `${count(files)} in the nested repository ${repo}/ changed during the agent's turns: the snapshots hold its commit, not its files, so no diff or inspection shows them, yet the checks ran with them${listOf(files)}`;
  }
  const where = files.some((file) => file.repo !== undefined) ? 'git ignores or in nested repositories' : 'git ignores';
  return `${count(files)} ${where} changed during the agent's turns, which no snapshot, diff or inspection shows, yet the checks ran with them${listOf(files)}`;
}

function count(files: readonly IgnoredChange[]): string {
  return `${files.length} ${files.length === 1 ? 'file' : 'files'}`;
}

function listOf(files: readonly IgnoredChange[]): string {
  const named = files.slice(0, NAMED_PER_NOTE).map((file) => `${file.path}${file.predates === true ? ' (edited in place: older than the goal)' : ''}`);
  const unnamed = files.length - named.length;
  return named.length === 0 ? '' : `: ${named.join(', ')}${unnamed > 0 ? ` and ${unnamed} more` : ''}`;
}
