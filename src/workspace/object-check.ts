// Checks that git objects hold what their names say. Snapshots read the user's object store in place (as
// alternates), and git does not hash an object's content when it reads it: a turn that rewrote a loose
// object of the goal's starting tree in `.git/objects` could make its edit of that file look unchanged in
// every diff goald reads. The tamper guard asks for the objects behind the files it judges (each tree on
// the way to them and the blob), and this reads them with one `git cat-file --batch` and hashes each.

import { runGit } from './git.js';

// node:crypto on first use only: the guard's module loads on every start, and no start needs crypto.
const createHash = (algorithm: string): import('node:crypto').Hash => process.getBuiltinModule('node:crypto').createHash(algorithm);

/**
 * Reads `cat-file --batch` output as it streams and hashes each object's content as it arrives (never held
 * whole: a test file of gigabytes costs its bytes once); what did not match, by request.
 */
class BatchChecker {
  // The header line being gathered (a few bytes), between objects.
  private header: Buffer = Buffer.alloc(0);
  private object: { id: string; hash: import('node:crypto').Hash; left: number } | null = null;
  private index = 0;
  readonly mismatched: string[] = [];

  constructor(private readonly requests: readonly string[]) {}

  push(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      if (this.object !== null) {
        const taken = rest.subarray(0, this.object.left);
        this.object.hash.update(taken);
        this.object.left -= taken.length;
        rest = rest.subarray(taken.length);
        if (this.object.left === 0) this.finishObject();
        continue;
      }
      const lineEnd = rest.indexOf(0x0a);
      this.header = Buffer.concat([this.header, lineEnd === -1 ? rest : rest.subarray(0, lineEnd)]);
      if (lineEnd === -1) return;
      rest = rest.subarray(lineEnd + 1);
      this.startObject(this.header.toString('utf8'));
      this.header = Buffer.alloc(0);
    }
  }

  // "<id> <type> <size>" starts an object's content; "<name> missing" (a path one side lacks) or
  // "<name> ambiguous" answers its request with nothing to check. The LF after each content reads as an
  // empty line of its own.
  private startObject(line: string): void {
    if (line === '') return;
    const parts = line.split(' ');
    const [id = '', type = '', sizeText = ''] = parts;
    if (parts.length !== 3 || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id) || !/^\d+$/.test(sizeText)) {
      this.index += 1;
      return;
    }
    const size = Number(sizeText);
    const hash = createHash(id.length === 64 ? 'sha256' : 'sha1');
    hash.update(`${type} ${size}\0`);
    this.object = { id, hash, left: size };
    if (size === 0) this.finishObject();
  }

  private finishObject(): void {
    const object = this.object;
    this.object = null;
    if (object === null) return;
    if (object.hash.digest('hex') !== object.id) this.mismatched.push(this.requests[this.index] ?? object.id);
    this.index += 1;
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
