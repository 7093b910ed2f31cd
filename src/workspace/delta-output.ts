// What git's diff-tree says about a turn's delta, read into goald's shapes: the raw and numstat records as
// one FileChange per path, and the patch's head kept to a size with a marker that says what was cut.

import { GoaldError } from '../errors.js';
import type { FileChange } from './types.js';

/** Parses `diff-tree --raw --numstat -z` output into one FileChange per path. */
export function parseRawNumstat(output: string): FileChange[] {
  const fields = output.split('\0');
  const statuses: Array<{ path: string; status: FileChange['status'] }> = [];
  const counts = new Map<string, { added: number | null; deleted: number | null }>();
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    if (field === '') continue;
    if (field.startsWith(':')) {
      // ":<old mode> <new mode> <old id> <new id> <status>" then the path as the next field.
      const letter = field.slice(field.lastIndexOf(' ') + 1);
      const file = fields[++i] ?? '';
      statuses.push({ path: file, status: toStatus(letter, file) });
      continue;
    }
    // "<added>\t<deleted>\t<path>"; binary files say "-" for both counts.
    const firstTab = field.indexOf('\t');
    const secondTab = field.indexOf('\t', firstTab + 1);
    const added = field.slice(0, firstTab);
    const deleted = field.slice(firstTab + 1, secondTab);
    counts.set(field.slice(secondTab + 1), { added: toCount(added), deleted: toCount(deleted) });
  }
  return statuses.map(({ path: file, status }) => {
    const count = counts.get(file);
    return { path: file, status, added: count?.added ?? null, deleted: count?.deleted ?? null };
  });
}

function toStatus(letter: string, file: string): FileChange['status'] {
  if (letter === 'A' || letter === 'M' || letter === 'D' || letter === 'T') return letter;
  throw new GoaldError('internal', `git diff-tree reported status "${letter}" for ${file}, which goald does not expect`);
}

function toCount(text: string): number | null {
  return text === '-' ? null : Number.parseInt(text, 10);
}

interface PatchCollector {
  push: (chunk: Buffer) => void;
  finish: () => string;
}

/** Buffers the head of a streamed patch, counts the rest, and cuts it to maxChars with a marker. */
export function createPatchCollector(maxChars: number): PatchCollector {
  // UTF-8 needs at most 4 bytes per character, so this many bytes always holds maxChars characters.
  const keepBytes = Math.max(0, maxChars) * 4 + 4;
  const head: Buffer[] = [];
  let headBytes = 0;
  let overflowBytes = 0;
  let overflowLines = 0;

  return {
    push(chunk) {
      if (headBytes < keepBytes) {
        head.push(chunk);
        headBytes += chunk.length;
        return;
      }
      overflowBytes += chunk.length;
      for (const byte of chunk) if (byte === 0x0a) overflowLines++;
    },
    finish() {
      const text = Buffer.concat(head).toString('utf8');
      if (overflowBytes === 0 && text.length <= maxChars) return text;
      return cutPatch(text, maxChars, overflowBytes, overflowLines);
    },
  };
}

/** Cuts `text` (plus an unbuffered remainder) to maxChars including a marker that says what was cut. */
export function cutPatch(text: string, maxChars: number, extraBytes = 0, extraLines = 0): string {
  const marker = (lines: number, bytes: number): string =>
    `[goald: patch cut here, ${lines} more lines (${bytes} bytes) not shown]\n`;
  // The longest marker the cut could need: a leading newline and every line of the patch counted.
  const longest = `\n${marker(countLines(text) + extraLines, Buffer.byteLength(text) + extraBytes)}`;
  const budget = maxChars - longest.length;
  if (budget <= 0) return longest.slice(1, Math.max(0, maxChars) + 1);
  let kept = text.slice(0, budget);
  // End on a whole line when that loses little, so the evaluator never reads half a hunk header.
  const lastNewline = kept.lastIndexOf('\n');
  if (lastNewline >= budget / 2) kept = kept.slice(0, lastNewline + 1);
  // Never leave half a surrogate pair at the cut.
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  const rest = text.slice(kept.length);
  const separator = kept === '' || kept.endsWith('\n') ? '' : '\n';
  return kept + separator + marker(countLines(rest) + extraLines, Buffer.byteLength(rest) + extraBytes);
}

// Counts newlines: a unified diff ends every line, its last included, with one.
function countLines(text: string): number {
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}
