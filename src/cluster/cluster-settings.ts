// Where a daemon or worker finds its cluster: GOALD_REDIS_URL and GOALD_CLUSTER_REMOTE in its environment,
// else `cluster` in the user's config.json (config/cluster-schema.ts). Nothing of a workspace's
// goal.config.json counts: an agent writes that file as easily as the user does.

import { loadConfigFile } from '../config/load-config.js';
import { resolveUserConfigPath } from '../config/resolve-settings.js';
import { isGoaldError } from '../errors.js';

export interface ClusterSettings {
  /** The Redis URL (may hold a password: show it only through connectCluster's shownUrl). */
  url: string;
  /** What set the URL, for messages: `GOALD_REDIS_URL` or the config file's `cluster.redis`. */
  urlSource: string;
  /** The git remote the turns travel through; null: each workspace's origin. */
  remote: string | null;
  /** The fleet-wide cap on turns at once; null lifts it; undefined leaves the cluster's as it is. */
  maxConcurrentTurns?: number | null;
}

/** The cluster this process is part of, or null (the embedded daemon); `warnings` for a user config that could not be read. */
export async function resolveClusterSettings(env: NodeJS.ProcessEnv): Promise<{ settings: ClusterSettings | null; warnings: string[] }> {
  const userConfigPath = resolveUserConfigPath(env);
  const warnings: string[] = [];
  let cluster;
  try {
    cluster = (await loadConfigFile(userConfigPath)).config?.cluster;
  } catch (error) {
    // A broken user config is told when a goal starts, as always; here it only cannot name a cluster.
    if (!isGoaldError(error)) throw error;
    warnings.push(`${userConfigPath} could not be read, so its cluster settings are not used: ${error.message}`);
  }
  const fromEnv = env.GOALD_REDIS_URL ?? '';
  const url = fromEnv !== '' ? fromEnv : (cluster?.redis ?? '');
  if (url === '') return { settings: null, warnings };
  const remote = env.GOALD_CLUSTER_REMOTE ?? '';
  return {
    settings: {
      url,
      urlSource: fromEnv !== '' ? 'GOALD_REDIS_URL' : `cluster.redis in ${userConfigPath}`,
      remote: remote !== '' ? remote : (cluster?.remote ?? null),
      ...(cluster?.maxConcurrentTurns === undefined ? {} : { maxConcurrentTurns: cluster.maxConcurrentTurns }),
    },
    warnings,
  };
}
