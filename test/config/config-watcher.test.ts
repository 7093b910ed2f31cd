import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchConfigFile, type ConfigWatcher } from '../../src/config/config-watcher.js';
import type { ConfigFile } from '../../src/config/schema.js';
import type { GoaldError } from '../../src/errors.js';

type WatchEvent = { kind: 'valid'; config: ConfigFile | null } | { kind: 'invalid'; error: GoaldError };

const EVENT_TIMEOUT_MS = 5_000;

/** Watches `file` and hands out its events one by one, each awaited with a bounded timeout. */
async function watchEvents(file: string): Promise<{ watcher: ConfigWatcher; next(): Promise<WatchEvent> }> {
  const queue: WatchEvent[] = [];
  let notify: (() => void) | null = null;
  const push = (event: WatchEvent): void => {
    queue.push(event);
    notify?.();
  };
  const watcher = watchConfigFile(file, {
    onValid: (config) => push({ kind: 'valid', config }),
    onInvalid: (error) => push({ kind: 'invalid', error }),
  });
  watchers.push(watcher);
  await watcher.ready;
  const next = async (): Promise<WatchEvent> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      while (queue.length === 0) {
        await new Promise<void>((resolve, reject) => {
          notify = resolve;
          timer = setTimeout(() => reject(new Error(`no config event within ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
        });
        clearTimeout(timer);
      }
    } finally {
      notify = null;
      clearTimeout(timer);
    }
    const [event] = queue.splice(0, 1);
    if (event === undefined) throw new Error('unreachable');
    return event;
  };
  return { watcher, next };
}

let dir: string;
let file: string;
let watchers: ConfigWatcher[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'goald-watch-'));
  file = join(dir, 'goal.config.json');
  watchers = [];
});
afterEach(async () => {
  await Promise.all(watchers.map((watcher) => watcher.close()));
  await rm(dir, { recursive: true, force: true });
});

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

describe('watchConfigFile', () => {
  it('delivers a valid edit with its new values', async () => {
    await writeFile(file, json({ goal: 'tests pass', limits: { maxTurns: 20 } }));
    const { next } = await watchEvents(file);

    await writeFile(file, json({ goal: 'lint is clean', limits: { maxTurns: 5, turnTimeout: '10m' } }));
    expect(await next()).toEqual({
      kind: 'valid',
      config: { goal: 'lint is clean', limits: { maxTurns: 5, turnTimeout: '10m' } },
    });
  });

  it('reports an invalid edit with the file and the dot path, and delivers nothing else', async () => {
    await writeFile(file, json({ goal: 'tests pass' }));
    const { next } = await watchEvents(file);

    await writeFile(file, json({ goal: 'tests pass', limits: { maxTurns: 0 } }));
    const event = await next();
    if (event.kind !== 'invalid') throw new Error(`expected an invalid event, got ${JSON.stringify(event)}`);
    expect(event.error.code).toBe('config');
    expect(event.error.message).toBe(`${file}: limits.maxTurns: expected a whole number of 1 or more`);

    await writeFile(file, '{ "goal": "x", }');
    const syntax = await next();
    expect(syntax.kind === 'invalid' && syntax.error.message).toMatch(`${file}: invalid JSON at line 1`);

    // The next event is the repair: no valid config slipped out in between.
    await writeFile(file, json({ goal: 'tests pass' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'tests pass' } });
  });

  it('sees an atomic save (write a temp file, rename it over the config)', async () => {
    await writeFile(file, json({ goal: 'first' }));
    const { next } = await watchEvents(file);

    const temp = join(dir, 'goal.config.json.tmp-4242');
    await writeFile(temp, json({ goal: 'second' }));
    await rename(temp, file);
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'second' } });

    // Twice: the watch must survive the file's inode being replaced.
    await writeFile(temp, json({ goal: 'third' }));
    await rename(temp, file);
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'third' } });
  });

  it('sees a vim-style save (move the original aside, write a new file)', async () => {
    await writeFile(file, json({ goal: 'first' }));
    const { next } = await watchEvents(file);

    await rename(file, `${file}~`);
    await writeFile(file, json({ goal: 'second' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'second' } });
  });

  it('treats a deleted file as no config, and sees it created again', async () => {
    const { next } = await watchEvents(file);

    await writeFile(file, json({ goal: 'created' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'created' } });

    await unlink(file);
    expect(await next()).toEqual({ kind: 'valid', config: null });

    await writeFile(file, json({ goal: 'back' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'back' } });
  });

  it('ignores other files in the directory', async () => {
    const { next } = await watchEvents(file);
    await writeFile(join(dir, 'package.json'), '{ not json');
    await writeFile(join(dir, 'other.config.json'), json({ goal: 'not me' }));
    await writeFile(file, json({ goal: 'me' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'me' } });
  });

  it('does not deliver a config equal to the last one it delivered', async () => {
    await writeFile(file, json({ goal: 'same' }));
    const { next } = await watchEvents(file);
    await writeFile(file, json({ goal: 'changed' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'changed' } });

    // Saved again unchanged: a witness (a second watcher, with nothing delivered yet) proves the write
    // was seen and loaded; the first watcher's next event is then the following real change.
    const witness = await watchEvents(file);
    await writeFile(file, json({ goal: 'changed' }));
    expect(await witness.next()).toEqual({ kind: 'valid', config: { goal: 'changed' } });
    await writeFile(file, json({ goal: 'changed again' }));
    expect(await next()).toEqual({ kind: 'valid', config: { goal: 'changed again' } });
  });

  it('delivers nothing after close()', async () => {
    await writeFile(file, json({ goal: 'before' }));
    let calls = 0;
    const closed = watchConfigFile(file, { onValid: () => (calls += 1), onInvalid: () => (calls += 1) });
    await closed.ready;
    const witness = await watchEvents(file);

    await closed.close();
    await writeFile(file, json({ goal: 'after' }));
    expect(await witness.next()).toEqual({ kind: 'valid', config: { goal: 'after' } });
    await writeFile(file, '{ broken');
    expect((await witness.next()).kind).toBe('invalid');
    expect(calls).toBe(0);
  });

  it('folds a burst of writes into one load of the newest content', async () => {
    await writeFile(file, json({ goal: 'start' }));
    const { next } = await watchEvents(file);
    for (let turn = 1; turn <= 5; turn += 1) await writeFile(file, json({ goal: 'burst', limits: { maxTurns: turn } }));
    // Partial states may or may not be seen depending on timing; the newest always is, and is the last.
    let event = await next();
    while (!(event.kind === 'valid' && event.config?.limits?.maxTurns === 5)) event = await next();
    expect(event).toEqual({ kind: 'valid', config: { goal: 'burst', limits: { maxTurns: 5 } } });
  });
});
