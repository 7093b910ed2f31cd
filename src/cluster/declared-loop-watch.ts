// The goal.config.json files whose declared loops a cluster's control plane keeps on the cluster: read when
// `goald loop sync` or a goal start names the workspace, and again after each edit while the daemon runs
// (the config watcher), as the embedded daemon does. Unlike there, no edit is ever held: a cluster goal's
// turns run on its branch on the workers, never in this workspace, so no agent can write this file.

import path from 'node:path';

import { CONFIG_FILE_NAME, loadConfigFile } from '../config/load-config.js';
import type { ConfigWatcher } from '../config/config-watcher.js';
import type { ConfigFile } from '../config/schema.js';
import { KeyedSerialQueue } from '../daemon/serial-queue.js';

export interface DeclaredLoopWatchOptions {
  /** Puts the workspace's declared loops on the cluster (`config` null: the file is gone). */
  sync(workspace: string, config: ConfigFile | null): Promise<void>;
  log(line: string): void;
}

export class DeclaredLoopWatch {
  private readonly watchers = new Map<string, Promise<ConfigWatcher>>();
  // One workspace's reads and syncs run in arrival order: an older read never lands after a newer one.
  private readonly work = new KeyedSerialQueue<string>();
  private closed = false;

  constructor(private readonly options: DeclaredLoopWatchOptions) {}

  /** Reads the workspace's file now and syncs its loops; rejects (nothing changed) for an invalid file. */
  sync(workspace: string): Promise<void> {
    return this.work.run(workspace, async () => {
      const { config } = await loadConfigFile(path.join(workspace, CONFIG_FILE_NAME));
      await this.options.sync(workspace, config);
    });
  }

  /**
   * From now on, each edit of the workspace's file syncs its loops again; the first read happens now. Never
   * rejects (callers do not wait for it): what goes wrong is logged.
   */
  async watch(workspace: string): Promise<void> {
    if (this.closed || this.watchers.has(workspace)) return;
    const file = path.join(workspace, CONFIG_FILE_NAME);
    const report = (error: unknown): void => this.options.log(`${file}: declared loops not synced: ${error instanceof Error ? error.message : String(error)}`);
    const watcher = import('../config/config-watcher.js').then(({ watchConfigFile }) =>
      watchConfigFile(file, {
        onValid: (config) => void this.work.run(workspace, () => this.options.sync(workspace, config)).catch(report),
        onInvalid: (error) => this.options.log(`${file}: invalid edit ignored, its loops stay as they were: ${error.message}`),
      }),
    );
    this.watchers.set(workspace, watcher);
    try {
      // Read once the watcher is ready, so an edit made meanwhile is seen after this read, not lost.
      await (await watcher).ready;
      await this.sync(workspace);
    } catch (error) {
      report(error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.watchers.values()].map(async (watcher) => (await watcher).close()));
    this.watchers.clear();
  }
}
