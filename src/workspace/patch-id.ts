// `git patch-id --stable` computed in this process from the patch text, so a turn's delta needs no
// `git patch-id` process of its own. It follows git's builtin/patch-id.c (2.39 and later) byte for byte
// for the patches `git diff-tree -p --full-index --no-renames` prints: every line is hashed with git's
// whitespace (space, tab, LF, CR) removed, hunk headers and `index` lines are not, a binary file counts
// by its two blob ids, and each file's SHA-1 is added into a 160-bit sum (the `--stable` order
// independence). test/workspace/patch-id.test.ts checks it against the real git on varied diffs.

import type { Hash } from 'node:crypto';

const NEWLINE = 0x0a;

// git's own ctype (sane_ctype): only these four bytes are spaces (not \v or \f, unlike C's isspace).
function isGitSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function isAsciiLetter(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a));
}

function startsWith(line: Buffer, prefix: string): boolean {
  if (line.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (line[i] !== prefix.charCodeAt(i)) return false;
  return true;
}

function isHexDigit(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66));
}

// git's get_oid_hex: 40 hex digits at `from` (a commit id: where the next patch begins).
function hasObjectIdAt(line: Buffer, from: number): boolean {
  if (line.length < from + 40) return false;
  for (let i = from; i < from + 40; i++) if (!isHexDigit(line[i])) return false;
  return true;
}

// git's scan_hunk_header on `@@ -a[,b] +c[,d] @@`: the line counts b and d (1 when absent). Like git, it
// sets `before` first and leaves `after` as it was when the header is malformed.
function scanHunkHeader(line: Buffer, counts: { before: number; after: number }): void {
  const digitsEnd = (start: number): number => {
    let end = start;
    while (end < line.length && (line[end] ?? 0) >= 0x30 && (line[end] ?? 0) <= 0x39) end++;
    return end;
  };
  // C's atoi: the leading digits (there is no sign here), 0 when there are none.
  const atoi = (start: number): number => {
    const end = digitsEnd(start);
    return end === start ? 0 : Number.parseInt(line.toString('latin1', start, end), 10);
  };
  let q = 4;
  let end = digitsEnd(q);
  if (line[end] === 0x2c) {
    q = end + 1;
    counts.before = atoi(q);
    end = digitsEnd(q);
  } else counts.before = 1;
  if (end === q || line[end] !== 0x20 || line[end + 1] !== 0x2b) return;
  const r = end + 2;
  end = digitsEnd(r);
  counts.after = line[end] === 0x2c ? atoi(end + 1) : 1;
}

// node:crypto is loaded with the first patch, not with goald: `goald start` has an agent running before
// any turn has a patch, and loading it costs a few milliseconds on the way there.
const sha1 = (): Hash => process.getBuiltinModule('node:crypto').createHash('sha1');

/** Computes `git patch-id --stable` of one patch fed to it line by line. */
export class StablePatchId {
  private readonly sum = new Uint8Array(20);
  private hash: Hash = sha1();
  private patchLength = 0;
  private before = -1;
  private after = -1;
  private binary = false;
  private preImage = '';
  private postImage = '';
  /** Set where git stops reading this patch (text after it would belong to the next one). */
  private ended = false;

  /** Feeds one line of the patch, with or without its final newline. */
  line(raw: Buffer): void {
    if (this.ended) return;
    // git handles each line as a C string: whatever follows a NUL byte is invisible to it.
    const nul = raw.indexOf(0);
    const line = nul === -1 ? raw : raw.subarray(0, nul);
    // A commit id, alone or after `commit ` / `From `, starts the next patch (git log output).
    const prefix = startsWith(line, 'commit ') ? 7 : startsWith(line, 'From ') ? 5 : 0;
    // "\ No newline at end of file" markers are not part of the change.
    if (prefix === 0 && startsWith(line, '\\ ') && line.length > 12) return;
    if (hasObjectIdAt(line, prefix)) {
      this.ended = true;
      return;
    }
    // Text before the first `diff` line (a commit message) is ignored.
    if (this.patchLength === 0 && !startsWith(line, 'diff ')) return;

    if (this.before === -1) {
      // A file's header.
      if (startsWith(line, 'GIT binary patch') || startsWith(line, 'Binary files')) {
        this.binary = true;
        this.before = 0;
        this.hash.update(this.preImage, 'latin1');
        this.hash.update(this.postImage, 'latin1');
        this.flushFile();
        return;
      }
      if (startsWith(line, 'index ')) {
        this.readBlobIds(line);
        return;
      }
      if (startsWith(line, '--- ')) {
        this.before = 1;
        this.after = 1;
      } else if (!isAsciiLetter(line[0])) {
        this.ended = true;
        return;
      }
    }

    if (this.binary) {
      if (startsWith(line, 'diff ')) {
        this.binary = false;
        this.before = -1;
      }
      return;
    }

    if (this.before === 0 && this.after === 0) {
      if (startsWith(line, '@@ -')) {
        const counts = { before: this.before, after: this.after };
        scanHunkHeader(line, counts);
        this.before = counts.before;
        this.after = counts.after;
        return;
      }
      if (!startsWith(line, 'diff ')) {
        this.ended = true;
        return;
      }
      // The next file: its hash is summed separately.
      this.flushFile();
      this.before = -1;
      this.after = -1;
    }

    const first = line[0];
    if (first === 0x2d || first === 0x20) this.before--;
    if (first === 0x2b || first === 0x20) this.after--;
    this.hashWithoutSpaces(line);
  }

  /** The patch id (40 hex digits), or null for a patch with nothing in it. */
  digest(): string | null {
    this.flushFile();
    return this.patchLength === 0 ? null : Buffer.from(this.sum).toString('hex');
  }

  // `index <pre>..<post>[ <mode>]`: the blob ids a binary file is identified by.
  private readBlobIds(line: Buffer): void {
    const text = line.toString('latin1');
    const dots = text.indexOf('..');
    if (dots === -1) return;
    const space = text.indexOf(' ', dots);
    // Without a mode, the ids run to the line's end (git drops its last character: the newline).
    const end = space !== -1 ? space : text.length - 1;
    this.preImage = text.slice('index '.length, dots).slice(0, 64);
    this.postImage = text.slice(dots + 2, Math.max(dots + 2, end)).slice(0, 64);
  }

  private hashWithoutSpaces(line: Buffer): void {
    const kept = Buffer.allocUnsafe(line.length);
    let length = 0;
    for (const byte of line) if (!isGitSpace(byte)) kept[length++] = byte;
    this.patchLength += length;
    this.hash.update(kept.subarray(0, length));
  }

  // Adds the current file's SHA-1 into the sum (20 bytes, carried from the first byte on) and starts anew.
  private flushFile(): void {
    const digest = this.hash.digest();
    this.hash = sha1();
    let carry = 0;
    for (let i = 0; i < this.sum.length; i++) {
      carry += (this.sum[i] ?? 0) + (digest[i] ?? 0);
      this.sum[i] = carry & 0xff;
      carry >>= 8;
    }
  }
}

/** `git patch-id --stable` of a whole patch; null when it has no content. */
export function stablePatchId(patch: Buffer): string | null {
  const id = new StablePatchId();
  let start = 0;
  while (start < patch.length) {
    const newline = patch.indexOf(NEWLINE, start);
    const end = newline === -1 ? patch.length : newline + 1;
    id.line(patch.subarray(start, end));
    start = end;
  }
  return id.digest();
}
