// Where an edit_file search text is in a file: exactly first; when it is not there verbatim, line by line
// with whitespace ignored (indentation and spacing are what models most often get wrong). A search that
// matches nowhere or more than once is not applied: the answer lists the nearest candidates, with line
// numbers, so the model can retry with the text as it really is. Pure.

export type EditLocation =
  | { ok: true; kind: 'exact' | 'whitespace'; start: number; end: number; replacement: string }
  | { ok: false; problem: string };

const MAX_CANDIDATES = 3;
const CANDIDATE_CONTEXT_LINES = 2;

/** Finds the one place `search` stands in `content` and the text that replaces it. */
export function locateEdit(content: string, search: string, replacement: string): EditLocation {
  const exact = occurrences(content, search);
  if (exact.length === 1) {
    const start = exact[0] ?? 0;
    return { ok: true, kind: 'exact', start, end: start + search.length, replacement };
  }
  if (exact.length > 1) {
    return { ok: false, problem: `old_string occurs ${exact.length} times (${describeLines(content, exact)}); include more surrounding lines so it is unique` };
  }
  const lines = content.split('\n');
  const wanted = trimBlankEnds(search.split('\n'));
  if (wanted.length === 0) return { ok: false, problem: 'old_string is empty or blank' };
  const normalizedWanted = wanted.map(normalize);
  const normalizedLines = lines.map(normalize);
  const found: number[] = [];
  for (let index = 0; index + wanted.length <= lines.length; index += 1) {
    if (normalizedWanted.every((line, offset) => normalizedLines[index + offset] === line)) found.push(index);
  }
  if (found.length === 1) {
    const first = found[0] ?? 0;
    const start = offsetOfLine(lines, first);
    const last = first + wanted.length - 1;
    const end = offsetOfLine(lines, last) + (lines[last]?.length ?? 0);
    return { ok: true, kind: 'whitespace', start, end, replacement: reindent(replacement, wanted[0] ?? '', lines[first] ?? '') };
  }
  if (found.length > 1) {
    const where = found.map((index) => `line ${index + 1}`).join(', ');
    return { ok: false, problem: `old_string matches ${found.length} places when whitespace is ignored (${where}); include more surrounding lines so it is unique` };
  }
  return { ok: false, problem: `old_string was not found, not even with whitespace ignored. Nearest candidates:\n${nearestCandidates(lines, wanted)}` };
}

function occurrences(content: string, search: string): number[] {
  if (search === '') return [];
  const found: number[] = [];
  for (let index = content.indexOf(search); index !== -1; index = content.indexOf(search, index + 1)) found.push(index);
  return found;
}

function describeLines(content: string, offsets: readonly number[]): string {
  return offsets.map((offset) => `line ${content.slice(0, offset).split('\n').length}`).join(', ');
}

function normalize(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

function trimBlankEnds(lines: string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]?.trim() === '') start += 1;
  while (end > start && lines[end - 1]?.trim() === '') end -= 1;
  return lines.slice(start, end);
}

function offsetOfLine(lines: readonly string[], index: number): number {
  let offset = 0;
  for (let line = 0; line < index; line += 1) offset += (lines[line]?.length ?? 0) + 1;
  return offset;
}

function indentOf(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? '';
}

// The model's indentation was off by a fixed prefix: shift its replacement the same way.
function reindent(replacement: string, searchedFirst: string, actualFirst: string): string {
  const given = indentOf(searchedFirst);
  const actual = indentOf(actualFirst);
  if (given === actual) return trimBlankEnds(replacement.split('\n')).join('\n');
  return trimBlankEnds(replacement.split('\n'))
    .map((line) => (line.startsWith(given) ? actual + line.slice(given.length) : line))
    .join('\n');
}

// The file's places most like the search's first line (character bigram similarity), with context.
function nearestCandidates(lines: readonly string[], wanted: readonly string[]): string {
  const probe = normalize(wanted.find((line) => line.trim() !== '') ?? '');
  const scored = lines
    .map((line, index) => ({ index, score: similarity(probe, normalize(line)) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, MAX_CANDIDATES);
  if (scored.length === 0) return '(nothing similar in the file; read it again)';
  return scored
    .map(({ index }) => {
      const from = Math.max(0, index - CANDIDATE_CONTEXT_LINES);
      const to = Math.min(lines.length, index + Math.max(wanted.length, 1) + CANDIDATE_CONTEXT_LINES);
      const excerpt = lines.slice(from, to).map((line, offset) => `${String(from + offset + 1).padStart(5)}| ${line}`);
      return `near line ${index + 1}:\n${excerpt.join('\n')}`;
    })
    .join('\n');
}

// Dice coefficient over character bigrams: 1 for equal texts, 0 for nothing in common.
function similarity(a: string, b: string): number {
  if (a === '' || b === '') return 0;
  if (a === b) return 1;
  const bigrams = new Map<string, number>();
  for (let index = 0; index < a.length - 1; index += 1) {
    const pair = a.slice(index, index + 2);
    bigrams.set(pair, (bigrams.get(pair) ?? 0) + 1);
  }
  let common = 0;
  for (let index = 0; index < b.length - 1; index += 1) {
    const pair = b.slice(index, index + 2);
    const count = bigrams.get(pair) ?? 0;
    if (count > 0) {
      bigrams.set(pair, count - 1);
      common += 1;
    }
  }
  const total = a.length - 1 + (b.length - 1);
  return total <= 0 ? 0 : (2 * common) / total;
}
