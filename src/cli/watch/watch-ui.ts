// The entry of the watch view's own bundle (dist/bundle/watch-ui.mjs, scripts/bundle.mjs): ink 6 and React,
// which only `goald watch` loads. An ES module bundle apart from the CommonJS one because ink's layout
// engine (yoga-layout) starts with a top-level await.

import { render } from 'ink';
import { createElement } from 'react';
import { WatchApp } from './watch-app.js';
import type { WatchSource } from './watch-source.js';

export interface WatchUiOptions {
  source: WatchSource;
  initialSelectedId: string | null;
  refreshMs: number;
}

/**
 * Draws the live watch view until the user quits; the last frame stays on the screen. On quit ink has
 * unmounted, taken the terminal out of raw mode and unreferenced stdin before this resolves; the source's
 * reads are single requests that end on their own, so nothing is left to keep the process alive.
 */
export async function runWatchApp(options: WatchUiOptions): Promise<void> {
  const app = render(createElement(WatchApp, options), { exitOnCtrlC: false });
  await app.waitUntilExit();
}
