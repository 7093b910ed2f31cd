// Bounded text helpers shared by the prompt and the progress output.

/** Cuts `text` to `max` chars, ending with `...` only when it was longer. */
export function truncateWithEllipsis(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 3))}...`;
}

/** Keeps the last `max` chars of `text`, marking the cut at the start. */
export function keepTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.length - max;
  return `[... ${cut} chars cut ...]\n${text.slice(cut)}`;
}

/** Collapses whitespace so a value fits on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
