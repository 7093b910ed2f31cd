// GoalSession's writes of the goal's record against a real store: state.json never says more than
// turns.jsonl holds, whichever of the session's writes comes first.

import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { GoalSession } from '../../src/supervisor/goal-session.js';
import type { Store } from '../../state/types.js';
import { expectToHold } from '../helpers/daemon.js';
import { deferred } from '../helpers/deferred.js';
import { ScriptedAgent, setup } from './support.js';

async function storedMachine(store: Store, id: string): Promise<unknown> {
  return (await store.read()).goals.find((goal) => goal.id === id)?.machine ?? null;
}

describe('GoalSession: writes that follow the turn log', () => {
  it("renames state.json into place only once the turn log's pending append has settled, for any write", async () => {
    const agent = new ScriptedAgent([]);
    const { store, goal } = await setup({ checks: ['true'], agent });
    const session = new GoalSession({ goal, blockedLimit: 3, machine: null, store, clock: systemClock, observers: [], agent });
    session.start();
    const append = deferred();
    session.followTurnLog(append.promise);
    let written = false;
    const write = session.persist({ durable: false }).then(() => (written = true));
    // Its content is flushed at once; the rename waits for the append.
    await expectToHold('the write to wait for the append', 300, () => !written);
    expect(await storedMachine(store, goal.id)).toBeNull();
    append.resolve();
    await write;
    expect(await storedMachine(store, goal.id)).not.toBeNull();
  });

  it("goes on after a failed append: only the write given it as `after` fails", async () => {
    const agent = new ScriptedAgent([]);
    const { store, goal } = await setup({ checks: ['true'], agent });
    const session = new GoalSession({ goal, blockedLimit: 3, machine: null, store, clock: systemClock, observers: [], agent });
    session.start();
    const failed = Promise.reject(new Error('ENOSPC: the turn log'));
    session.followTurnLog(failed);
    await expect(session.persist({ after: failed })).rejects.toThrow('ENOSPC');
    expect(await storedMachine(store, goal.id)).toBeNull();
    await session.persist();
    expect(await storedMachine(store, goal.id)).not.toBeNull();
  });
});
