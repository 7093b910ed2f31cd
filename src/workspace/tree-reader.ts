// Reads what the tamper guard needs from two snapshot trees with one git process: the patch of a few named
// paths, streamed (with whole-file context when the guard needs whole files, such as package.json).

import { runGit } from './git.js';

export interface TreeReaderOptions {
  cwd: string;
  /** The snapshotter's environment (private index and object store, the user's objects as alternates). */
  env: Record<string, string>;
  /** Flags that keep diff output independent of the user's diff configuration (snapshot.ts). */
  plainDiffFlags: readonly string[];
}

/** The reading method a Snapshotter offers beside its snapshots (Snapshotter.pathPatch). */
export function createTreeReader(options: TreeReaderOptions) {
  const { cwd, env, plainDiffFlags } = options;
  return {
    async pathPatch(
      fromTree: string,
      toTree: string,
      paths: readonly string[],
      onChunk: (chunk: Buffer) => void,
      patchOptions: { contextLines?: number; signal?: AbortSignal } = {},
    ): Promise<void> {
      if (fromTree === toTree || paths.length === 0) return;
      // --full-index: `index` lines carry whole blob ids (the guard tells a moved file from a new one).
      const context = `-U${Math.max(0, Math.floor(patchOptions.contextLines ?? 0))}`;
      const args = ['-c', 'core.quotePath=false', 'diff-tree', ...plainDiffFlags, '-p', context, '--full-index', fromTree, toTree, '--'];
      await runGit([...args, ...paths.map((file) => `:(literal)${file}`)], { cwd, env, signal: patchOptions.signal, onStdout: onChunk });
    },
  };
}
