// Reads a streamed `git diff-tree -p --full-index` patch into one summary per file entry, keeping counts
// rather than lines, so a huge patch costs time but no memory; only the few files asked for whole (with
// whole-file context: package.json) are put back together, old and new, within a bound.

import { StringDecoder } from 'node:string_decoder';
import { createLineSplitter, MAX_LINE_CHARS } from '../process/line-splitter.js';
import { assertionsIn, skipMarkersIn } from './test-markers.js';

/** One file entry of the patch (a type change is two entries for one path: the old file deleted, the new added). */
export interface FilePatchSummary {
  path: string;
  /** `new file mode`: the path did not exist before. */
  created: boolean;
  /** `deleted file mode`: the path no longer exists. */
  removed: boolean;
  /** Whole blob ids from the `index` line; null when the entry has none (a mode change alone). */
  oldBlob: string | null;
  newBlob: string | null;
  /** Skip markers on added lines minus those on removed lines, by label (lines are scanned only when asked). */
  markers: Map<string, number>;
  assertionsAdded: number;
  assertionsRemoved: number;
  /**
   * For files kept whole (patched with whole-file context): the text before and after; null where the file
   * did not exist, was too large, or had a line too long to keep.
   */
  oldText: string | null;
  newText: string | null;
}

export interface PatchScanner {
  push(chunk: Buffer): void;
  finish(): FilePatchSummary[];
}

const DIFF_HEADER = 'diff --git ';
const ZERO_BLOB = /^0+$/;
// A file kept whole larger than this is not a manifest anyone writes by hand: it is not put together.
const MAX_KEPT_CHARS = 4 * 1024 * 1024;

/** Which entries the scanner reads: changed lines scanned for markers, or whole texts kept. */
export interface PatchScannerOptions {
  scanLines: (path: string) => boolean;
  keepText?: (path: string) => boolean;
}

/** A scanner that counts markers and assertions on the changed lines of the files `scanLines` accepts. */
export function createPatchScanner(options: PatchScannerOptions): PatchScanner {
  const files: FilePatchSummary[] = [];
  let current: FilePatchSummary | null = null;
  let inHunk = false;
  let scanning = false;
  let kept: { old: string[]; new: string[]; chars: number; lost: boolean } | null = null;

  const closeEntry = (): void => {
    if (current === null || kept === null) return;
    const whole = !kept.lost && kept.chars <= MAX_KEPT_CHARS;
    current.oldText = whole && !current.created ? kept.old.join('\n') : null;
    current.newText = whole && !current.removed ? kept.new.join('\n') : null;
    kept = null;
  };

  const onLine = (line: string): void => {
    if (line.startsWith(DIFF_HEADER)) {
      closeEntry();
      current = newEntry(pathOfHeader(line.slice(DIFF_HEADER.length)));
      files.push(current);
      inHunk = false;
      scanning = options.scanLines(current.path);
      if (options.keepText?.(current.path) === true) kept = { old: [], new: [], chars: 0, lost: false };
      return;
    }
    if (current === null) return;
    if (!inHunk) {
      if (line.startsWith('@@')) inHunk = true;
      else if (line.startsWith('new file mode')) current.created = true;
      else if (line.startsWith('deleted file mode')) current.removed = true;
      else if (line.startsWith('index ')) readBlobs(current, line);
      return;
    }
    if (kept !== null) keepLine(kept, line);
    if (!scanning) return;
    const sign = line.charAt(0);
    if (sign !== '+' && sign !== '-') return; // `@@` of the next hunk, `\ No newline at end of file`
    const text = line.slice(1);
    const step = sign === '+' ? 1 : -1;
    for (const label of skipMarkersIn(text)) current.markers.set(label, (current.markers.get(label) ?? 0) + step);
    const assertions = assertionsIn(text);
    if (sign === '+') current.assertionsAdded += assertions;
    else current.assertionsRemoved += assertions;
  };

  // A line cut by the splitter (over its limit) cannot be put back together: the kept text is then lost.
  const splitter = createLineSplitter((line) => {
    if (kept !== null && line.length >= MAX_LINE_CHARS) kept.lost = true;
    onLine(line);
  });
  const decoder = new StringDecoder('utf8');
  return {
    push(chunk) {
      splitter.push(decoder.write(chunk));
    },
    finish() {
      splitter.push(decoder.end());
      splitter.flush();
      closeEntry();
      return files;
    },
  };
}

function newEntry(path: string): FilePatchSummary {
  return {
    path,
    created: false,
    removed: false,
    oldBlob: null,
    newBlob: null,
    markers: new Map(),
    assertionsAdded: 0,
    assertionsRemoved: 0,
    oldText: null,
    newText: null,
  };
}

// A hunk line of a file kept whole: context goes to both sides, `-` to the old text, `+` to the new.
function keepLine(kept: { old: string[]; new: string[]; chars: number }, line: string): void {
  const sign = line.charAt(0);
  if (sign !== ' ' && sign !== '-' && sign !== '+') return; // `@@` headers, `\ No newline at end of file`
  const text = line.slice(1);
  kept.chars += text.length + 1;
  if (kept.chars > MAX_KEPT_CHARS) return;
  if (sign !== '+') kept.old.push(text);
  if (sign !== '-') kept.new.push(text);
}

// `index <old>..<new>[ <mode>]`
function readBlobs(entry: FilePatchSummary, line: string): void {
  const ids = line.slice('index '.length).split(' ')[0]?.split('..') ?? [];
  const [oldBlob, newBlob] = ids;
  if (oldBlob === undefined || newBlob === undefined) return;
  entry.oldBlob = ZERO_BLOB.test(oldBlob) ? null : oldBlob;
  entry.newBlob = ZERO_BLOB.test(newBlob) ? null : newBlob;
}

/**
 * The path of `a/<path> b/<path>` (renames are off, so both sides name the same path), or of its C-quoted
 * form `"a/<path>" "b/<path>"` that git uses for paths with control characters, quotes or backslashes.
 */
function pathOfHeader(rest: string): string {
  if (rest.startsWith('"')) return unquoteC(rest).slice(2);
  // `a/` + path + ` b/` + path: the path is (length - 5) / 2 characters.
  return rest.slice(2, 2 + (rest.length - 5) / 2);
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Decodes the first C-quoted string of `text` (git's quoting: escapes and octal bytes of UTF-8). */
function unquoteC(text: string): string {
  const bytes: number[] = [];
  for (let i = 1; i < text.length; i++) {
    const char = text.charAt(i);
    if (char === '"') break;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = text.charAt(++i);
    if (/[0-7]/.test(next)) {
      bytes.push(Number.parseInt(text.slice(i, i + 3), 8));
      i += 2;
    } else {
      bytes.push(C_ESCAPES[next] ?? next.charCodeAt(0));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
