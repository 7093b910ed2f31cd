// SSE framing and replay (src/ui/event-source.ts): ids count a goal's events from 1, and a reconnect with
// Last-Event-ID gets exactly the events after it. Over real HTTP: test/e2e/dashboard.test.ts.

import { describe, expect, it } from 'vitest';

import type { ProgressEvent } from '../../src/supervisor/types.js';
import { eventsAfter, formatMessage, parseLastEventId } from '../../src/ui/event-source.js';

const EVENTS: ProgressEvent[] = [
  { type: 'goal.started', id: 'g', condition: 'c', workspace: '/w', maxTurns: 3 },
  { type: 'turn.started', id: 'g', turn: 1, maxTurns: 3 },
  { type: 'goal.paused', id: 'g', reason: 'requested' },
];

describe('SSE messages', () => {
  it('an id, an event name and the data as one JSON line, even when the text holds newlines', () => {
    const text = formatMessage({ id: 7, event: 'progress', data: { reason: 'line one\n\ndata: forged\nid: 99' } });
    expect(text).toBe('id: 7\nevent: progress\ndata: {"reason":"line one\\n\\ndata: forged\\nid: 99"}\n\n');
    expect(text.split('\n\n')).toHaveLength(2);
  });
  it('a message without an id', () => {
    expect(formatMessage({ event: 'view', data: 1 })).toBe('event: view\ndata: 1\n\n');
  });
});

describe('Last-Event-ID replay', () => {
  it('reads a count, and treats anything else as none', () => {
    expect(parseLastEventId('2')).toBe(2);
    expect(parseLastEventId(' 2 ')).toBe(2);
    for (const value of [undefined, '', 'x', '-1', '1.5', '99999999999', ['1', '2']]) expect(parseLastEventId(value)).toBe(0);
  });
  it('gives what came after the last seen event, numbered from 1', () => {
    expect(eventsAfter(EVENTS, 0).map((sent) => sent.id)).toEqual([1, 2, 3]);
    expect(eventsAfter(EVENTS, 2)).toEqual([{ id: 3, event: EVENTS[2] }]);
    expect(eventsAfter(EVENTS, 3)).toEqual([]);
    expect(eventsAfter(EVENTS, 50)).toEqual([]);
  });
});
