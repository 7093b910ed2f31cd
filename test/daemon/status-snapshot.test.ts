// The daemon's status snapshot (src/daemon/status-snapshot.ts) against real stores in a temp home: what it
// publishes, and every way a file that is not certainly current is refused. The daemon that keeps it, and
// `goald status` reading it, are tried end to end in test/e2e/status-snapshot.test.ts.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filterGoals, goalFilterFor } from '../../src/daemon/resolve-goal.js';
import { readStatusSnapshot } from '../../src/daemon/status-snapshot.js';
import { StatusSnapshotWriter } from '../../src/daemon/status-snapshot-writer.js';
import { statusSnapshotPath, stateFilePath } from '../../state/paths.js';
import { openStore } from '../../state/store.js';
import type { Store } from '../../state/types.js';
import { makeGoal } from '../state/fixtures.js';
import { tempDirPerTest } from '../state/helpers.js';

let home: string;
const SOCKET = '/tmp/goald-test.sock';
tempDirPerTest((dir) => (home = join(dir, 'home')));

// A store whose versions are published as the daemon publishes them (goal-host.ts).
async function watchedStore(writer: StatusSnapshotWriter): Promise<Store> {
  const store = await openStore(home, { env: {} });
  store.watch(({ identity, state }) => writer.publish(identity, filterGoals(state.goals, goalFilterFor(undefined))));
  return store;
}

function snapshotFile(): Record<string, unknown> {
  return JSON.parse(readFileSync(statusSnapshotPath(home), 'utf8')) as Record<string, unknown>;
}

