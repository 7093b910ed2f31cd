// The sweep for attempt refs left on a remote after their goal ended (a turn cancelled while it pushed),
// against a real redis-server and a real bare remote: only ended goals lose theirs.

import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { sweepAttemptRefs } from '../../src/cluster/attempt-ref-sweep.js';
import { attemptRef } from '../../src/cluster/goal-branch.js';
import { createClusterGoal, setClusterGoalStatus } from '../../src/cluster/turn-commit.js';
import { runGit } from '../../src/workspace/git.js';
import { useRedisFixture } from '../helpers/redis-server.js';

const fixture = useRedisFixture('goald-sweep-');

async function refsOn(remote: string): Promise<string[]> {
  const listed = (await runGit(['ls-remote', remote, 'refs/goald/*'], { cwd: fixture.root })).stdout.trim();
  return listed === '' ? [] : listed.split('\n').map((line) => line.split('\t')[1] ?? '').sort();
}

describe('the attempt-ref sweep', () => {
  it("deletes the attempt refs of ended goals only, on each goal's remote, and leaves live and unknown goals' alone", async () => {
    const { redis, root } = fixture;
    const seed = path.join(root, 'seed');
    await runGit(['init', '--quiet', '--initial-branch=main', seed], { cwd: root });
    await runGit(['-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '--quiet', '--allow-empty', '-m', 'start'], { cwd: seed });
    const remotes = [path.join(root, 'one.git'), path.join(root, 'two.git')];
    for (const remote of remotes) await runGit(['init', '--quiet', '--bare', remote], { cwd: root });
    const [one = '', two = ''] = remotes;
    const goals = [
      { id: 'gdone', remote: one, status: 'achieved' },
      { id: 'gstopped', remote: two, status: 'stopped' },
      { id: 'glive', remote: one, status: null },
      { id: 'gpaused', remote: two, status: 'paused' },
    ] as const;
    for (const goal of goals) {
      await createClusterGoal(redis, goal.id, JSON.stringify({ remote: goal.remote }));
      if (goal.status !== null) await setClusterGoalStatus(redis, goal.id, goal.status);
      const refs = [attemptRef(goal.id, 1, 'w1-aa'), attemptRef(goal.id, 2, 'w2-bb')];
      await runGit(['push', '--quiet', goal.remote, ...refs.map((ref) => `HEAD:${ref}`)], { cwd: seed });
    }
    // A goal Redis does not hold (pruned, or not registered yet): its refs are not the sweep's to judge.
    await runGit(['push', '--quiet', one, `HEAD:${attemptRef('gunknown', 1, 'w1-cc')}`], { cwd: seed });
    const lines: string[] = [];

    const deleted = await sweepAttemptRefs({ redis, mirrorsDir: path.join(root, 'mirrors'), log: (line) => lines.push(line) });

    expect(deleted).toBe(4);
    expect(lines).toEqual([]);
    expect(await refsOn(one)).toEqual([attemptRef('gunknown', 1, 'w1-cc'), attemptRef('glive', 1, 'w1-aa'), attemptRef('glive', 2, 'w2-bb')].sort());
    expect(await refsOn(two)).toEqual([attemptRef('gpaused', 1, 'w1-aa'), attemptRef('gpaused', 2, 'w2-bb')].sort());
    // Nothing left to sweep: a second pass deletes nothing.
    expect(await sweepAttemptRefs({ redis, mirrorsDir: path.join(root, 'mirrors'), log: (line) => lines.push(line) })).toBe(0);
  });

  it('a remote that cannot be reached is logged, with its credentials hidden, and the others are still swept', async () => {
    const { redis, root } = fixture;
    await createClusterGoal(redis, 'gaway', JSON.stringify({ remote: 'https://user:s3cret-token@127.0.0.1:9/none.git' }));
    await setClusterGoalStatus(redis, 'gaway', 'failed');
    const lines: string[] = [];
    await sweepAttemptRefs({ redis, mirrorsDir: path.join(root, 'mirrors'), log: (line) => lines.push(line) });
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatch(/^attempt refs on https:\/\/.*127\.0\.0\.1:9\/none\.git not swept: /);
    expect(lines[0]).not.toContain('s3cret-token');
  });
});
