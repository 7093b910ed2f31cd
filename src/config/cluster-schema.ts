// The `cluster` section of the user's config.json: the Redis a daemon and its workers share, the git
// remote the turns travel through, and a cap on turns at once across the fleet (docs/cluster.md). Read from
// the user's own file only: a workspace's goal.config.json is written by the agent as easily as by the
// user, and a Redis or remote from there would send the goal, and the daemon's keys, elsewhere.

import { z } from '../zod.js';

/** `cluster` in the user's config.json. */
export const clusterSchema = z
  .strictObject({
    redis: z
      .string()
      .regex(/^rediss?:\/\//, 'expected a redis:// or rediss:// URL')
      .meta({ description: 'The Redis of the cluster (redis://host:6379/0). GOALD_REDIS_URL, when set, wins.' })
      .optional(),
    remote: z
      .string()
      .min(1)
      .meta({ description: "The git remote every worker fetches goals from and pushes turns to. GOALD_CLUSTER_REMOTE wins; default: the workspace's origin." })
      .optional(),
    maxConcurrentTurns: z
      .union([z.number().int().positive(), z.null()])
      .meta({
        description:
          "Turns at once across all workers: a fleet-wide cap, set on the cluster by the daemon when it starts; null lifts it. Absent: the cluster's cap is left as it is (none unless a daemon set one).",
      })
      .optional(),
  })
  .meta({ description: "Cluster mode (user config only): goals run on `goald worker` processes that share one Redis." });
