import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { appendTurnRecord } from '../../state/turn-log.js';
import { AgentWindows } from '../../src/supervisor/agent-windows.js';
import { makeTurn } from '../state/fixtures.js';
import { tempDirPerTest } from '../state/helpers.js';

let dir: string;
tempDirPerTest((made) => (dir = made));

describe('AgentWindows', () => {
  it("a goal's own supervisor keeps each turn's window as it ends, and reads no log", async () => {
    const windows = new AgentWindows(join(dir, 'no-such-goal'), { takenOver: false });
    windows.add({ from: 10, to: 20 });
    windows.add({ from: 30, to: 40 });
    expect(await windows.soFar({ from: 30, to: 40 })).toEqual([{ from: 10, to: 20 }, { from: 30, to: 40 }]);
  });

  it("a supervisor that took the goal over reads the earlier turns' windows from the turn log once; a record without one gives its whole turn", async () => {
    const goalDir = join(dir, 'goals', 'g1');
    const recorded = makeTurn({ turn: 1 });
    await appendTurnRecord(goalDir, makeTurn({ turn: 0, agent: null }));
    await appendTurnRecord(goalDir, { ...recorded, agent: recorded.agent === null ? null : { ...recorded.agent, window: { from: 100, to: 200 } } });
    await appendTurnRecord(goalDir, makeTurn({ turn: 2, startedAt: '2026-01-01T00:00:05.000Z', finishedAt: '2026-01-01T00:00:07.000Z' }));
    const windows = new AgentWindows(goalDir, { takenOver: true });
    windows.add({ from: 900, to: 950 }); // this turn's, before the log is read: not counted twice
    const older = { from: Date.parse('2026-01-01T00:00:05.000Z'), to: Date.parse('2026-01-01T00:00:07.000Z') };
    expect(await windows.soFar({ from: 900, to: 950 })).toEqual([{ from: 100, to: 200 }, older, { from: 900, to: 950 }]);
    await appendTurnRecord(goalDir, makeTurn({ turn: 3 })); // read once: the log is not read again
    windows.add({ from: 1000, to: 1100 });
    expect(await windows.soFar({ from: 1000, to: 1100 })).toEqual([{ from: 100, to: 200 }, older, { from: 900, to: 950 }, { from: 1000, to: 1100 }]);
  });
});
