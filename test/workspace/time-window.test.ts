// The start of an agent's window (workspace/time-window.ts): a file written just before it, in the same
// tick of the file clock, must fall outside it, or the guard takes a check's report for the agent's change.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withinWindows, writeStampedLater } from '../../src/workspace/time-window.js';

describe('writeStampedLater', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stamps the file after a file written the moment before, every time', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'stamp-'));
    const prompt = path.join(dir, 'turn-1.prompt.txt');
    for (let round = 0; round < 25; round += 1) {
      // A check's report: written, never looked at, so stamped from the coarse clock.
      const report = path.join(dir, `report-${round}.txt`);
      writeFileSync(report, 'ran\n');
      const from = await writeStampedLater(prompt, `prompt ${round}\n`);
      const reportTime = statSync(report).ctimeMs;
      expect({ round, inWindow: withinWindows(reportTime, [{ from, to: Date.now() + 1000 }]) }).toEqual({ round, inWindow: false });
      expect(statSync(prompt).ctimeMs).toBe(from);
    }
  });

  it('writes in place: the file keeps its inode (a sandbox mounts it) and holds the content', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'stamp-'));
    const prompt = path.join(dir, 'turn-2.prompt.txt');
    writeFileSync(prompt, '', { mode: 0o600 });
    const inode = statSync(prompt).ino;
    await writeStampedLater(prompt, 'the goal\n');
    expect(statSync(prompt).ino).toBe(inode);
    expect(readFileSync(prompt, 'utf8')).toBe('the goal\n');
  });
});
