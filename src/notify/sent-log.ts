// Which notifications a goal has had: `goals/<id>/notifications.jsonl`, one line when a notification is
// claimed (before it is sent: at most once, also across a daemon restart that tells an ending again) and
// one with how each channel did.

import { appendFileSync, closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from '../zod-mini.js';
import { isErrnoCode } from '../errno.js';
import type { ChannelResult } from './channels.js';

const SENT_LOG_NAME = 'notifications.jsonl';
const lineSchema = z.object({ key: z.string() });

/** The keys already claimed in a goal's directory (a line that does not parse is skipped). */
function claimedKeys(goalDir: string): Set<string> {
  let text: string;
  try {
    text = readFileSync(join(goalDir, SENT_LOG_NAME), 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return new Set();
    throw error;
  }
  const keys = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = lineSchema.safeParse(JSON.parse(line));
      if (parsed.success) keys.add(parsed.data.key);
    } catch {
      // a torn last line (a crash mid-append): that claim never completed
    }
  }
  return keys;
}

/** Claims `key` for this goal: true (and recorded durably) when nobody claimed it before. */
export function claimNotification(goalDir: string, key: string, kind: string): boolean {
  if (claimedKeys(goalDir).has(key)) return false;
  const fd = openSync(join(goalDir, SENT_LOG_NAME), 'a', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ key, kind, claimedAt: new Date().toISOString() })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Records how each channel did for a claimed notification. */
export function recordResults(goalDir: string, key: string, results: readonly ChannelResult[]): void {
  appendFileSync(join(goalDir, SENT_LOG_NAME), `${JSON.stringify({ key, results, at: new Date().toISOString() })}\n`, { mode: 0o600 });
}
