import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../state/store.js';
import { makeGoal } from './fixtures.js';
import { buildStateForChildren, makeTempDir, spawnNode } from './helpers.js';

// A child that opens the store, prints `ready`, waits for `go` on stdin (so all children contend at the
// same moment), then performs `count` read-modify-write updates that each append one goal.
const INCREMENT_SCRIPT = `
import { createEmptySummary } from './state/state-schema.js';
import { openStore } from './state/store.js';
const [home, name, count] = process.argv.slice(2);
const store = await openStore(home, { env: {} });
const goal = (id) => ({
  id, condition: 'c', workspace: '/w', status: 'active', phase: 'running',
  createdAt: 'now', updatedAt: 'now', startedAt: null, finishedAt: null, reason: null,
  reasonMessage: null, pauseReason: null, loopId: null, settings: null, machine: null,
  summary: createEmptySummary(),
  owner: null, runningAgent: null,
});
console.log('ready');
process.stdin.once('data', async () => {
  for (let i = 0; i < Number(count); i++) {
    await store.update((state) => { state.goals.push(goal(name + '-' + i)); });
  }
  console.log('done');
  process.exit(0);
});
`;

// A child that writes as fast as it can and reports every completed write, to be SIGKILLed mid-write.
const HAMMER_SCRIPT = `
import { openStore } from './state/store.js';
const [home] = process.argv.slice(2);
const store = await openStore(home, { env: {} });
for (let i = 0; ; i++) {
  await store.update((state) => { state.loops = Array.from({ length: 50 }, (_, n) => ({
    id: 'l' + n, workspace: '/w'.repeat(i % 7 + 1), every: '30m', condition: null, options: { i },
    source: 'cli', createdAt: 'now', nextRunAt: null, lastRunAt: null, lastGoalId: null,
    lastOutcome: null, runs: i, skipped: 0, waiting: false, catchUp: 'once', stopped: false })); });
  console.log('wrote ' + i);
}
`;

let build: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  build = await buildStateForChildren();
  await writeFile(join(build.dir, 'increment.mjs'), INCREMENT_SCRIPT);
  await writeFile(join(build.dir, 'hammer.mjs'), HAMMER_SCRIPT);
});
afterAll(async () => {
  await build.cleanup();
});

describe('concurrent updates', () => {
  it('loses no update across many Store instances in one process', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(dir, { env: {} })));
      const perStore = 15;
      await Promise.all(
        stores.map((store, s) =>
          Promise.all(
            Array.from({ length: perStore }, (_, i) =>
              store.update((state) => {
                state.goals.push(makeGoal(`s${s}-${i}`));
              }),
            ),
          ),
        ),
      );
      const ids = (await stores[0]!.read()).goals.map((goal) => goal.id);
      expect(ids).toHaveLength(4 * perStore);
      expect(new Set(ids).size).toBe(4 * perStore);
    } finally {
      await cleanup();
    }
  });

  it('loses no update across child processes', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const count = 40;
      const children = ['a', 'b', 'c'].map((name) =>
        spawnNode(join(build.dir, 'increment.mjs'), [dir, name, String(count)], build.dir),
      );
      await Promise.all(children.map((child) => child.waitForLine(/^ready$/)));
      for (const { child } of children) child.stdin.write('go\n');
      const codes = await Promise.all(children.map((child) => child.exited));
      expect(codes, children.map((child) => child.stderr()).join('\n')).toEqual([0, 0, 0]);

      const store = await openStore(dir, { env: {} });
      const ids = (await store.read()).goals.map((goal) => goal.id);
      expect(ids).toHaveLength(3 * count);
      expect(new Set(ids).size).toBe(3 * count);
      // Each child's own updates land in its order.
      const mine = ids.filter((id) => id.startsWith('a-'));
      expect(mine).toEqual(Array.from({ length: count }, (_, i) => `a-${i}`));
    } finally {
      await cleanup();
    }
  });

  it('leaves a valid state.json and .bak when the writer is killed mid-write', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const hammer = spawnNode(join(build.dir, 'hammer.mjs'), [dir], build.dir);
      await hammer.waitForLine(/^wrote 30$/);
      hammer.child.kill('SIGKILL');
      expect(await hammer.exited).toBe('SIGKILL');

      // A fresh store reads both files, cleans the dead writer's temp files, and can write again.
      const store = await openStore(dir, { env: {} });
      expect((await store.read()).loops).toHaveLength(50);
      expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      await store.update((state) => {
        state.loops = [];
      });
      expect((await store.read()).loops).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});
