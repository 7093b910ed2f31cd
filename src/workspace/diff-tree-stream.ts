// Reads the output of one `git diff-tree --stdin -r --raw --numstat -p --full-index -z` run over several
// tree pairs as it streams: per pair, the changed files with their line counts and, where asked, the
// stable patch id of its patch (computed here, see patch-id.ts) and the patch text up to a bound. One git
// process then does what took four (two `diff-tree`s, another piped into `git patch-id`).
//
// Per pair git prints `<from> <to>\n`, then (when anything changed) the raw records
// `:<modes> <ids> <status>\0<path>\0`, the numstat records `<added>\t<deleted>\t<path>\0`, an empty
// record `\0`, and the patch as text lines, up to the next pair's header line. No patch line can look like
// a header (80 hex digits and a space): patch lines start with a space, `+`, `-`, `@`, `\` or a keyword.

import { GoaldError } from '../errors.js';
import { StablePatchId } from './patch-id.js';
import type { FileChange } from './types.js';

/** What one pair's diff came to. */
export interface PairDiff {
  files: FileChange[];
  /** `git patch-id --stable` of the pair's patch; null when not asked for or empty. */
  patchId: string | null;
  /** The patch text, cut at `keepPatchBytes` (see `patchCut`); null when not asked for. */
  patch: string | null;
  /** True when the patch was longer than `keepPatchBytes` and `patch` holds only its head. */
  patchCut: boolean;
}

export interface PairRequest {
  from: string;
  to: string;
  /** Compute the patch id (and keep up to keepPatchBytes of the patch text) for this pair. */
  withPatch: boolean;
}

const NUL = 0x00;
const NEWLINE = 0x0a;
const COLON = 0x3a;
const TREE_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The lines to write to `git diff-tree --stdin` for these pairs; throws on an id that is not a full tree id. */
export function stdinFor(pairs: readonly PairRequest[]): string {
  for (const { from, to } of pairs) {
    if (!TREE_ID.test(from) || !TREE_ID.test(to)) {
      throw new GoaldError('internal', `diff-tree needs full tree ids, got "${from}" and "${to}"`);
    }
  }
  return pairs.map(({ from, to }) => `${from} ${to}\n`).join('');
}

interface PairState {
  request: PairRequest;
  statuses: Array<{ path: string; status: FileChange['status'] }>;
  counts: Map<string, { added: number | null; deleted: number | null }>;
  patchId: StablePatchId | null;
  patchChunks: Buffer[];
  patchBytes: number;
  patchCut: boolean;
}

type Mode =
  | { kind: 'header' } // expecting the header line of pair `index`
  | { kind: 'first' } // just after a header: a raw record, or (no change) the next header / the end
  | { kind: 'records' } // raw and numstat records, up to the empty record
  | { kind: 'raw-path'; status: FileChange['status'] | null; record: string }
  | { kind: 'patch' };

/** A streaming parser of one `diff-tree --stdin` run; push() stdout chunks, then finish(). */
export class DiffTreeStream {
  private readonly pairs: PairState[];
  private readonly keepPatchBytes: number;
  private index = 0;
  private mode: Mode = { kind: 'header' };
  private pending: Buffer = Buffer.alloc(0);

  constructor(pairs: readonly PairRequest[], options: { keepPatchBytes: number }) {
    this.keepPatchBytes = options.keepPatchBytes;
    this.pairs = pairs.map((request) => ({
      request,
      statuses: [],
      counts: new Map(),
      patchId: request.withPatch ? new StablePatchId() : null,
      patchChunks: [],
      patchBytes: 0,
      patchCut: false,
    }));
  }

  /** Takes the next chunk of git's stdout. */
  readonly push = (chunk: Buffer): void => {
    const data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    for (;;) {
      const used = this.step(data, at);
      if (used === 0) break;
      at += used;
    }
    this.pending = at === data.length ? Buffer.alloc(0) : data.subarray(at);
  };

  /** The result per pair, in the order asked; throws when the output was not what diff-tree prints. */
  finish(): PairDiff[] {
    if (this.pending.length > 0) {
      // The last patch line may lack its newline only if git was cut short; take it as it is.
      if (this.mode.kind === 'patch') this.patchLine(this.pending);
      else throw this.unexpected('output ends in the middle of a record');
      this.pending = Buffer.alloc(0);
    }
    if (this.index < this.pairs.length - 1 || (this.index === this.pairs.length - 1 && this.mode.kind === 'header')) {
      throw this.unexpected(`output ends before pair ${this.index + 1} of ${this.pairs.length}`);
    }
    return this.pairs.map((pair) => this.resultOf(pair));
  }

