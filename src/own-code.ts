// goald's own code, loaded as it is first needed (scripts/bundle.mjs: chunks beside the entry). A file of it
// gone while goald runs means goald was reinstalled or rebuilt under the running process (`npm install -g`
// over a running daemon), not that a write failed nor that a goal did anything wrong.

import path from 'node:path';

import { errnoCodeOf } from './errno.js';
import { errorChain } from './error-chain.js';
import { relativeInside } from './path-inside.js';

// In the bundle every chunk sits in this module's own directory; in tsc's build, under dist/src/.
const CODE_DIR = import.meta.dirname;

/** What `error` (or one of its causes) says of a file of goald's own code it could not load; null when it is something else. */
export function missingOwnCode(error: unknown): string | null {
  for (const current of errorChain(error)) {
    const code = errnoCodeOf(current);
    const file = 'path' in current && typeof current.path === 'string' ? current.path : null;
    if (code === 'ENOENT' && file !== null && relativeInside(CODE_DIR, path.resolve(file)) !== null) return current.message;
    // require()'s and import()'s own words name the importing chunk's path.
    if ((code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && current.message.includes(`${CODE_DIR}${path.sep}`)) return current.message.split('\n')[0] ?? current.message;
  }
  return null;
}
