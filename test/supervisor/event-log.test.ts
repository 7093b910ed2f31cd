import { appendFile, mkdtemp, open, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { createEventLogReader, followEventLog, readEventLog } from '../../src/supervisor/event-log.js';
import { createEventLogObserver } from '../../src/supervisor/event-log-writer.js';
import { progressEventSchema } from '../../src/supervisor/progress-event-schema.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';

let goalDir: string;

beforeEach(async () => {
  goalDir = await mkdtemp(path.join(tmpdir(), 'goald-events-'));
});
afterEach(async () => {
  await rm(goalDir, { recursive: true, force: true });
});

const STARTED: ProgressEvent = { type: 'goal.started', id: 'g1', condition: 'tests pass', workspace: '/ws', maxTurns: 5 };
const TURN_STARTED: ProgressEvent = { type: 'turn.started', id: 'g1', turn: 1, maxTurns: 5 };
const EVENTS: ProgressEvent[] = [
  STARTED,
  { type: 'precheck.finished', id: 'g1', checks: [{ name: 'test', passed: false }], achieved: false },
  TURN_STARTED,
  {
    type: 'turn.finished',
    id: 'g1',
    turn: 1,
    maxTurns: 5,
    outcome: 'completed',
    durationMs: 1200,
    tokens: 40,
    tokensEstimated: false,
    filesChanged: 2,
    checks: [{ name: 'test', passed: true }],
    verdict: { achieved: true, reason: 'tests pass' },
    evaluatorError: null,
    agentError: null,
    tamper: [{ path: 'test/a.test.js', kind: 'skip-marker', detail: 'added .skip( to a test file' }],
  },
  { type: 'goal.paused', id: 'g1', reason: 'requested' },
  { type: 'goal.resumed', id: 'g1' },
  { type: 'config.held', id: 'g1', turn: 1, settings: ['checks', 'limits.maxTurns', 'loops'] },
  { type: 'goal.edited', id: 'g1', by: 'goald edit --apply-config', settings: ['limits.maxTurns'], resumed: false },
  { type: 'goal.finished', id: 'g1', status: 'achieved', reason: null, breaker: null, turns: 1, tokens: 40 },
];

describe('event log', () => {
  it('has a schema that is exactly ProgressEvent (checked by the compiler)', () => {
    expectTypeOf<z.infer<typeof progressEventSchema>>().toEqualTypeOf<ProgressEvent>();
  });

  it('reads back every event the observer appended, in order', async () => {
    const observer = createEventLogObserver(goalDir);
    for (const event of EVENTS) observer.onEvent?.(event);
    expect(await readEventLog(goalDir)).toEqual(EVENTS);
  });

  it('reads a turn.finished written before the tamper guard as clean', async () => {
    const old = { ...EVENTS[3], tamper: undefined };
    await appendFile(path.join(goalDir, 'events.jsonl'), `${JSON.stringify(old)}\n`);
    expect(await readEventLog(goalDir)).toEqual([{ ...EVENTS[3], tamper: [] }]);
  });

  it('reads a missing log as empty', async () => {
    expect(await readEventLog(path.join(goalDir, 'nope'))).toEqual([]);
  });

  it('skips a torn last line and a line that is not an event', async () => {
    const observer = createEventLogObserver(goalDir);
    observer.onEvent?.(STARTED);
    await appendFile(path.join(goalDir, 'events.jsonl'), '{"type":"goal.paused","id":"g1","reason":"nap"}\n');
    observer.onEvent?.(TURN_STARTED);
    await appendFile(path.join(goalDir, 'events.jsonl'), '{"type":"turn.fin');
    expect(await readEventLog(goalDir)).toEqual([STARTED, TURN_STARTED]);
  });
});

describe('followEventLog (a stream that joins a goal already running)', () => {
  // What the daemon does: each event is appended to the log, then told to the listeners there are.
  function emitter(): { emit(event: ProgressEvent): void; add(listener: (event: ProgressEvent) => void): () => void; listeners: number } {
    const observer = createEventLogObserver(goalDir);
    const listeners = new Set<(event: ProgressEvent) => void>();
    return {
      emit(event) {
        observer.onEvent?.(event);
        for (const listener of listeners) listener(event);
      },
      add(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      get listeners() {
        return listeners.size;
      },
    };
  }

  it('hands the listener what was told between reading the log and following it, then what comes, each once', async () => {
    const goal = emitter();
    goal.emit(STARTED);
    const seen = await readEventLog(goalDir);
    // The goal goes on (and ends) before the stream follows it: nobody heard these.
    const missed = EVENTS.slice(1);
    for (const event of missed) goal.emit(event);
    const heard: ProgressEvent[] = [];
    const remove = followEventLog(goalDir, seen.length, (event) => heard.push(event), (listener) => goal.add(listener));
    expect(heard).toEqual(missed);
    goal.emit(TURN_STARTED);
    expect(heard).toEqual([...missed, TURN_STARTED]);
    remove();
    expect(goal.listeners).toBe(0);
  });

  it('hands nothing over when nothing was missed, and follows a log not written yet', () => {
    const goal = emitter();
    const heard: ProgressEvent[] = [];
    followEventLog(goalDir, 0, (event) => heard.push(event), (listener) => goal.add(listener));
    expect(heard).toEqual([]);
    goal.emit(STARTED);
    expect(heard).toEqual([STARTED]);
  });
});

describe('createEventLogReader (the daemon reads a log again on every refresh)', () => {
  const file = (): string => path.join(goalDir, 'events.jsonl');
  const line = (event: ProgressEvent): string => `${JSON.stringify(event)}\n`;

  it('reads only what was appended: a line changed in place after it was read is not read again', async () => {
    const read = createEventLogReader();
    expect(await read(goalDir)).toEqual([]);
    await appendFile(file(), line(STARTED) + line(TURN_STARTED));
    expect(await read(goalDir)).toEqual([STARTED, TURN_STARTED]);
    // Same size, same file: the first line spoiled in place. A full read drops it; the reader has it already.
    const handle = await open(file(), 'r+');
    await handle.write('#', 0);
    await handle.close();
    expect(await readEventLog(goalDir)).toEqual([TURN_STARTED]);
    await appendFile(file(), line(EVENTS[3] as ProgressEvent));
    expect(await read(goalDir)).toEqual([STARTED, TURN_STARTED, EVENTS[3]]);
  });

  it('holds a line still being written until it ends, as a full read skips a torn one', async () => {
    const read = createEventLogReader();
    const whole = line(TURN_STARTED);
    const cut = Buffer.from(whole).indexOf(0x2c) + 1; // after the first comma
    await appendFile(file(), line(STARTED) + whole.slice(0, cut));
    expect(await read(goalDir)).toEqual([STARTED]);
    expect(await readEventLog(goalDir)).toEqual([STARTED]);
    await appendFile(file(), whole.slice(cut));
    expect(await read(goalDir)).toEqual([STARTED, TURN_STARTED]);
  });

  it('a character cut between two appends decodes whole', async () => {
    const read = createEventLogReader();
    const event: ProgressEvent = { ...STARTED, condition: 'tests pass — ünïcode ✓' };
    const bytes = Buffer.from(line(event));
    const cut = bytes.indexOf(Buffer.from('✓')) + 1; // inside the three bytes of ✓
    await appendFile(file(), bytes.subarray(0, cut));
    expect(await read(goalDir)).toEqual([]);
    await appendFile(file(), bytes.subarray(cut));
    expect(await read(goalDir)).toEqual([event]);
  });

  it('reads a log replaced by another file, or cut shorter, whole again; a removed one is empty', async () => {
    const read = createEventLogReader();
    await appendFile(file(), line(STARTED) + line(TURN_STARTED));
    expect(await read(goalDir)).toHaveLength(2);
    await writeFile(`${file()}.new`, line(TURN_STARTED));
    await rename(`${file()}.new`, file());
    expect(await read(goalDir)).toEqual([TURN_STARTED]);
    await truncate(file(), 0);
    await appendFile(file(), line(STARTED));
    expect(await read(goalDir)).toEqual([STARTED]);
    await rm(file());
    expect(await read(goalDir)).toEqual([]);
  });
});
