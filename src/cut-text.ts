// Cutting text to a bound, done one way everywhere. A value shown on one line (a condition in the CLI, an
// error detail, a check name) ends in an ellipsis when cut: `…` by default, `...` where the text has always
// used it (prompts, per DESIGN.md § Prompt, and a few messages). A block of text (check output, a patch, an
// agent's message) says how much it lost with a `[... N chars cut ...]` marker. Every result fits its
// bound. Imports nothing: the hook's fast path uses it too.

/** Collapses every run of whitespace (newlines included) to one space, and trims. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Keeps the start of `text` within `max` chars, ending in `ellipsis` when it was longer. */
export function ellipsize(text: string, max: number, ellipsis = '…'): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - ellipsis.length))}${ellipsis}`;
}

/** A value for one line of at most `max` chars: whitespace collapsed, then cut with `ellipsis`. */
export function clip(text: string, max: number, ellipsis = '…'): string {
  return ellipsize(oneLine(text), max, ellipsis);
}

function cutMarker(cut: number): string {
  return `[... ${cut} chars cut ...]`;
}

// Room left for text once the marker for cutting `length - max` chars is in; never negative.
function keptChars(length: number, max: number): number {
  // The marker is sized for the largest possible cut count, so the result can only be shorter than max.
  return Math.max(0, max - cutMarker(length).length - 1);
}

/** Keeps the beginning of text within max chars, marking the cut at the end. */
export function cutHead(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = keptChars(text.length, max);
  if (keep === 0) return text.slice(0, Math.max(0, max));
  return `${text.slice(0, keep)}\n${cutMarker(text.length - keep)}`;
}

/** Keeps the end of text within max chars, marking the cut at the start. */
export function cutTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = keptChars(text.length, max);
  if (keep === 0) return text.slice(text.length - Math.max(0, max));
  return `${cutMarker(text.length - keep)}\n${text.slice(text.length - keep)}`;
}

/** Keeps both ends of text within max chars, marking the cut in the middle. */
export function cutMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, keptChars(text.length, max) - 1);
  if (keep === 0) return text.slice(0, Math.max(0, max));
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return `${text.slice(0, head)}\n${cutMarker(text.length - keep)}\n${text.slice(text.length - tail)}`;
}