  // Consumes one unit (a line or a record) at `at`; returns how many bytes, 0 when more input is needed.
  private step(data: Buffer, at: number): number {
    if (at >= data.length) return 0;
    const mode = this.mode;
    switch (mode.kind) {
      case 'header': {
        const end = data.indexOf(NEWLINE, at);
        if (end === -1) return 0;
        const line = data.toString('latin1', at, end);
        const expected = this.headerOf(this.index);
        if (line !== expected) throw this.unexpected(`expected the header "${expected}", got "${line.slice(0, 100)}"`);
        this.mode = { kind: 'first' };
        return end + 1 - at;
      }
      case 'first': {
        if (data[at] === COLON) {
          this.mode = { kind: 'records' };
          return this.step(data, at);
        }
        // Nothing changed in this pair: its header is followed by the next one's.
        this.nextPair();
        return this.step(data, at);
      }
      case 'records': {
        const end = data.indexOf(NUL, at);
        if (end === -1) return 0;
        const record = data.toString('utf8', at, end);
        if (record === '') this.mode = { kind: 'patch' };
        else if (record.startsWith(':')) this.mode = { kind: 'raw-path', status: this.statusOf(record), record };
        else this.readNumstat(record);
        return end + 1 - at;
      }
      case 'raw-path': {
        const end = data.indexOf(NUL, at);
        if (end === -1) return 0;
        const path = data.toString('utf8', at, end);
        const status = mode.status ?? toStatus(mode.record.slice(mode.record.lastIndexOf(' ') + 1), path);
        this.current().statuses.push({ path, status });
        this.mode = { kind: 'records' };
        return end + 1 - at;
      }
      case 'patch': {
        const end = data.indexOf(NEWLINE, at);
        if (end === -1) return 0;
        const line = data.subarray(at, end + 1);
        if (this.index + 1 < this.pairs.length && this.isHeaderOf(this.index + 1, line)) {
          this.nextPair();
          return this.step(data, at);
        }
        this.patchLine(line);
        return end + 1 - at;
      }
    }
  }

  private current(): PairState {
    const pair = this.pairs[this.index];
    if (pair === undefined) throw this.unexpected(`more output than the ${this.pairs.length} pairs asked for`);
    return pair;
  }

  private nextPair(): void {
    this.index += 1;
    this.mode = { kind: 'header' };
  }

  private headerOf(index: number): string {
    const pair = this.pairs[index];
    if (pair === undefined) throw this.unexpected(`more output than the ${this.pairs.length} pairs asked for`);
    return `${pair.request.from} ${pair.request.to}`;
  }

  private isHeaderOf(index: number, line: Buffer): boolean {
    const header = this.headerOf(index);
    // `line` ends with its newline.
    return line.length === header.length + 1 && line.toString('latin1', 0, header.length) === header;
  }

  private statusOf(record: string): FileChange['status'] | null {
    const letter = record.slice(record.lastIndexOf(' ') + 1);
    return letter === 'A' || letter === 'M' || letter === 'D' || letter === 'T' ? letter : null;
  }

  // "<added>\t<deleted>\t<path>"; binary files say "-" for both counts.
  private readNumstat(record: string): void {
    const firstTab = record.indexOf('\t');
    const secondTab = record.indexOf('\t', firstTab + 1);
    if (firstTab === -1 || secondTab === -1) throw this.unexpected(`"${record.slice(0, 100)}" is not a numstat record`);
    this.current().counts.set(record.slice(secondTab + 1), {
      added: toCount(record.slice(0, firstTab)),
      deleted: toCount(record.slice(firstTab + 1, secondTab)),
    });
  }

  private patchLine(line: Buffer): void {
    const pair = this.current();
    if (pair.patchId === null) return;
    pair.patchId.line(line);
    if (pair.patchBytes + line.length <= this.keepPatchBytes) {
      pair.patchChunks.push(line);
      pair.patchBytes += line.length;
    } else pair.patchCut = true;
  }

  private resultOf(pair: PairState): PairDiff {
    const files = pair.statuses.map(({ path, status }) => {
      const count = pair.counts.get(path);
      return { path, status, added: count?.added ?? null, deleted: count?.deleted ?? null };
    });
    const withPatch = pair.patchId !== null;
    return {
      files,
      patchId: pair.patchId?.digest() ?? null,
      patch: withPatch ? Buffer.concat(pair.patchChunks).toString('utf8') : null,
      patchCut: pair.patchCut,
    };
  }

  private unexpected(problem: string): GoaldError {
    return new GoaldError('internal', `could not read git diff-tree's output: ${problem}`, 'this is a goald bug; please report it with your git version');
  }
}

function toStatus(letter: string, file: string): FileChange['status'] {
  if (letter === 'A' || letter === 'M' || letter === 'D' || letter === 'T') return letter;
  throw new GoaldError('internal', `git diff-tree reported status "${letter}" for ${file}, which goald does not expect`);
}

function toCount(text: string): number | null {
  return text === '-' ? null : Number.parseInt(text, 10);
}
