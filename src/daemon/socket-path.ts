// The control socket's path must fit in `sockaddr_un.sun_path`, or bind/connect fail with an error that
// does not say why (or, on some systems, silently use a truncated path).

import { GoaldError } from '../errors.js';

// sun_path is 104 bytes on macOS and the BSDs (108 on Linux), including the terminating NUL: the portable
// limit for the path itself is 103 bytes.
export const MAX_SOCKET_PATH_BYTES = 103;

/** Throws a `config` GoaldError when `socketPath` is too long (in bytes) to bind or connect to. */
export function checkSocketPath(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath, 'utf8');
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new GoaldError(
      'config',
      `the socket path ${socketPath} is ${bytes} bytes; Unix sockets allow at most ${MAX_SOCKET_PATH_BYTES}`,
      'set GOALD_SOCKET to a shorter path, e.g. /tmp/goald-$USER.sock',
    );
  }
}
