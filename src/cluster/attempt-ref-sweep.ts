// A periodic pass over the remotes for the attempt refs (`refs/goald/<goal>/t<turn>-<worker>`) of goals
// that have ended. The worker that commits a goal's last turn deletes them, and so does `goald stop`; a
// turn cancelled or fenced out while it pushed can still land one afterwards. Only goals Redis holds as
// ended are swept, each read again right before its refs go: a goal started or reopened meanwhile keeps
// its refs (a turn's attempt is the copy a lost promotion is redone from).

import type { Redis } from 'ioredis';
import { z } from '../zod.js';

import { runGit } from '../workspace/git.js';
import { hideUrlCredentials } from './cluster-goals.js';
import { controlPlaneMirror } from './goal-branch.js';
import { CLUSTER_PREFIX, readClusterGoal } from './turn-commit.js';

const ATTEMPTS_PREFIX = 'refs/goald/';

const isEnded = (status: string | undefined): boolean => status !== undefined && status !== 'active' && status !== 'paused';

// The one field of a goal's cluster state the sweep needs; null when the state does not say.
const remoteSchema = z.object({ remote: z.string().min(1) });
function remoteOf(state: string): string | null {
  try {
    const parsed = remoteSchema.safeParse(JSON.parse(state));
    return parsed.success ? parsed.data.remote : null;
  } catch {
    return null;
  }
}

/** Deletes the ended goals' attempt refs on every remote they used; resolves with how many refs went. */
export async function sweepAttemptRefs(options: { redis: Redis; mirrorsDir: string; log: (line: string) => void }): Promise<number> {
  const { redis } = options;
  // Ended goals by remote.
  const ended = new Map<string, Set<string>>();
  for await (const keys of redis.scanStream({ match: `${CLUSTER_PREFIX}:goal:*`, count: 500 }) as AsyncIterable<string[]>) {
    for (const key of keys) {
      const goalId = key.slice(`${CLUSTER_PREFIX}:goal:`.length);
      if (goalId.includes(':')) continue; // a goal's turn list or stream, not its hash
      const stored = await readClusterGoal(redis, goalId).catch(() => null);
      const remote = stored === null || !isEnded(stored.status) ? null : remoteOf(stored.state);
      if (remote === null) continue;
      const goals = ended.get(remote) ?? new Set<string>();
      goals.add(goalId);
      ended.set(remote, goals);
    }
  }
  let deleted = 0;
  for (const [remote, goals] of ended) {
    try {
      deleted += await sweepRemote(redis, await controlPlaneMirror(options.mirrorsDir, remote), remote, goals);
    } catch (error) {
      options.log(`attempt refs on ${hideUrlCredentials(remote)} not swept: ${hideUrlCredentials(error instanceof Error ? error.message : String(error))}`);
    }
  }
  return deleted;
}

async function sweepRemote(redis: Redis, mirror: string, remote: string, ended: ReadonlySet<string>): Promise<number> {
  const listed = await runGit(['ls-remote', remote, `${ATTEMPTS_PREFIX}*`], { cwd: mirror });
  const byGoal = new Map<string, string[]>();
  for (const line of listed.stdout.split('\n')) {
    const ref = line.split('\t')[1] ?? '';
    const goalId = ref.slice(ATTEMPTS_PREFIX.length).split('/')[0] ?? '';
    if (!ref.startsWith(ATTEMPTS_PREFIX) || !ended.has(goalId)) continue;
    byGoal.set(goalId, [...(byGoal.get(goalId) ?? []), ref]);
  }
  const refs: string[] = [];
  for (const [goalId, goalRefs] of byGoal) {
    // Still ended now: a goal reopened since the scan keeps its refs.
    if (isEnded((await readClusterGoal(redis, goalId).catch(() => null))?.status)) refs.push(...goalRefs);
  }
  if (refs.length === 0) return 0;
  // One push for them all (a ref another daemon deleted meanwhile is only warned about).
  await runGit(['push', '--quiet', remote, ...refs.map((ref) => `:${ref}`)], { cwd: mirror, allowFailure: true });
  return refs.length;
}
