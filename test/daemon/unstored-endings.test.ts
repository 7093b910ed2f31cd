// The endings a daemon could not store (disk full), against a real store on a real full disk (a tmpfs).

import { openSync, writeSync, closeSync } from 'node:fs';
import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../state/index.js';
import { finishedEventOf, UnstoredEndings } from '../../src/daemon/unstored-endings.js';
import { isErrnoCode } from '../../src/errno.js';
import { makeGoal } from '../state/fixtures.js';
import { mountTinyDisk, tmpfsUnavailable } from '../helpers/tiny-disk.js';

const skipReason = tmpfsUnavailable();
if (skipReason !== null) console.warn(`full-disk store tests skipped: cannot mount a tmpfs here (${skipReason})`);

// Writes zeros into `file` until the filesystem refuses with ENOSPC.
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if (!isErrnoCode(error, 'ENOSPC')) throw error;
  } finally {
    closeSync(fd);
  }
}

describe('finishedEventOf', () => {
  it('tells a breaker as the breaker, other reasons without one, an achieved goal without a reason', () => {
    const summary = { ...makeGoal('g').summary, turns: 3, tokens: 120 };
    expect(finishedEventOf(makeGoal('g1', { status: 'failed', reason: 'max-turns', summary }))).toEqual({
      type: 'goal.finished', id: 'g1', status: 'failed', reason: 'max-turns', breaker: 'max-turns', turns: 3, tokens: 120,
    });
    expect(finishedEventOf(makeGoal('g2', { status: 'failed', reason: 'storage' }))).toMatchObject({ reason: 'storage', breaker: null });
    expect(finishedEventOf(makeGoal('g3', { status: 'achieved', reason: null }))).toMatchObject({ status: 'achieved', reason: null, breaker: null });
  });
});

describe.skipIf(skipReason !== null)('UnstoredEndings on a full disk', () => {
  it('shows the ending while the store refuses it, and stores it once space is freed', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'gd-endings-'));
    onTestFinished(() => rmdir(root).catch(() => undefined));
    const home = path.join(root, 'h');
    mountTinyDisk(home, 1024 * 1024);
    const store = await openStore(home);
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const filler = path.join(home, 'filler');
    fillDisk(filler);
    await expect(store.update((state) => void state.goals.push(makeGoal('g2')))).rejects.toMatchObject({ code: 'ENOSPC' });

    const endings = new UnstoredEndings();
    endings.add('g1', { status: 'failed', reason: 'storage', message: 'disk full' }, new Date('2026-02-01T00:00:00Z'));
    await endings.flush(store); // refused again: kept, and no throw
    const stored = (await store.read()).goals[0]!;
    expect(stored.status).toBe('active'); // the state file still holds its last good state
    expect(endings.apply(stored)).toMatchObject({ status: 'failed', phase: 'failed', reason: 'storage', reasonMessage: 'disk full', finishedAt: '2026-02-01T00:00:00.000Z' });

    await rm(filler);
    await endings.flush(store);
    const after = (await store.read()).goals[0]!;
    expect(after).toMatchObject({ status: 'failed', reason: 'storage', finishedAt: '2026-02-01T00:00:00.000Z' });
    expect(endings.apply(after)).toEqual(after);
  });
});
