// The tamper guard's contract: what it reads from a turn and what it finds. A turn with a tamper finding
// can never achieve its goal (DESIGN.md § Trust boundary); notes are reported but decide nothing.

import type { ToolCall } from '../agents/types.js';
import type { GuardSettings } from '../config/types.js';
import type { FileChange, Snapshotter, TurnDelta } from '../workspace/types.js';

/** Ways a turn can weaken its own grading. */
export const TAMPER_KINDS = [
  'protected-path', // a change to goald's own files or a `guard.protect` path
  'config-edit', // the agent itself wrote goal.config.json (a structured adapter reported the write)
  'deleted-test', // a test file deleted (or replaced by a symlink)
  'renamed-test', // a test file moved to a path that is not a test file
  'skip-marker', // a skip/only marker added to a test file
  'check-script', // what a check runs was changed: a package.json script, or a workspace file its command runs
  'forged-object', // a git object behind a judged file does not hold what its name says (.git/objects rewritten)
  'unreadable-dir', // a directory made unreadable during the agent's turns: goald cannot list it, the checks can reach into it
  'git-control', // your later git would run what the agent named: a file made in .git pointing it elsewhere (commondir), .git replaced, a nested repository's config or hook naming a program
] as const;
export type TamperKind = (typeof TAMPER_KINDS)[number];

/** The kinds read from test files and manifests (the rest come from the file list alone). */
export const TEST_FINDING_KINDS: readonly TamperKind[] = ['deleted-test', 'renamed-test', 'skip-marker', 'check-script', 'forged-object'];

/** Reported, never tamper on their own. */
export const GUARD_NOTE_KINDS = [
  'assertions-removed', // test files lost more assertions than they gained
  'config-change', // goal.config.json changed, but nothing shows the agent wrote it
  'nested-repo', // a nested git repository without a commit, left out of the snapshots: nobody sees its files
  'ignore-change', // a .gitignore changed since the goal started: what it ignores is in no snapshot
  'hidden-change', // a file no snapshot holds (ignored, in a nested repository) changed during the agent's turns; or a directory goald cannot list
] as const;
export type GuardNoteKind = (typeof GUARD_NOTE_KINDS)[number];

/** One finding: the path, the kind, and one line saying what was seen. */
export interface TamperFinding {
  path: string;
  kind: TamperKind;
  detail: string;
}

export interface GuardNote {
  path: string;
  kind: GuardNoteKind;
  detail: string;
}

/** What the guard found in one turn. */
export interface GuardReport {
  tamper: TamperFinding[];
  notes: GuardNote[];
}

/** What the guard looks at: the changes since the goal started and who wrote what, with the goal's settings. */
export interface GuardInput {
  /** From the goal's starting tree to the tree after this turn: a weakening stands until it is reverted. */
  delta: TurnDelta;
  /** Tool calls a structured adapter parsed from the agent's stream this turn (absent for plain commands). */
  toolCalls: readonly ToolCall[];
  /**
   * The files this turn itself changed, and the previous turn's report: when this turn touched no test
   * file, manifest or new file, the test findings cannot have changed and are kept without reading git.
   * A config edit once seen as the agent's stays tamper until reverted.
   */
  turnFiles?: readonly FileChange[];
  prior?: GuardReport;
  /** Absolute workspace root (tool calls name files absolutely or relative to it). */
  workspace: string;
  /** The goal's check commands: the package.json scripts and the workspace files they run are guarded. */
  checkCommands: readonly string[];
  /** The PATH the checks run with: a program it finds inside the workspace is a file the checks run. */
  checkPath?: string;
  settings: GuardSettings;
  /** goald's own paths inside the workspace (goaldPathsIn). */
  goaldPaths: GoaldPaths;
}

/** goald's own files inside a workspace, as path patterns (breakers/noise.ts syntax). */
export interface GoaldPaths {
  protect: readonly string[];
  /** Files under those that goald itself rewrites while goals run (state.json, logs): not tamper. */
  ignore: readonly string[];
}

/** What the guard reads from the snapshotter: the two trees' patch, and what its snapshots leave out. */
export type GuardTreeReader = Pick<Snapshotter, 'pathPatch' | 'leftOut' | 'forgedObjects'>;

/** The report of a clean turn (and of every turn with the guard off). */
export function cleanReport(): GuardReport {
  return { tamper: [], notes: [] };
}
