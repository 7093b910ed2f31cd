// The first bytes of a file an agent may have made or replaced: a symlink is not followed, a FIFO is not
// waited on (opened non-blocking, and only a regular file is read), and no more than asked is read.

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Up to `maxBytes` of `file` as UTF-8; null when it is not a regular file or cannot be read. */
export function readFileStart(file: string, maxBytes: number): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const bytes = Buffer.alloc(maxBytes);
    const length = readSync(fd, bytes, 0, maxBytes, 0);
    return bytes.subarray(0, length).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
