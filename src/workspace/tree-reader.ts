// Reads what the tamper guard needs from two snapshot trees with at most one git process each: the patch of
// a few named paths, streamed, and whole files (package.json) by `<tree>:<path>`.

import { runGit } from './git.js';

export interface TreeReaderOptions {
  cwd: string;
  /** The snapshotter's environment (private index and object store, the user's objects as alternates). */
  env: Record<string, string>;
  /** Flags that keep diff output independent of the user's diff configuration (snapshot.ts). */
  plainDiffFlags: readonly string[];
}

/** A file in a snapshot tree. */
export interface TreeFile {
  tree: string;
  path: string;
}

// A package.json larger than this is not a manifest anyone edits by hand; it is not parsed.
const MAX_BLOB_BYTES = 4 * 1024 * 1024;

/** The two reading methods a Snapshotter offers beside its snapshots (Snapshotter.pathPatch, readFiles). */
export function createTreeReader(options: TreeReaderOptions) {
  const { cwd, env, plainDiffFlags } = options;
  return {
    async pathPatch(
      fromTree: string,
      toTree: string,
      paths: readonly string[],
      onChunk: (chunk: Buffer) => void,
      signal?: AbortSignal,
    ): Promise<void> {
      if (fromTree === toTree || paths.length === 0) return;
      // -U0: only changed lines; --full-index: `index` lines carry whole blob ids (rename detection).
      const args = ['-c', 'core.quotePath=false', 'diff-tree', ...plainDiffFlags, '-p', '-U0', '--full-index', fromTree, toTree, '--'];
      await runGit([...args, ...paths.map((file) => `:(literal)${file}`)], { cwd, env, signal, onStdout: onChunk });
    },

    async readFiles(files: readonly TreeFile[], signal?: AbortSignal): Promise<(string | null)[]> {
      // `cat-file --batch` reads one object name per line: a path with a newline cannot be named there.
      const named = files.filter((file) => !file.path.includes('\n'));
      if (named.length === 0) return files.map(() => null);
      const input = named.map((file) => `${file.tree}:${file.path}\n`).join('');
      const output = await runGitBytes(['cat-file', '--batch'], { cwd, env, input, signal });
      const contents = parseBatch(output, named.length);
      let next = 0;
      return files.map((file) => (file.path.includes('\n') ? null : (contents[next++] ?? null)));
    },
  };
}

async function runGitBytes(
  args: string[],
  options: { cwd: string; env: Record<string, string>; input: string; signal?: AbortSignal | undefined },
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await runGit(args, { ...options, onStdout: (chunk) => chunks.push(chunk) });
  return Buffer.concat(chunks);
}

/** Splits `cat-file --batch` output: `<id> <type> <size>\n<content>\n`, or `<name> missing\n`, per request. */
function parseBatch(output: Buffer, count: number): (string | null)[] {
  const contents: (string | null)[] = [];
  let at = 0;
  for (let i = 0; i < count && at < output.length; i++) {
    const newline = output.indexOf(0x0a, at);
    if (newline === -1) break;
    const header = output.subarray(at, newline).toString('utf8').split(' ');
    at = newline + 1;
    const size = Number(header.at(-1));
    if (header.length !== 3 || !Number.isInteger(size)) {
      contents.push(null); // "<name> missing" or "ambiguous": no content follows
      continue;
    }
    const isBlob = header[1] === 'blob';
    contents.push(isBlob && size <= MAX_BLOB_BYTES ? output.subarray(at, at + size).toString('utf8') : null);
    at += size + 1;
  }
  while (contents.length < count) contents.push(null);
  return contents;
}
