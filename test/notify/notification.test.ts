// Which events notify, with which key and words: a table per event kind.

import { describe, expect, it } from 'vitest';
import { notificationFor, type GoalFacts } from '../../src/notify/notification.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';

const goal: GoalFacts = {
  id: 'g1',
  condition: 'all tests pass',
  workspace: '/work/repo',
  turns: 3,
  tokens: 1200,
  costUsd: 0.25,
  reasonMessage: 'no progress in 5 turns',
  lastVerdictReason: 'needs a database password',
};

describe('notificationFor', () => {
  it.each<[string, ProgressEvent, { kind: string; key: string; text: string[] } | null]>([
    ['an achieved goal', { type: 'goal.finished', id: 'g1', status: 'achieved', reason: null, breaker: null, turns: 3, tokens: 1200 }, { kind: 'achieved', key: 'finished', text: ['✓ achieved', '"all tests pass"', '3 turns', '$0.25', '/work/repo'] }],
    ['a tripped breaker', { type: 'goal.finished', id: 'g1', status: 'failed', reason: 'stagnation', breaker: 'stagnation', turns: 3, tokens: 1200 }, { kind: 'failed', key: 'finished', text: ['✗ failed (stagnation)', 'no progress in 5 turns', 'goald show g1'] }],
    ['a stop', { type: 'goal.finished', id: 'g1', status: 'failed', reason: 'stopped', breaker: null, turns: 3, tokens: 1200 }, { kind: 'failed', key: 'finished', text: ['✗ failed (stopped)'] }],
    ['a usage limit', { type: 'goal.paused', id: 'g1', reason: 'usage-limited' }, { kind: 'paused', key: 'paused:usage-limited:3', text: ['⏸ paused (usage-limited)', 'resumes by itself'] }],
    ['blocked verdicts', { type: 'goal.paused', id: 'g1', reason: 'blocked' }, { kind: 'paused', key: 'paused:blocked:3', text: ['needs a database password', 'goald resume g1'] }],
    ['drift', { type: 'goal.paused', id: 'g1', reason: 'drift' }, { kind: 'paused', key: 'paused:drift:3', text: ['⏸ paused (drift)'] }],
    ['a held config edit', { type: 'config.held', id: 'g1', turn: 2, settings: ['checks', 'limits.maxTurns'] }, { kind: 'held', key: 'held:2:checks, limits.maxTurns', text: ['checks, limits.maxTurns', 'goald edit g1 --apply-config'] }],
    ['a pause the user asked for', { type: 'goal.paused', id: 'g1', reason: 'requested' }, null],
    ['a turn', { type: 'turn.started', id: 'g1', turn: 1, maxTurns: 5 }, null],
    ['a resume', { type: 'goal.resumed', id: 'g1' }, null],
  ])('%s', (_name, event, expected) => {
    const notification = notificationFor(event, goal);
    if (expected === null) {
      expect(notification).toBeNull();
      return;
    }
    expect(notification).toMatchObject({ kind: expected.kind, key: expected.key, goal, event });
    for (const part of expected.text) expect(notification?.text).toContain(part);
  });

  it('the same pause after another turn is a new notification; the same one again is not', () => {
    const event: ProgressEvent = { type: 'goal.paused', id: 'g1', reason: 'blocked' };
    expect(notificationFor(event, goal)?.key).toBe(notificationFor(event, { ...goal })?.key);
    expect(notificationFor(event, { ...goal, turns: 4 })?.key).not.toBe(notificationFor(event, goal)?.key);
  });
});
