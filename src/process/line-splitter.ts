// Turns streamed text into complete lines without unbounded memory: a line longer than the limit is
// delivered cut at the limit and the rest of it, up to its newline, is dropped.

/** Longest line delivered whole; agents that print minified JSON or progress bars can exceed it. */
export const MAX_LINE_CHARS = 64 * 1024;

export interface LineSplitter {
  push(text: string): void;
  /** Delivers the last, unterminated line (if any). */
  flush(): void;
}

/** Creates a splitter that calls `onLine` with each line, without its `\n` or `\r\n`. */
export function createLineSplitter(onLine: (line: string) => void, maxLineChars = MAX_LINE_CHARS): LineSplitter {
  let pending = '';
  // True after a long line was delivered cut: its remainder is skipped up to the next newline.
  let skipping = false;

  const deliver = (line: string): void => {
    const cut = line.length > maxLineChars ? line.slice(0, maxLineChars) : line;
    onLine(cut.endsWith('\r') ? cut.slice(0, -1) : cut);
  };

  return {
    push(text) {
      let start = 0;
      for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
        if (skipping) skipping = false;
        else deliver(pending + text.slice(start, newline));
        pending = '';
        start = newline + 1;
      }
      if (skipping) return;
      pending += text.slice(start);
      if (pending.length > maxLineChars) {
        deliver(pending);
        pending = '';
        skipping = true;
      }
    },
    flush() {
      if (!skipping && pending.length > 0) deliver(pending);
      pending = '';
      skipping = false;
    },
  };
}
