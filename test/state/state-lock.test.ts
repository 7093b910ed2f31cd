import { mkdir, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GoaldError } from '../../src/errors.js';
import { withStateLock } from '../../state/state-lock.js';
import { buildStateForChildren, spawnNode, tempDirPerTest } from './helpers.js';

let dir: string;
tempDirPerTest((made) => (dir = made));

const lockDir = (): string => join(dir, 'state.json.lock');
const exists = (path: string): Promise<boolean> => stat(path).then(
  () => true,
  () => false,
);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Holds the lock of `dir` until the returned function is called; resolves once it is held.
async function holdLock(options: { staleMs?: number } = {}): Promise<{ release: () => void; isCompromised: () => boolean; done: Promise<void> }> {
  let release!: () => void;
  let isCompromised!: () => boolean;
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const done = withStateLock(
    dir,
    (compromised) =>
      new Promise<void>((resolve) => {
        isCompromised = compromised;
        release = resolve;
        held();
      }),
    options,
  );
  await holding;
  return { release, isCompromised, done };
}

describe('withStateLock', () => {
  it('is a directory beside state.json while held, and gone once the task ends (also when it throws)', async () => {
    await withStateLock(dir, async () => {
      expect((await stat(lockDir())).isDirectory()).toBe(true);
    });
    expect(await exists(lockDir())).toBe(false);
    await expect(withStateLock(dir, () => Promise.reject(new Error('the task failed')))).rejects.toThrow('the task failed');
    expect(await exists(lockDir())).toBe(false);
  });

  it('makes the second of two writers wait for the first, then run', async () => {
    const order: string[] = [];
    const first = await holdLock();
    const second = withStateLock(dir, () => {
      order.push('second');
      return Promise.resolve();
    });
    // Time for the second to try, and keep finding the lock held (a broken lock would let it run now).
    await sleep(50);
    order.push('first ends');
    first.release();
    await Promise.all([first.done, second]);
    expect(order).toEqual(['first ends', 'second']);
  });

  it('keeps a live holder\'s lock fresh past the stale age, so nobody takes it over', async () => {
    const holder = await holdLock({ staleMs: 600 });
    const made = (await stat(lockDir())).mtimeMs;
    // Two refreshes (every 300 ms): the lock is by then older than the stale age, were it not refreshed.
    let refreshed = made;
    await vi.waitFor(async () => {
      const now = (await stat(lockDir())).mtimeMs;
      expect(now).toBeGreaterThan(refreshed);
      refreshed = now;
    }, { timeout: 5_000, interval: 20 });
    await vi.waitFor(async () => expect((await stat(lockDir())).mtimeMs).toBeGreaterThan(refreshed), { timeout: 5_000, interval: 20 });
    expect(Date.now() - made).toBeGreaterThan(600);
    const error = await withStateLock(dir, () => Promise.resolve(), { staleMs: 600, retries: 0 }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(GoaldError);
    expect((error as GoaldError).code).toBe('state-locked');
    expect(holder.isCompromised()).toBe(false);
    holder.release();
    await holder.done;
  });

  it('finds the lock compromised when another process took it over, and leaves that one in place', async () => {
    const holder = await holdLock({ staleMs: 300 });
    // What a takeover looks like from here: the directory's mtime is no longer the one this process set.
    const later = new Date(Date.now() + 5_000);
    await utimes(lockDir(), later, later);
    await vi.waitFor(() => expect(holder.isCompromised()).toBe(true), { timeout: 5_000, interval: 20 });
    holder.release();
    await holder.done;
    expect(await exists(lockDir())).toBe(true);
  });

  it('finds the lock compromised when its directory was removed', async () => {
    const holder = await holdLock({ staleMs: 300 });
    await rmdir(lockDir());
    await vi.waitFor(() => expect(holder.isCompromised()).toBe(true), { timeout: 5_000, interval: 20 });
    holder.release();
    await holder.done;
  });

  it('takes over a stale lock, and refuses a directory it cannot use with the error itself', async () => {
    await mkdir(lockDir());
    const aMinuteAgo = new Date(Date.now() - 60_000);
    await utimes(lockDir(), aMinuteAgo, aMinuteAgo);
    let ran = false;
    await withStateLock(dir, () => {
      ran = true;
      return Promise.resolve();
    }, { retries: 0 });
    expect(ran).toBe(true);
    // A home that is a file: not contention, so no retrying and no state-locked.
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    await expect(withStateLock(file, () => Promise.resolve(), { retries: 0 })).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});

describe('withStateLock across processes', () => {
  let build: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    build = await buildStateForChildren();
    // Takes the lock, says so, and exits from inside the task (process.exit: no finally block runs).
    await writeFile(
      join(build.dir, 'exit-holding.mjs'),
      `import { withStateLock } from './state/state-lock.js';
await withStateLock(process.argv[2], async () => { console.log('held'); process.exit(3); });
`,
    );
  });
  afterAll(async () => {
    await build.cleanup();
  });

  it('removes the lock of a process that exits while holding it', async () => {
    const child = spawnNode(join(build.dir, 'exit-holding.mjs'), [dir], build.dir);
    await child.waitForLine(/^held$/);
    expect(await child.exited).toBe(3);
    expect(await exists(lockDir())).toBe(false);
  });
});
