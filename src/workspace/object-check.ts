// Checks that git objects hold what their names say. Snapshots read the user's object store in place (as
// alternates), and git does not hash an object's content when it reads it: a turn that rewrote a loose
// object of the goal's starting tree in `.git/objects` could make its edit of that file look unchanged in
// every diff goald reads. The tamper guard asks for the objects behind the files it judges (each tree on
// the way to them and the blob), and this reads them with one `git cat-file --batch` and hashes each.

import { runGit } from './git.js';

// node:crypto on first use only: the guard's module loads on every start, and no start needs crypto.
const createHash = (algorithm: string): import('node:crypto').Hash => process.getBuiltinModule('node:crypto').createHash(algorithm);

/** Streams `cat-file --batch` output and hashes each object as it arrives; what did not match, by request. */
class BatchChecker {
  private buffered: Buffer = Buffer.alloc(0);
  private index = 0;
  readonly mismatched: string[] = [];

  constructor(private readonly requests: readonly string[]) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const lineEnd = this.buffered.indexOf(0x0a);
      if (lineEnd === -1) return;
      const header = this.buffered.subarray(0, lineEnd).toString('utf8');
      // "<name> missing" (a path one side lacks), "<name> ambiguous": nothing to check.
      const parts = header.split(' ');
      if (parts.length !== 3 || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(parts[0] ?? '') || !/^\d+$/.test(parts[2] ?? '')) {
        this.buffered = this.buffered.subarray(lineEnd + 1);
        this.index += 1;
        continue;
      }
      const [id = '', type = '', sizeText = '0'] = parts;
      const size = Number(sizeText);
      if (this.buffered.length < lineEnd + 1 + size + 1) return; // the rest of this object is still to come
      const content = this.buffered.subarray(lineEnd + 1, lineEnd + 1 + size);
      const hash = createHash(id.length === 64 ? 'sha256' : 'sha1');
      hash.update(`${type} ${size}\0`);
      hash.update(content);
      if (hash.digest('hex') !== id) this.mismatched.push(this.requests[this.index] ?? id);
      this.buffered = this.buffered.subarray(lineEnd + 1 + size + 1);
      this.index += 1;
    }
  }
}

/**
 * The object names (`<tree>:<path>`, or ids) among `names` whose object does not hash to its id, read with
 * the snapshotter's environment (its private store first, then the user's). Names git cannot resolve are
 * skipped. A name holding a line break cannot be asked for, and is skipped too.
 */
export async function findForgedObjects(names: readonly string[], options: { cwd: string; env: Record<string, string>; signal?: AbortSignal }): Promise<string[]> {
  const asked = [...new Set(names)].filter((name) => !name.includes('\n'));
  if (asked.length === 0) return [];
  const checker = new BatchChecker(asked);
  await runGit(['cat-file', '--batch'], {
    cwd: options.cwd,
    env: options.env,
    input: asked.map((name) => `${name}\n`).join(''),
    onStdout: (chunk) => checker.push(chunk),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return checker.mismatched;
}

/** The names that reach `file` in `tree`: the tree itself, each directory on the way, and the file. */
export function objectNamesOf(tree: string, file: string): string[] {
  const parts = file.split('/');
  return [tree, ...parts.map((_, at) => `${tree}:${parts.slice(0, at + 1).join('/')}`)];
}
