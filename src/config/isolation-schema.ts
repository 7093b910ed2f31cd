// `isolation` and `worktree` in a config file (issue 12): where a goal works, and its worktree's settings.

import { z } from '../zod.js';

/** `isolation` in goal.config.json / the user's config.json. */
export const isolationSchema = z.enum(['in-place', 'worktree']).meta({
  description:
    'Where goals work: "in-place" (the checkout itself, one goal at a time) or "worktree" (each goal in its own git worktree under GOALD_HOME, on a new branch goald/<id>; `--worktree` for one goal). Default: in-place.',
});

/** `worktree` in goal.config.json / the user's config.json. */
export const worktreeSchema = z
  .strictObject({
    author: z
      .string()
      .regex(/^\s*[^<>]+?\s*<[^<>\s]+>\s*$/, 'expected "Name <email>"')
      .meta({ description: 'The author of the turn commits on a goal\'s branch, "Name <email>". Default: goald <goald@localhost>.' })
      .optional(),
    discardOnFail: z
      .boolean()
      .meta({ description: "A failed worktree goal's branch is deleted too (`--discard-on-fail`). Default: false (kept for inspection)." })
      .optional(),
  })
  .meta({ id: 'Worktree', description: 'Worktree goals: their turn commits and what happens to a failed goal\'s branch.' });
