// `goald watch [goal] [--once]`: the live terminal view of every goal (issue 11). A client of the daemon
// (auto-started), so a dead terminal never disturbs a goal. `--once` prints one frame from the same layout
// and exits without loading ink; the interactive view loads its own bundle (ink, React) only here.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EXIT, GoaldError } from '../../errors.js';
import type { CliIO } from '../io.js';
import { daemonWatchSource, type WatchSource } from '../watch/watch-source.js';
import { connectWithGoals, runWatchOnce, selectedRowId } from './watch-once.js';

const REFRESH_MS = 500;

interface WatchUi {
  runWatchApp(options: { source: WatchSource; initialSelectedId: string | null; refreshMs: number }): Promise<void>;
}

function isWatchUi(value: unknown): value is WatchUi {
  return typeof value === 'object' && value !== null && 'runWatchApp' in value && typeof value.runWatchApp === 'function';
}

// The bundle's watch-ui.mjs sits beside this chunk (scripts/bundle.mjs); tsc's build has the module itself.
async function loadWatchUi(): Promise<WatchUi> {
  const bundled = path.join(import.meta.dirname, 'watch-ui.mjs');
  const file = existsSync(bundled) ? bundled : path.join(import.meta.dirname, '..', 'watch', 'watch-ui.js');
  const loaded: unknown = await import(pathToFileURL(file).href);
  if (!isWatchUi(loaded)) throw new GoaldError('internal', `${file} is not goald's watch view`, 'reinstall goald');
  return loaded;
}

/** Runs `goald watch`; resolves with the exit code once the user quits. */
export async function runWatch(ref: string | undefined, options: { once?: boolean }, io: CliIO): Promise<number> {
  if (options.once) return runWatchOnce(ref, io);
  // ink reads keys in raw mode and draws in place: without a terminal on both ends there is no view.
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
    throw new GoaldError('usage', `goald watch needs a terminal, and its ${process.stdin.isTTY === true ? 'output' : 'input'} is not one`, 'for scripts: goald watch --once prints one frame');
  }
  const { client, goals } = await connectWithGoals(io.env);
  const selected = await selectedRowId(client, goals, ref);
  const ui = await loadWatchUi();
  await ui.runWatchApp({ source: daemonWatchSource(client), initialSelectedId: selected, refreshMs: REFRESH_MS });
  return EXIT.ok;
}
