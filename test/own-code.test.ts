// A file of goald's own code gone (reinstalled under a running daemon) told from a failed write: the
// same `open` ENOENT, a different place. Run from the sources here, so goald's code is src/.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { missingOwnCode } from '../src/own-code.js';
import { describeStorageFailure } from '../src/supervisor/storage-failure.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src');

function enoent(file: string, syscall = 'open'): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file or directory, ${syscall} '${file}'`), { code: 'ENOENT', errno: -2, syscall, path: file });
}

describe('missingOwnCode', () => {
  it('names a chunk of goald gone, also as the cause of a wrapper, and nothing else', () => {
    const chunk = path.join(SRC, 'inspect-turn-AbC123.js');
    expect(missingOwnCode(enoent(chunk))).toBe(`ENOENT: no such file or directory, open '${chunk}'`);
    expect(missingOwnCode(new Error('the turn failed', { cause: enoent(chunk) }))).toContain('inspect-turn-AbC123.js');
    expect(missingOwnCode(enoent('/tmp/home/goals/g1/turn-3.log'))).toBeNull();
    expect(missingOwnCode(enoent(`${SRC}-other/x.js`))).toBeNull(); // a sibling directory named alike
    expect(missingOwnCode(Object.assign(new Error(`Cannot find module './x.js'\nRequire stack:\n- ${path.join(SRC, 'a.js')}`), { code: 'MODULE_NOT_FOUND' }))).toBe("Cannot find module './x.js'");
    expect(missingOwnCode(Object.assign(new Error("Cannot find module 'left-pad'\nRequire stack:\n- /elsewhere/a.js"), { code: 'MODULE_NOT_FOUND' }))).toBeNull();
  });

  it('is no storage failure, where the same open of goald\'s state is one', () => {
    expect(describeStorageFailure(enoent(path.join(SRC, 'chunk-1.js')))).toBeNull();
    expect(describeStorageFailure(enoent('/tmp/home/goals/g1/turn-3.log'))).toMatch(/^goald could not write its files: ENOENT/);
  });
});
