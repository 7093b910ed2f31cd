// `race` in a config file (issue 12, `goald race`): how many of a race's members run at once.

import { z } from '../zod.js';

/** `race` in goal.config.json / the user's config.json. */
export const raceSchema = z
  .strictObject({
    concurrency: z
      .number()
      .int()
      .positive()
      .meta({ description: "How many of a race's members run at once (the rest wait for a slot). Default: all of them." })
      .optional(),
  })
  .meta({ id: 'Race', description: '`goald race`: several agents on one goal, each in its own worktree.' });
