// Reads a streamed `git diff-tree -p -U0 --full-index` patch into one summary per file entry, keeping counts
// rather than lines, so a huge patch costs time but no memory.

import { StringDecoder } from 'node:string_decoder';
import { createLineSplitter } from '../process/line-splitter.js';
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
}

export interface PatchScanner {
  push(chunk: Buffer): void;
  finish(): FilePatchSummary[];
}

const DIFF_HEADER = 'diff --git ';
const ZERO_BLOB = /^0+$/;

/** A scanner that counts markers and assertions on the changed lines of the files `scanLines` accepts. */
export function createPatchScanner(scanLines: (path: string) => boolean): PatchScanner {
  const files: FilePatchSummary[] = [];
  let current: FilePatchSummary | null = null;
  let inHunk = false;
  let scanning = false;

  const onLine = (line: string): void => {
    if (line.startsWith(DIFF_HEADER)) {
      current = newEntry(pathOfHeader(line.slice(DIFF_HEADER.length)));
      files.push(current);
      inHunk = false;
      scanning = scanLines(current.path);
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

  const splitter = createLineSplitter(onLine);
  const decoder = new StringDecoder('utf8');
  return {
    push(chunk) {
      splitter.push(decoder.write(chunk));
    },
    finish() {
      splitter.push(decoder.end());
      splitter.flush();
      return files;
    },
  };
}

function newEntry(path: string): FilePatchSummary {
  return { path, created: false, removed: false, oldBlob: null, newBlob: null, markers: new Map(), assertionsAdded: 0, assertionsRemoved: 0 };
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
export function pathOfHeader(rest: string): string {
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
