// POST /v1/prune over a real socket: the typed client's request reaches the host validated; a body that is
// not `{ olderThanMs, keep, dryRun? }` of whole numbers is a 400 naming the field, and the host never sees it.

import { describe, expect, test } from 'vitest';
import { FakeGoalHost } from '../helpers/fake-goal-host.js';
import { rawRequest, startTestDaemon } from './support.js';

describe('POST /v1/prune', () => {
  test('the client sends the limits and gets what was pruned back', async () => {
    const host = new FakeGoalHost();
    host.addGoal({ id: 'g1', status: 'achieved', finishedAt: '2026-01-02T00:00:00.000Z' });
    host.addGoal({ id: 'g2', status: 'failed', reason: 'max-turns', finishedAt: '2026-01-03T00:00:00.000Z' });
    host.addGoal({ id: 'g3', status: 'active' });
    const { client } = await startTestDaemon(host);
    const result = await client.prune({ olderThanMs: 0, keep: 1, dryRun: false });
    expect(host.pruneRequests).toEqual([{ olderThanMs: 0, keep: 1, dryRun: false }]);
    expect(result).toMatchObject({ dryRun: false, kept: 1, goals: [{ id: 'g1', status: 'achieved', finishedAt: '2026-01-02T00:00:00.000Z' }] });
    expect([...host.goals.keys()].sort()).toEqual(['g2', 'g3']);
  });

  test.each([
    ['a negative age', { olderThanMs: -1, keep: 1 }, /olderThanMs/],
    ['a fractional keep', { olderThanMs: 0, keep: 1.5 }, /keep/],
    ['a string', { olderThanMs: '30d', keep: 1 }, /olderThanMs/],
    ['a missing keep', { olderThanMs: 0 }, /keep/],
    ['an unknown key', { olderThanMs: 0, keep: 1, all: true }, /unknown key all/],
  ])('refuses %s with a 400 naming the field', async (_name, body, message) => {
    const host = new FakeGoalHost();
    const { socketPath } = await startTestDaemon(host);
    const reply = await rawRequest(socketPath, 'POST', '/v1/prune', JSON.stringify(body), { 'content-type': 'application/json' });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ error: { code: 'bad-request', message: expect.stringMatching(message) } });
    expect(host.pruneRequests).toEqual([]);
  });
});
