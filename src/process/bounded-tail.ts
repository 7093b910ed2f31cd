// The last N bytes of a stream, kept in memory while the whole stream goes to disk.

export interface BoundedTail {
  append(chunk: Buffer): void;
  /** The kept bytes as UTF-8, starting at a character boundary. */
  text(): string;
  /** Bytes seen in all, kept or not. */
  readonly totalBytes: number;
}

/** Creates a tail that keeps at most `maxBytes` of what was appended. */
export function createBoundedTail(maxBytes: number): BoundedTail {
  const chunks: Buffer[] = [];
  let keptBytes = 0;
  let totalBytes = 0;

  return {
    append(chunk) {
      totalBytes += chunk.length;
      const kept = chunk.length > maxBytes ? chunk.subarray(chunk.length - maxBytes) : chunk;
      chunks.push(kept);
      keptBytes += kept.length;
      while (keptBytes > maxBytes) {
        const first = chunks[0];
        if (first === undefined) break;
        const excess = keptBytes - maxBytes;
        if (first.length <= excess) {
          chunks.shift();
          keptBytes -= first.length;
        } else {
          chunks[0] = first.subarray(excess);
          keptBytes -= excess;
        }
      }
    },
    text() {
      const bytes = Buffer.concat(chunks);
      // Cutting may have split a multi-byte character: skip its continuation bytes (10xxxxxx).
      let start = 0;
      while (start < bytes.length && start < 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
      return bytes.subarray(start).toString('utf8');
    },
    get totalBytes() {
      return totalBytes;
    },
  };
}
