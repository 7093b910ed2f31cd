// Appends each goal's progress events to goals/<id>/events.jsonl (read back by event-log.ts). Apart from the
// reader: a goal's run only writes its log, and the reader's event schemas are not worth loading for that.

import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { redactJson } from '../secrets/redact.js';
import type { SupervisorObserver } from './types.js';

/** The file a goal's events are appended to. */
export function eventLogPath(goalDir: string): string {
  return path.join(goalDir, 'events.jsonl');
}

/** An observer that appends every event (secrets redacted) as one JSON line (synchronously, so order is kept). */
export function createEventLogObserver(goalDir: string): SupervisorObserver {
  const file = eventLogPath(goalDir);
  return {
    onEvent(event) {
      appendFileSync(file, `${JSON.stringify(redactJson(event))}\n`, { mode: 0o600 });
    },
  };
}
