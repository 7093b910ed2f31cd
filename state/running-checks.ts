// The process groups of a goal's running checks, in `goals/<id>/running-checks.json` beside its turn log.
// Only a crash of the process that runs the checks needs them (the next daemon kills what they left), so
// they are written without the store's lock, schema pass, backup or fsync: one small write per check
// instead of a whole state.json rewrite on the turn's path. A record that outlives its check is harmless:
// recovery kills a group only while its leader is still the recorded process or the group still has
// members, and Linux never reuses a live group's id.
// The file is rewritten in place, by one write(2) at its start padded with spaces to its length (JSON
// allows trailing white space): a crash of this process lands before or after that write, never inside
// it, as long as the text fits in one page. A longer list (dozens of checks) is a temp file renamed over
// the last. In place, a turn's check costs no file creation and no rename, each a journaled change that
// waits out any fsync under way.

import { closeSync, constants, fstatSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from '../src/zod-mini.js';
import { isErrnoCode } from '../src/errno.js';
import { replaceFileSync } from './durable-file.js';
import type { RunningCheck } from './types.js';

const RUNNING_CHECKS_FILE_NAME = 'running-checks.json';

const runningChecksSchema = z.array(z.object({ pid: z.int().check(z.positive()), startTime: z.nullable(z.string()), token: z.string() }));

// The most written in place: a page, which one write(2) into the page cache copies whole.
const IN_PLACE_MAX_BYTES = 4_096;

/** Replaces the goal's record of its running check groups (its directory exists: the goal is registered). */
export function recordRunningChecks(goalDir: string, groups: readonly RunningCheck[]): void {
  const file = join(goalDir, RUNNING_CHECKS_FILE_NAME);
  const text = `${JSON.stringify(groups)}\n`;
  if (Buffer.byteLength(text) > IN_PLACE_MAX_BYTES) {
    replaceFileSync(file, text);
    return;
  }
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    const { size } = fstatSync(fd);
    if (size <= IN_PLACE_MAX_BYTES) {
      const padded = Buffer.from(text.padEnd(size, ' '));
      const written = writeSync(fd, padded, 0, padded.length, 0);
      if (written !== padded.length) throw new Error(`wrote ${written} of ${padded.length} bytes to ${file}`);
      return;
    }
  } finally {
    closeSync(fd);
  }
  // Left longer by an earlier, longer list: padding it would take more than the one page.
  replaceFileSync(file, text);
}

/** The check groups a goal's last process recorded; none when it recorded none or the file is unreadable. */
export async function readRunningChecks(goalDir: string): Promise<RunningCheck[]> {
  let text: string;
  try {
    text = await readFile(join(goalDir, RUNNING_CHECKS_FILE_NAME), 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return [];
    throw error;
  }
  try {
    const parsed = runningChecksSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : [];
  } catch {
    return []; // cut short by a power loss: the checks died with the machine
  }
}

/** Forgets the goal's running checks (after recovery has dealt with them). */
export function clearRunningChecks(goalDir: string): void {
  try {
    unlinkSync(join(goalDir, RUNNING_CHECKS_FILE_NAME));
  } catch (error) {
    if (!isErrnoCode(error, 'ENOENT')) throw error;
  }
}
