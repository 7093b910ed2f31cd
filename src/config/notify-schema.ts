// The `notify` section of the user's config.json: where goald tells the user that a goal ended or needs
// them (src/notify/). Read from the user's own file only: a workspace's goal.config.json is written by
// the agent as easily as by the user, and a command or an address from there would run or post outside
// the sandbox.

import { NOTIFY_KINDS } from '../notify/notify-kinds.js';
import { z } from '../zod.js';

const httpUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'expected an http:// or https:// URL');

/** `notify` in the user's config.json. */
export const notifySchema = z
  .strictObject({
    desktop: z
      .boolean()
      .meta({ description: 'A desktop notification through notify-send (Linux) or osascript (macOS), when present. Default: false.' })
      .optional(),
    webhook: z
      .union([
        httpUrl,
        z.strictObject({
          url: httpUrl,
          headers: z
            .record(z.string().min(1), z.string())
            .meta({ description: 'Extra request headers (e.g. Authorization); never logged.' })
            .optional(),
        }),
      ])
      .meta({
        description:
          'POSTs the notification as JSON (with a Slack-compatible `text` field) to this URL; cut after 10 s, never retried.',
      })
      .optional(),
    command: z
      .string()
      .min(1)
      .meta({ description: 'Runs `sh -c <command>` with the notification as JSON on stdin; ended after 10 s.' })
      .optional(),
    events: z
      .array(z.enum(NOTIFY_KINDS))
      .meta({
        description:
          'Which endings and stops notify: achieved, failed, paused (usage limit, drift, blocked verdicts; not a pause you asked for), held (an agent-made goal.config.json edit waits for you). Default: all.',
      })
      .optional(),
  })
  .meta({
    id: 'Notify',
    description:
      "Notifications when a goal ends or needs you, once per event. Read from the user's config file only (~/.config/goald/config.json).",
  });

export type ConfigNotify = z.infer<typeof notifySchema>;
