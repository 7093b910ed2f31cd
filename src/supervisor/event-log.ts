// Each goal's progress events, appended to goals/<id>/events.jsonl, so `goald logs` can replay them with
// or without a daemon and `logs -f` can join a stream already in progress.

import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProgressEvent, SupervisorObserver } from './types.js';

const EVENT_LOG_FILE_NAME = 'events.jsonl';

/** An observer that appends every event as one JSON line (synchronously, so order is kept). */
export function createEventLogObserver(goalDir: string): SupervisorObserver {
  const file = path.join(goalDir, EVENT_LOG_FILE_NAME);
  return {
    onEvent(event) {
      appendFileSync(file, `${JSON.stringify(event)}\n`, { mode: 0o600 });
    },
  };
}

/** The events recorded so far; a torn last line (a crash mid-append) is skipped. */
export async function readEventLog(goalDir: string): Promise<ProgressEvent[]> {
  let text: string;
  try {
    text = await readFile(path.join(goalDir, EVENT_LOG_FILE_NAME), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const events: ProgressEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      events.push(JSON.parse(line) as ProgressEvent);
    } catch {
      // torn line
    }
  }
  return events;
}
