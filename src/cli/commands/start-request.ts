// What `goald start` (and `goald loop`) were asked: commander's raw options validated into the options
// that are not settings and the start flags (read through the start options' table).

import { z } from '../../zod.js';
import { readStartFlags, type StartFlags } from '../../config/start-options.js';

// The options that are not settings (those are read by readStartFlags from the start options' table).
const commandOptionsSchema = z.object({
  dir: z.string().optional(),
  queue: z.boolean().default(true),
  json: z.boolean().default(false),
  foreground: z.boolean().default(false),
  wait: z.boolean().default(false),
  catchUp: z.enum(['once', 'skip']).optional(),
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
