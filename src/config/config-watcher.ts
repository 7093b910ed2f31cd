// Live configuration: watches one config file (a workspace's goal.config.json) and re-loads it after each
// change, so the daemon can apply a valid edit to the next turn and re-arm loops, and report an invalid
// edit while it keeps the last good config.
//
// - The file's directory is watched (depth 0, every other entry ignored) rather than the file itself, so
//   a file that does not exist yet, is deleted and comes back, or is replaced by an editor's atomic save
//   (write a temp file, rename it over) is seen the same way as an in-place write.
// - Events are debounced (default 100 ms) and each burst ends in one full re-load through loadConfigFile;
//   a load that overlaps new events is followed by another, and only the newest result is delivered.
//   chokidar's `awaitWriteFinish` is not used: its size polling waits 2 s by default, and a small JSON file
//   that is caught half-written simply fails to parse and is reported once the next event re-loads it.
// - Deleting the file means "no config file" (the defaults and other layers apply): onValid(null).
// - onValid is not called again for a config equal to the one it last received, unless an invalid
//   edit came in between (then the repaired file is delivered, so the daemon can say it is fixed).
// - Nothing is delivered for the file as it is when watching starts; the caller loads it itself, then
//   awaits `ready` before relying on events. After `close()` resolves, no callback runs.
// Callbacks must not throw.

import { basename, dirname, resolve } from 'node:path';
import { watch } from 'chokidar';
import { errnoCodeOf } from '../errno.js';
import { GoaldError, isGoaldError } from '../errors.js';
import { loadConfigFile } from './load-config.js';
import type { ConfigFile } from './schema.js';

export interface ConfigWatchOptions {
  /** A valid file after a change; null when the file was deleted. */
  onValid(config: ConfigFile | null): void;
  /** An invalid edit (or a watch failure): the message names the file and the dot path. */
  onInvalid(error: GoaldError): void;
  /** Quiet time after the last event before re-loading. Default 100 ms. */
  debounceMs?: number;
}

export interface ConfigWatcher {
  /** Resolves when the initial scan is done and changes from then on are seen. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

// Long enough to fold an editor's write, rename and chmod into one re-load, short enough to feel live.
const DEFAULT_DEBOUNCE_MS = 100;

/** Watches a config file and reports each change as a valid config (or null) or an invalid one. */
export function watchConfigFile(path: string, options: ConfigWatchOptions): ConfigWatcher {
  const file = resolve(path);
  const directory = dirname(file);
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let loading: Promise<void> | null = null;
  let stale = false;
  /** The last config delivered to onValid, as JSON; undefined after an invalid edit or before any. */
  let delivered: string | undefined;

  const watcher = watch(directory, {
    depth: 0,
    ignoreInitial: true,
    // Only the directory itself and the one file; other entries get no watcher at all.
    ignored: (entry: string) => entry !== directory && entry !== file,
    atomic: true,
  });

  const ready = new Promise<void>((resolveReady) => {
    watcher.once('ready', () => resolveReady());
  });

  const onEvent = (eventPath: string): void => {
    if (closed || resolve(eventPath) !== file) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      reload();
    }, debounceMs);
  };
  watcher.on('add', onEvent);
  watcher.on('change', onEvent);
  watcher.on('unlink', onEvent);
  watcher.on('error', (error: unknown) => {
    if (closed) return;
    const code = errnoCodeOf(error) ?? String(error);
    options.onInvalid(
      new GoaldError('config', `${file}: cannot be watched (${code})`, `check ${basename(directory)} and its permissions`, {
        cause: error,
      }),
    );
  });

  function reload(): void {
    if (loading !== null) {
      stale = true;
      return;
    }
    loading = loadNewest().finally(() => {
      loading = null;
    });
  }

  async function loadNewest(): Promise<void> {
    let result: { config: ConfigFile | null } | { error: GoaldError };
    do {
      stale = false;
      result = await loadOnce();
    } while (stale && !closed);
    if (closed) return;
    if ('error' in result) {
      delivered = undefined;
      options.onInvalid(result.error);
      return;
    }
    const json = JSON.stringify(result.config);
    if (json === delivered) return;
    delivered = json;
    options.onValid(result.config);
  }

  async function loadOnce(): Promise<{ config: ConfigFile | null } | { error: GoaldError }> {
    try {
      return { config: (await loadConfigFile(file)).config };
    } catch (error) {
      return {
        error: isGoaldError(error)
          ? error
          : new GoaldError('config', `${file}: cannot be read (${String(error)})`, 'check the file, or remove it', {
              cause: error,
            }),
      };
    }
  }

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(timer);
      await watcher.close();
      await loading;
    },
  };
}
