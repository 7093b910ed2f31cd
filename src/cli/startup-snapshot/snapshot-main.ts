// What a start-up snapshot holds, and what runs when a `goald start --foreground` starts from one
// (docs/architecture.md, "Start-up snapshot"). The snapshot is taken with every module a foreground start
// loads before its first agent already evaluated and compiled (builder.ts), so such a start deserializes
// them instead of reading, compiling and running ~35 chunk files. What loads later (a turn's inspection,
// an evaluator's SDK, the full CLI) loads as in any run, with the compile cache.

import { enableCompileCache } from '../compile-cache.js';
import { runPlainStart } from '../start-args.js';
import { runStartCommand } from '../commands/start.js';
import { parseStartOptions } from '../commands/start-request.js';
import { runInForeground } from '../commands/start-foreground.js';
import { probeBwrap } from '../../sandbox/probe.js';

// Referenced, so that the bundler keeps them statically required: each chunk a start would otherwise
// load on its way to the first agent is in the snapshot.
export const preloaded = [runStartCommand, parseStartOptions, runInForeground, probeBwrap] as const;

/**
 * Runs `goald <args>` (args[0] is `start`) in a process started from the snapshot, as bin.ts does for a
 * start, with the compile cache for whatever loads from here on; resolves with the exit code, or null when
 * the line went to bin.js, which then sets it.
 */
export async function runFromSnapshot(args: readonly string[]): Promise<number | null> {
  enableCompileCache(import.meta.dirname);
  const code = await runPlainStart(args.slice(1));
  if (code !== null) return code;
  // A start line only commander reads (--help, a flag it reports): bin.js runs it as it runs any line
  // (process.argv is already a run of bin.js's). Required by path, not imported: the snapshot's graph
  // stays apart from the full CLI's, so that bin.js keeps what it alone needs (its version) in itself.
  process.getBuiltinModule('node:module').createRequire(import.meta.filename)(`${import.meta.dirname}/bin.js`);
  return null;
}
