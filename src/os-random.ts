// Random bytes from the kernel's CSPRNG, read from /dev/urandom. On Node 20 the first use of either crypto
// API (node:crypto's randomBytes or Web Crypto's getRandomValues) loads a dozen of node's internal modules,
// ~2 ms of a CLI process, and a foreground start makes its first process token before its first check;
// one small synchronous read costs ~0.4 ms. The bytes are the same kind crypto's would be (the kernel
// seeds both). Where /dev/urandom cannot be read, node:crypto gives them.

import { closeSync, openSync, readSync } from 'node:fs';

/** `count` cryptographically random bytes. */
export function osRandomBytes(count: number): Buffer {
  const bytes = Buffer.alloc(count);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      let filled = 0;
      while (filled < count) {
        const read = readSync(fd, bytes, filled, count - filled, null);
        if (read === 0) throw new Error('/dev/urandom ended');
        filled += read;
      }
    } finally {
      closeSync(fd);
    }
    return bytes;
  } catch {
    return process.getBuiltinModule('node:crypto').randomBytes(count);
  }
}
