// The workspace contract: snapshots of the working tree and the checks that are ground truth.

import type { SandboxWrap } from '../sandbox/types.js';
import type { IgnoredChanges } from './ignored-changes.js';
import type { TimeWindow } from './time-window.js';
import type { TestCounts } from './test-counts.js';

export interface FileChange {
  path: string;
  /** git's status letter: A added, M modified, D deleted, T type change (renames are off: add + delete). */
  status: 'A' | 'M' | 'D' | 'T';
  /** Lines added/deleted; null for binary files. */
  added: number | null;
  deleted: number | null;
}

export interface TurnDelta {
  fromTree: string;
  toTree: string;
  files: FileChange[];
  /** `git patch-id --stable` of the diff (binary and mode changes included, by blob id); null when empty. */
  patchId: string | null;
  /** True when fromTree === toTree. */
  empty: boolean;
  /**
   * The patch itself (`diff-tree -p --full-index`), when the snapshotter read it anyway to compute the
   * patch id: whole, or its first MiB of whole lines with `cut` set. Absent on an empty delta.
   */
  patch?: { text: string; cut: boolean };
}

/** Takes whole-tree snapshots without touching the user's index, HEAD, refs or object store. */
export interface Snapshotter {
  /**
   * Hash of a tree object for the whole working tree (tracked + untracked, .gitignore honoured).
   * `onIndexed`: called once the work tree has been read (before the tree is written), so that what may
   * change the work tree (the checks) can start; not called when the snapshot fails first.
   */
  snapshot(signal?: AbortSignal, onIndexed?: () => void): Promise<string>;
  /** Files, numstat and patch id between two snapshot trees. */
  diff(fromTree: string, toTree: string, signal?: AbortSignal): Promise<TurnDelta>;
  /** Files and numstat only, without the patch id; diff() serves when absent. */
  files?(fromTree: string, toTree: string, signal?: AbortSignal): Promise<FileChange[]>;
  /**
   * diff(fromTree, toTree) and the files changed from baseTree to toTree, from one git process; diff()
   * and files() serve when absent.
   */
  diffSince?(
    fromTree: string,
    toTree: string,
    baseTree: string,
    signal?: AbortSignal,
  ): Promise<{ delta: TurnDelta; filesSinceBase: FileChange[] }>;
  /**
   * snapshot(), then diffSince(fromTree, <its tree>, baseTree), from one process start: resolves once the
   * tree is known, with the diff still computing. snapshot() and diffSince() serve when absent.
   */
  snapshotAndDiffSince?(
    fromTree: string,
    baseTree: string,
    signal?: AbortSignal,
    onIndexed?: () => void,
  ): Promise<{ tree: string; diff: Promise<{ delta: TurnDelta; filesSinceBase: FileChange[] }> }>;
  /** The unified patch between two trees, cut to at most maxChars. */
  patch(fromTree: string, toTree: string, maxChars: number, signal?: AbortSignal): Promise<string>;
  /**
   * The `--full-index` patch of the named paths only (one git process), streamed to onChunk; nothing when
   * `paths` is empty. `contextLines` (default 0) around each change; a large value yields whole files. For
   * the tamper guard (src/guard/), which reads the changed lines of a few files.
   */
  pathPatch?(
    fromTree: string,
    toTree: string,
    paths: readonly string[],
    onChunk: (chunk: Buffer) => void,
    options?: { contextLines?: number; signal?: AbortSignal },
  ): Promise<void>;
  /** Nested git repositories without a commit that the snapshots leave out (paths from the top), so far. */
  leftOut?(): readonly string[];
  /** Of these object names (`<tree>:<path>` or ids), those whose object does not hash to its id (object-check.ts). */
  forgedObjects?(names: readonly string[], signal?: AbortSignal): Promise<string[]>;
  /** The files no snapshot holds (ignored, inside a nested repository) that changed within these windows, and the directories goald cannot list (ignored-changes.ts). */
  ignoredChanges?(windows: readonly TimeWindow[], options?: { mustLook?: (file: string) => boolean; signal?: AbortSignal }): Promise<IgnoredChanges>;
}

export interface CheckResult {
  name: string;
  command: string;
  exitCode: number | null;
  passed: boolean;
  timedOut: boolean;
  durationMs: number;
  /** The last few KiB of combined stdout+stderr. */
  outputTail: string;
  /** Tests passed, failed and skipped, when the output showed a test runner goald recognises (test-counts.ts). */
  tests?: TestCounts;
}

/** The process group of a running check, recorded so a restarted daemon can kill what a crash left. */
export interface CheckGroup {
  pid: number;
  /** /proc start time of the group leader, against pid reuse; null when unknown. */
  startTime: string | null;
  /** The GOALD_TURN_TOKEN in the check's environment (finds processes that left the group). */
  token: string;
}

export interface CheckRunner {
  /**
   * Runs every check in order in the workspace; never throws for a failing check. `onGroup` hears of each
   * check's process group as it starts. With `sandbox`, each check runs inside it (src/sandbox/).
   * With `opened`, the first check's process (its sandbox included) starts at once but runs nothing of the
   * check until `opened` resolves; when `opened` rejects, that process is ended and run rejects with the
   * same reason. `opened` is run's to handle even when run ends first (an aborted signal).
   */
  run(signal?: AbortSignal, onGroup?: (group: CheckGroup) => void, sandbox?: SandboxWrap | null, opened?: Promise<void>): Promise<CheckResult[]>;
}
