// Each goal's progress events, appended to goals/<id>/events.jsonl, so `goald logs` can replay them with
// or without a daemon and `logs -f` can join a stream already in progress. Events read back are checked
// against their schema; a line that is not one (a torn last line after a crash) is skipped.

import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isErrnoCode } from '../errno.js';
import { redactJson } from '../secrets/redact.js';
import { progressEventSchema } from './progress-event-schema.js';
import type { ProgressEvent, SupervisorObserver } from './types.js';

const EVENT_LOG_FILE_NAME = 'events.jsonl';

/** An observer that appends every event (secrets redacted) as one JSON line (synchronously, so order is kept). */
export function createEventLogObserver(goalDir: string): SupervisorObserver {
  const file = path.join(goalDir, EVENT_LOG_FILE_NAME);
  return {
    onEvent(event) {
      appendFileSync(file, `${JSON.stringify(redactJson(event))}\n`, { mode: 0o600 });
    },
  };
}

/** The events recorded so far; a line that is not an event (a torn last line after a crash) is skipped. */
export async function readEventLog(goalDir: string): Promise<ProgressEvent[]> {
  let text: string;
  try {
    text = await readFile(path.join(goalDir, EVENT_LOG_FILE_NAME), 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return [];
    throw error;
  }
  const events: ProgressEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = progressEventSchema.safeParse(value);
    if (parsed.success) events.push(parsed.data);
  }
  return events;
}
