// The snapshot's shell prints a line of its own before the output that follows it (the marker after
// `git add`, write-tree's tree before diff-tree's diff): a stdout handler that holds bytes until the first
// line break, hands that line over, and then every later byte to whatever the line's reader chose.

/**
 * A stdout handler: `onFirstLine` gets the bytes before the first line break (without it) and returns
 * where every byte after it goes. Nothing is delivered until that line is whole.
 */
export function splitFirstLine(onFirstLine: (line: Buffer) => (chunk: Buffer) => void): (chunk: Buffer) => void {
  let head: Buffer | null = Buffer.alloc(0);
  let rest: (chunk: Buffer) => void = () => undefined;
  return (chunk) => {
    if (head === null) {
      rest(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf(0x0a);
    if (end === -1) return;
    const line = head.subarray(0, end);
    const after = head.subarray(end + 1);
    head = null;
    rest = onFirstLine(line);
    if (after.length > 0) rest(after);
  };
}
