// `goald watch [goal] [--once]`: the live terminal view of every goal (issue 11). A client of the daemon
// (auto-started), so a dead terminal never disturbs a goal. `--once` prints one frame from the same layout
// and exits without loading ink; the interactive view loads its own bundle (ink, React) only here.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureDaemon } from '../../daemon/auto-start.js';
import { EXIT, GoaldError } from '../../errors.js';
import { lookupGoal } from '../goal-lookup.js';
import type { CliIO } from '../io.js';
import { frameText, renderFrame } from '../watch/watch-frame.js';
import { daemonWatchSource, type WatchSource } from '../watch/watch-source.js';

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

/** Runs `goald watch`; resolves with the exit code. */
export async function runWatch(ref: string | undefined, options: { once?: boolean }, io: CliIO): Promise<number> {
  const client = await ensureDaemon(io.env);
  const goals = await client.listGoals();
  // A named goal must exist (exit 2 otherwise); without one, the workspace's live goal is selected if any.
  const selected = ref !== undefined ? (await lookupGoal(goals, ref, io.cwd)).id : null;
  const source = daemonWatchSource(client);
  if (options.once) {
    const snapshot = await source.load(selected);
    const lines = renderFrame({
      goals: snapshot.goals,
      selectedId: selected ?? snapshot.goals[0]?.id ?? null,
      width: process.stdout.columns ?? 100,
      height: process.stdout.rows ?? 30,
      logLines: null,
      prompt: null,
      message: null,
    });
    io.out(frameText(lines));
    return EXIT.ok;
  }
  const ui = await loadWatchUi();
  await ui.runWatchApp({ source, initialSelectedId: selected, refreshMs: REFRESH_MS });
  return EXIT.ok;
}
