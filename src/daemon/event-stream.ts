// Writes a goal's progress events as NDJSON: every past event, then live ones until `goal.finished`.
// The sink is an interface so this file stays free of node:http; the server adapts its response to it.

import type { ProgressEvent } from '../supervisor/types.js';
import type { EventSubscription } from './types.js';

// A client that stops reading must not make the daemon buffer events forever; events are a few hundred
// bytes, so 4 MiB is thousands of unread events.
export const MAX_PENDING_STREAM_BYTES = 4 * 1024 * 1024;

export interface EventSink {
  write(chunk: string): void;
  /** Ends the stream cleanly (the client sees the end of the response). */
  end(): void;
  /** Drops the connection (the client sees an aborted response). */
  destroy(): void;
  /** Bytes written but not yet taken by the OS. */
  readonly pendingBytes: number;
}

export interface EventPipe {
  /** Stops listening without touching the sink (the client went away). */
  detach(): void;
  /** Stops listening and ends the sink (the server is closing). */
  end(): void;
  /** True once the pipe no longer listens. */
  readonly done: boolean;
}

/** Pipes `subscription` into `sink` as one JSON object per line; `follow: false` sends past events only. */
export function pipeEvents(subscription: EventSubscription, follow: boolean, sink: EventSink): EventPipe {
  let done = false;
  let unsubscribe: (() => void) | null = null;

  const stop = (how: 'detach' | 'end' | 'destroy'): void => {
    if (done) return;
    done = true;
    const release = unsubscribe;
    unsubscribe = null;
    release?.();
    if (how === 'end') sink.end();
    else if (how === 'destroy') sink.destroy();
  };

  /** Writes one event; stops the pipe after `goal.finished` or when the client is too far behind. */
  const send = (event: ProgressEvent): void => {
    if (done) return;
    sink.write(`${JSON.stringify(event)}\n`);
    if (sink.pendingBytes > MAX_PENDING_STREAM_BYTES) stop('destroy');
    else if (event.type === 'goal.finished') stop('end');
  };

  for (const event of subscription.past) send(event);
  if (!follow || subscription.finished) stop('end');
  if (done) return pipeHandle();

  const release = subscription.follow(send);
  // The host may deliver (even `goal.finished`) synchronously inside follow(), before `release` exists.
  if (done) release();
  else unsubscribe = release;
  return pipeHandle();

  function pipeHandle(): EventPipe {
    return {
      detach: () => stop('detach'),
      end: () => stop('end'),
      get done() {
        return done;
      },
    };
  }
}
