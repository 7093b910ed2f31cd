// What `goald start` (and `goald loop`) were asked: commander's raw options validated into the options
// that are not settings and the start flags (read through the start options' table).

import { z } from '../../zod-mini.js';
import { readStartFlags, type StartFlags } from '../../config/start-options.js';

// The options that are not settings (those are read by readStartFlags from the start options' table).
const commandOptionsSchema = z.object({
  dir: z.optional(z.string()),
  queue: z._default(z.boolean(), true),
  json: z._default(z.boolean(), false),
  foreground: z._default(z.boolean(), false),
  wait: z._default(z.boolean(), false),
  catchUp: z.optional(z.enum(['once', 'skip'])),
});

export type StartOptions = z.infer<typeof commandOptionsSchema> & { flags: StartFlags };

/** Validates commander's raw options for `start` and `loop`. */
export function parseStartOptions(rawOptions: Record<string, unknown>): StartOptions {
  return { ...commandOptionsSchema.parse(rawOptions), flags: readStartFlags(rawOptions) };
}

/** The config-relevant flags, as resolveGoalSettings takes them. */
export function toStartFlags(options: StartOptions): StartFlags {
  return options.flags;
}