// The inodes of the files this process holds open.
function openInodes(): Set<bigint> {
  const inodes = new Set<bigint>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      inodes.add(statSync(`/proc/self/fd/${fd}`, { bigint: true }).ino);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

describe('StatusSnapshotWriter and readStatusSnapshot', () => {
  it('publishes the live goals of each version the store writes, which the reader takes while it is current', async () => {
    const writer = new StatusSnapshotWriter(home, SOCKET);
    const store = await watchedStore(writer);
    expect(existsSync(statusSnapshotPath(home))).toBe(false); // no state.json yet: nothing to publish
    await store.update((state) => {
      state.goals.push(makeGoal('g1'), makeGoal('g2', { status: 'paused' }), makeGoal('g3', { status: 'achieved' }));
    });
    expect(readStatusSnapshot(home, SOCKET)?.map((goal) => goal.id)).toEqual(['g1', 'g2']);
    expect(snapshotFile()).toMatchObject({ format: 1, daemon: { pid: process.pid, socket: SOCKET } });
    expect(statSync(statusSnapshotPath(home)).mode & 0o777).toBe(0o600);

    await store.updateGoal('g1', (goal) => {
      goal.status = 'failed';
    });
    expect(readStatusSnapshot(home, SOCKET)?.map((goal) => goal.id)).toEqual(['g2']);
    // Another socket is another daemon's question.
    expect(readStatusSnapshot(home, '/tmp/other.sock')).toBeNull();
  });

  it('is refused once another process replaced state.json, and published again when the store reads that version', async () => {
    const writer = new StatusSnapshotWriter(home, SOCKET);
    const store = await watchedStore(writer);
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    expect(readStatusSnapshot(home, SOCKET)).toHaveLength(1);

    // Another goald process (a foreground goal) writes: the snapshot no longer says what the daemon would.
    const other = await openStore(home, { env: {} });
    await other.update((state) => void state.goals.push(makeGoal('g2')));
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();
    // The same bytes in a new file are a new version too: nothing is taken on content alone.
    await store.readGoals(() => false);
    expect(readStatusSnapshot(home, SOCKET)).toHaveLength(2);
    copyFileSync(stateFilePath(home), `${stateFilePath(home)}.copy`);
    renameSync(`${stateFilePath(home)}.copy`, stateFilePath(home));
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();
    await store.readGoals(() => false);
    expect(readStatusSnapshot(home, SOCKET)?.map((goal) => goal.id)).toEqual(['g1', 'g2']);
  });

  it('holds the version it published open (its inode cannot be reused), one version at a time', async () => {
    const writer = new StatusSnapshotWriter(home, SOCKET);
    const store = await watchedStore(writer);
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    const first = statSync(stateFilePath(home), { bigint: true }).ino;
    expect(openInodes().has(first)).toBe(true);
    await store.update((state) => void state.goals.push(makeGoal('g2')));
    const second = statSync(stateFilePath(home), { bigint: true }).ino;
    expect(second).not.toBe(first);
    expect(openInodes().has(second)).toBe(true);
    expect(openInodes().has(first)).toBe(false);
    writer.close();
    expect(openInodes().has(second)).toBe(false);
  });

  it('is refused when the daemon it names is gone, or is another process with its pid', async () => {
    const writer = new StatusSnapshotWriter(home, SOCKET);
    const store = await watchedStore(writer);
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    const snapshot = snapshotFile() as { daemon: { pid: number; startTime: string } };

    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(statusSnapshotPath(home), JSON.stringify({ ...snapshot, daemon: { ...snapshot.daemon, pid: Number(exited.stdout) } }), { mode: 0o600 });
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();

    // This very pid, started at another time: a reused pid.
    writeFileSync(statusSnapshotPath(home), JSON.stringify({ ...snapshot, daemon: { ...snapshot.daemon, startTime: '1' } }), { mode: 0o600 });
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();

    writeFileSync(statusSnapshotPath(home), JSON.stringify(snapshot), { mode: 0o600 });
    expect(readStatusSnapshot(home, SOCKET)).toHaveLength(1);
  });

  it('is refused when others may write it, or it is not one: a FIFO, a link, torn, another format, goals that are not goals', async () => {
    const writer = new StatusSnapshotWriter(home, SOCKET);
    const store = await watchedStore(writer);
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    const text = readFileSync(statusSnapshotPath(home), 'utf8');
    const snapshot = JSON.parse(text) as Record<string, unknown>;

    chmodSync(statusSnapshotPath(home), 0o620);
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();
    chmodSync(statusSnapshotPath(home), 0o600);
    expect(readStatusSnapshot(home, SOCKET)).toHaveLength(1);

    // A FIFO in its place (a hostile process of the user's): refused at once, not waited on; a link neither.
    rmSync(statusSnapshotPath(home));
    expect(spawnSync('mkfifo', [statusSnapshotPath(home)]).status).toBe(0);
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();
    rmSync(statusSnapshotPath(home));
    writeFileSync(`${statusSnapshotPath(home)}.real`, text, { mode: 0o600 });
    symlinkSync(`${statusSnapshotPath(home)}.real`, statusSnapshotPath(home));
    expect(readStatusSnapshot(home, SOCKET)).toBeNull();
    rmSync(statusSnapshotPath(home));

    for (const bad of [text.slice(0, text.length >> 1), JSON.stringify({ ...snapshot, format: 2 }), JSON.stringify({ ...snapshot, goals: [{ id: 'g1' }] }), '[]']) {
      writeFileSync(statusSnapshotPath(home), bad);
      expect(readStatusSnapshot(home, SOCKET), bad.slice(0, 40)).toBeNull();
    }
  });

  it('withdraw and close remove the file; nothing is published after close', async () => {
    const writer = new StatusSnapshotWriter(home, SOCKET);
    const store = await watchedStore(writer);
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    writer.withdraw();
    expect(existsSync(statusSnapshotPath(home))).toBe(false);
    await store.update((state) => void state.goals.push(makeGoal('g2')));
    expect(readStatusSnapshot(home, SOCKET)).toHaveLength(2);
    writer.close();
    expect(existsSync(statusSnapshotPath(home))).toBe(false);
    await store.update((state) => void state.goals.push(makeGoal('g3')));
    expect(existsSync(statusSnapshotPath(home))).toBe(false);
  });

  it("removes a dead daemon's unfinished draft when it starts, and leaves a live process's alone", async () => {
    await openStore(home, { env: {} });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadDraft = join(home, `.status.json.${dead.stdout}.0a1b2c3d.tmp`);
    const liveDraft = join(home, `.status.json.${process.pid}.0a1b2c3d.tmp`);
    writeFileSync(deadDraft, '{"format":1');
    writeFileSync(liveDraft, '{"format":1');
    const writer = new StatusSnapshotWriter(home, SOCKET);
    expect(existsSync(deadDraft)).toBe(false);
    expect(existsSync(liveDraft)).toBe(true);
    const store = await watchedStore(writer);
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    expect(readStatusSnapshot(home, SOCKET)?.map((goal) => goal.id)).toEqual(['g1']);
    // Its own drafts are renamed into place: none is left beside the file.
    expect(readdirSync(home).filter((name) => name.startsWith('.status.json.') && name !== `.status.json.${process.pid}.0a1b2c3d.tmp`)).toEqual([]);
  });

  it('publishes the version on disk when the store is first watched', async () => {
    const plain = await openStore(home, { env: {} });
    await plain.update((state) => void state.goals.push(makeGoal('g1'), makeGoal('g2', { status: 'failed' })));
    expect(existsSync(statusSnapshotPath(home))).toBe(false);
    await watchedStore(new StatusSnapshotWriter(home, SOCKET));
    expect(readStatusSnapshot(home, SOCKET)?.map((goal) => goal.id)).toEqual(['g1']);
  });
});
