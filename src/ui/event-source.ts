// Server-Sent Events for the dashboard, bridged from the goal host's event stream (the one `logs -f`
// follows). A goal's progress events are numbered from 1 in the order the stream gives them (past events
// first): each is sent with that number as its `id`, so a browser that reconnects sends `Last-Event-ID`
// and gets only what it missed. After each batch a `view` message carries the goal's view as it now is.
// Pure: formatting and replay selection; the server owns the connection.

import type { ProgressEvent } from '../supervisor/types.js';

/** One SSE message: `id` (optional), `event` name, and `data` as JSON on a single line. */
export function formatMessage(message: { id?: number; event: string; data: unknown }): string {
  // JSON.stringify never emits a raw newline, so the data is one `data:` line.
  const id = message.id === undefined ? '' : `id: ${message.id}\n`;
  return `${id}event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
}

/** A comment line: keeps an idle connection open through proxies and tells a dead one apart. */
export const HEARTBEAT = ': keep-alive\n\n';

/** How long a browser waits before reconnecting (the `retry` field, ms). */
export const RETRY_MS = 1_000;

/** The number of the last event a reconnecting browser saw (0: none, or a value that is not a count). */
export function parseLastEventId(header: string | string[] | undefined): number {
  if (typeof header !== 'string' || !/^\d{1,9}$/.test(header.trim())) return 0;
  return Number(header.trim());
}

/** The past events a client that last saw event `lastSeen` is missing, with their ids. */
export function eventsAfter(past: readonly ProgressEvent[], lastSeen: number): { id: number; event: ProgressEvent }[] {
  const missing: { id: number; event: ProgressEvent }[] = [];
  past.forEach((event, index) => {
    if (index + 1 > lastSeen) missing.push({ id: index + 1, event });
  });
  return missing;
}
