// The remembered bwrap probe: a key of what the answer depends on, several keys side by side, forgotten
// whole, and nothing remembered where the file cannot be read or written.

import { chmodSync, existsSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { forgetRemembered, isRememberedWorking, PROBE_CACHE_FILE, probeKey, rememberWorking } from '../../src/sandbox/probe-cache.js';

async function tempRoot(): Promise<string> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gpc-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  return root;
}

function fakeExecutable(root: string, name = 'bwrap'): string {
  const file = path.join(root, name);
  writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

describe('probeKey', () => {
  it('is the same for the same executable and setting, and differs when the executable or the setting does', async () => {
    const root = await tempRoot();
    const bwrap = fakeExecutable(root);
    const key = probeKey(bwrap, true);
    expect(key).not.toBeNull();
    expect(probeKey(bwrap, true)).toBe(key);
    expect(probeKey(bwrap, false)).not.toBe(key);
    expect(probeKey(fakeExecutable(root, 'other-bwrap'), true)).not.toBe(key);
    // Replaced in place (an upgrade), or only touched: its times differ, so its key does.
    utimesSync(bwrap, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    expect(probeKey(bwrap, true)).not.toBe(key);
    const touched = probeKey(bwrap, true);
    chmodSync(bwrap, 0o700);
    expect(probeKey(bwrap, true)).not.toBe(touched);
  });

  it('names the boot and this process\'s namespaces, so another boot or container is another key', async () => {
    const key = probeKey(fakeExecutable(await tempRoot()), true) ?? '';
    expect(key).toContain(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(key).toMatch(/mnt:\[\d+\]/);
    expect(key).toMatch(/user:\[\d+\]/);
  });

  it('is null for an executable that is not there', async () => {
    expect(probeKey(path.join(await tempRoot(), 'gone'), true)).toBeNull();
  });
});

describe('the remembered probe', () => {
  it('remembers several keys, answers only for those, and forgets them all at once', async () => {
    const home = await tempRoot();
    const file = path.join(home, PROBE_CACHE_FILE);
    expect(isRememberedWorking(file, 'a')).toBe(false);
    rememberWorking(file, 'a');
    rememberWorking(file, 'b');
    rememberWorking(file, 'a');
    expect(isRememberedWorking(file, 'a')).toBe(true);
    expect(isRememberedWorking(file, 'b')).toBe(true);
    expect(isRememberedWorking(file, 'c')).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('a\nb\n');
    forgetRemembered(file);
    expect(isRememberedWorking(file, 'a')).toBe(false);
    forgetRemembered(file); // nothing left to forget: no error
  });

  it('keeps the most recent few keys', async () => {
    const file = path.join(await tempRoot(), PROBE_CACHE_FILE);
    for (let index = 0; index < 12; index += 1) rememberWorking(file, `key-${index}`);
    expect(isRememberedWorking(file, 'key-11')).toBe(true);
    expect(isRememberedWorking(file, 'key-0')).toBe(false);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(8);
  });

  it('neither reads nor writes in a GOALD_HOME or cache directory that others can write, or through a link', async () => {
    const home = await tempRoot();
    const file = path.join(home, PROBE_CACHE_FILE);
    rememberWorking(file, 'a');
    expect(isRememberedWorking(file, 'a')).toBe(true);
    chmodSync(home, 0o770);
    expect(isRememberedWorking(file, 'a')).toBe(false); // perhaps planted by the group
    rememberWorking(file, 'b');
    chmodSync(home, 0o700);
    expect(isRememberedWorking(file, 'b')).toBe(false);
    chmodSync(path.dirname(file), 0o757);
    expect(isRememberedWorking(file, 'a')).toBe(false);
    chmodSync(path.dirname(file), 0o700);
    // A cache directory that is a link to another directory of this user's is not written through.
    const elsewhere = await tempRoot();
    const linked = await tempRoot();
    symlinkSync(elsewhere, path.join(linked, path.dirname(PROBE_CACHE_FILE)));
    rememberWorking(path.join(linked, PROBE_CACHE_FILE), 'c');
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('never makes GOALD_HOME: before it exists, nothing is remembered', async () => {
    const missingHome = path.join(await tempRoot(), 'not-yet');
    rememberWorking(path.join(missingHome, PROBE_CACHE_FILE), 'a');
    expect(isRememberedWorking(path.join(missingHome, PROBE_CACHE_FILE), 'a')).toBe(false);
    expect(existsSync(missingHome)).toBe(false);
  });
});
