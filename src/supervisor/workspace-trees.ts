// The goal's view of its workspace between turns: the tree it started from, the tree after the last turn,
// and what changed since the start. Snapshots come from the Snapshotter (private index, never the user's).

import type { GoalSummary } from '../../state/types.js';
import type { FileChange, Snapshotter, TurnDelta } from '../workspace/types.js';

/** The trees after a turn, and its delta and the files changed since the start (both still computing). */
export interface TreeStep {
  previousTree: string;
  tree: string;
  delta: Promise<TurnDelta>;
  filesSoFar: Promise<GoalSummary['files']>;
  /** The tree the goal started from (null for a goal restored from before it was recorded). */
  initialTree: string | null;
  /** Every change since the goal started, with its status (the tamper guard reads them). */
  changesSoFar: Promise<FileChange[]>;
}

export class WorkspaceTrees {
  private readonly snapshotter: Snapshotter;
  private initialTree: string | null;
  private lastTree: string | null;
  /** The changes since the start as of the last turn's tree (a turn that changes nothing reuses them). */
  private lastChangesSoFar: { tree: string; changes: Promise<FileChange[]> } | null = null;
  /** The files changed since the start as of the last turn's tree (a turn that changes nothing reuses them). */
  private lastFilesSoFar: { tree: string; files: Promise<GoalSummary['files']> } | null = null;

  /** `restored`: the trees of a goal a previous process ran (its pre-check's, and its last turn's). */
  constructor(snapshotter: Snapshotter, restored: { initialTree: string | null; currentTree: string | null }) {
    this.snapshotter = snapshotter;
    this.initialTree = restored.initialTree;
    this.lastTree = restored.currentTree;
  }

  /** The tree after the last snapshot; null before the first. */
  get current(): string | null {
    return this.lastTree;
  }

  /** After goald restored files (a rollback): `tree` is the work tree's snapshot from now on. */
  restart(tree: string): void {
    this.lastTree = tree;
    this.lastChangesSoFar = null;
    this.lastFilesSoFar = null;
  }

  /** Turn 0: the tree the goal starts from. `onIndexed`: see Snapshotter.snapshot. */
  async snapshotStart(onIndexed?: () => void): Promise<string> {
    const tree = await this.snapshotter.snapshot(undefined, onIndexed);
    this.initialTree = tree;
    this.lastTree = tree;
    return tree;
  }

  /**
   * After a turn: the new tree; its delta and the files changed since the start are computed meanwhile.
   * `onIndexed`: see Snapshotter.snapshot.
   */
  async snapshotTurn(onIndexed?: () => void): Promise<TreeStep> {
    const { initialTree, snapshotter, lastTree } = this;
    if (lastTree !== null && initialTree !== null && snapshotter.snapshotAndDiffSince) {
      // The snapshot and both diffs from one process start (a spawn blocks Node 1.5–3.5 ms).
      const { tree, diff } = await snapshotter.snapshotAndDiffSince(lastTree, initialTree, undefined, onIndexed);
      this.lastTree = tree;
      return this.step(lastTree, tree, diff.then((result) => result.delta), diff.then((result) => result.filesSinceBase));
    }
    const tree = await snapshotter.snapshot(undefined, onIndexed);
    const previousTree = lastTree ?? tree;
    this.lastTree = tree;
    const known = this.lastChangesSoFar;
    let delta: Promise<TurnDelta>;
    let changesSoFar: Promise<FileChange[]>;
    if (previousTree === tree && known?.tree === tree) {
      delta = snapshotter.diff(previousTree, tree);
      changesSoFar = known.changes;
    } else if (initialTree !== null && snapshotter.diffSince) {
      // One git process for both (the snapshotter skips what equal trees make unnecessary).
      const both = snapshotter.diffSince(previousTree, tree, initialTree);
      delta = both.then((result) => result.delta);
      changesSoFar = both.then((result) => result.filesSinceBase);
    } else {
      delta = snapshotter.diff(previousTree, tree);
      changesSoFar = this.changesSinceStart(previousTree, tree, delta);
    }
    return this.step(previousTree, tree, delta, changesSoFar);
  }

  // The step, with its changes since the start remembered for the next turn.
  private step(previousTree: string, tree: string, delta: Promise<TurnDelta>, changesSoFar: Promise<FileChange[]>): TreeStep {
    const remembered = { tree, changes: changesSoFar };
    this.lastChangesSoFar = remembered;
    // A failed diff is reported by whoever awaits the step (filesSoFar carries the same failure); it is
    // not remembered for the next turn.
    changesSoFar.catch(() => {
      if (this.lastChangesSoFar === remembered) this.lastChangesSoFar = null;
    });
    const filesSoFar = changesSoFar.then(toSummaryFiles);
    return { previousTree, tree, delta, filesSoFar, initialTree: this.initialTree, changesSoFar };
  }

  // The turn's own delta when it started from the initial tree; else a diff against the start.
  private async changesSinceStart(previousTree: string, tree: string, delta: Promise<TurnDelta>): Promise<FileChange[]> {
    const { initialTree, snapshotter } = this;
    if (initialTree === null || initialTree === tree) return [];
    if (initialTree === previousTree) return (await delta).files;
    return snapshotter.files ? snapshotter.files(initialTree, tree) : (await snapshotter.diff(initialTree, tree)).files;
  }
}

function toSummaryFiles(files: FileChange[]): GoalSummary['files'] {
  return files.map((file) => ({ path: file.path, added: file.added, deleted: file.deleted }));
}
