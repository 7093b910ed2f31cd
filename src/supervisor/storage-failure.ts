// Telling a failed write of goald's own files (state.json, turns.jsonl, events, prompts, transcripts,
// snapshot objects) from a bug: such a failure ends the goal as `failed` / `storage` with the system's
// message, instead of crashing the supervisor and leaving `start --wait` waiting for an end that never comes.

import { clip } from '../cut-text.js';
import { errnoCodeOf } from '../errno.js';
import { errorChain } from '../error-chain.js';
import { missingOwnCode } from '../own-code.js';

// A git stderr can be long; the reason stays one readable line.
const MESSAGE_MAX_CHARS = 400;
// Codes that mean the storage itself refuses, whatever the call: full, over quota, read-only, failing.
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG']);
// Calls that write: any system error from one of them is a write failure (a removed or unwritable
// directory, too many open files).
const WRITE_SYSCALLS = new Set(['open', 'write', 'writev', 'rename', 'fsync', 'fdatasync', 'mkdir', 'close', 'ftruncate', 'copyfile', 'link', 'unlink', 'chmod']);
// The same failures as a child process (git writing snapshot objects) words them on stderr.
const STORAGE_TEXTS = /No space left on device|Disk quota exceeded|Read-only file system|Input\/output error/i;

/** The message of a failed write in `error` (or its causes), or null when the error is something else. */
export function describeStorageFailure(error: unknown): string | null {
  // A file of goald's own code gone (reinstalled under a running daemon) is read by an `open` too.
  if (missingOwnCode(error) !== null) return null;
  for (const current of errorChain(error)) {
    const code = errnoCodeOf(current);
    const syscall = 'syscall' in current && typeof current.syscall === 'string' ? current.syscall : undefined;
    if (code !== undefined && (STORAGE_CODES.has(code) || (syscall !== undefined && WRITE_SYSCALLS.has(syscall)))) {
      return clip(`goald could not write its files: ${current.message}`, MESSAGE_MAX_CHARS);
    }
    if (STORAGE_TEXTS.test(current.message)) return clip(`goald could not write its files: ${current.message}`, MESSAGE_MAX_CHARS);
  }
  return null;
}
