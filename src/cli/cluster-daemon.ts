// A cluster's goals live in its Redis, not in this home: the commands that read goals (`history`, `diff`,
// `apply`) go through a daemon that is its control plane, started when none runs and this machine is set
// up for a cluster, as `status` would be.

import type { GoalRecord } from '../../state/types.js';
import { connectIfRunning, ensureDaemon } from '../daemon/auto-start.js';
import type { DaemonClient } from '../daemon/client.js';

/** The cluster's control plane and its goals; null when this machine's goals are in its home. */
export async function clusterDaemon(env: NodeJS.ProcessEnv): Promise<{ client: DaemonClient; goals: GoalRecord[] } | null> {
  let client = await connectIfRunning(env);
  if (client === null) {
    const { resolveClusterSettings } = await import('../cluster/cluster-settings.js');
    if ((await resolveClusterSettings(env)).settings === null) return null;
    client = await ensureDaemon(env);
  }
  const { goals, cluster } = await client.listGoalsWithHealth();
  return cluster === undefined ? null : { client, goals };
}
