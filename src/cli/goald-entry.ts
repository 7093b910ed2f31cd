// Where the running goald's executable script is, for everything that starts goald again: the daemon's
// auto-start, the systemd/launchd unit `goald daemon install` writes, and the PostToolUse hook command
// Claude Code runs. The script is `bin.js` beside this module in both builds: tsc's dist/src/cli/ and the
// bundle's dist/bundle/, where every chunk sits flat beside the entry (scripts/bundle.mjs). Run from the
// TypeScript sources (vitest), there is no bin.js beside it.

import path from 'node:path';

/** The absolute path of this goald's bin.js (which may not exist when running from sources). */
export function goaldEntryPath(): string {
  return path.join(import.meta.dirname, 'bin.js');
}
