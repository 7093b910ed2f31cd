// The `sandbox` section of a config file: `"auto" | "required" | "off"`, or an object with the mode, the
// network switch and the paths a turn may write, read or not see (src/sandbox/).

import { z } from '../zod.js';

const MODES = ['auto', 'required', 'off'] as const;

const paths = (description: string) =>
  z.array(z.string().min(1).regex(/^(?:\/|~\/|~$)/, 'expected an absolute path or one starting with ~/')).meta({ description });

const modeSchema = z.enum(MODES).meta({
  description:
    '`auto`: agent turns and checks run in a bubblewrap sandbox when bwrap works here, else unsandboxed with one warning per daemon start; `required`: refuse to start a goal without it; `off`. A workspace goal.config.json may only make it stricter. Default: auto.',
});

/** `sandbox` in goal.config.json / the user's config.json. */
export const sandboxSchema = z
  .union([
    modeSchema,
    z.strictObject({
      mode: modeSchema.optional(),
      network: z
        .boolean()
        .meta({ description: 'false: the turn and its checks get no network (loopback only). Default: true (agents call their model APIs).' })
        .optional(),
      writable: paths(
        "Extra paths a turn may write, inside your home or the workspace and never overlapping GOALD_HOME. Read from the user's config file only.",
      ).optional(),
      readable: paths("Paths a turn may read although goald hides them (e.g. ~/.npmrc for a private registry). Read from the user's config file only.").optional(),
      hidden: paths('Extra paths a turn cannot see (an empty directory or file in their place).').optional(),
      bwrap: z
        .string()
        .min(1)
        .meta({ description: "The bwrap executable. Default: bwrap on PATH. Read from the user's config file only." })
        .optional(),
    }),
  ])
  .meta({
    id: 'Sandbox',
    description:
      "The kernel boundary around agent turns and checks (Linux, bubblewrap): the workspace writable, the rest read-only, a private /tmp, goald's home and config and your secret stores hidden, its own PID namespace.",
  });

export type ConfigSandbox = z.infer<typeof sandboxSchema>;
