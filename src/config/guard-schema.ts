// The `guard` section of a config file: the tamper guard's switches and globs (src/guard/).

import { z } from '../zod.js';
import { DEFAULT_TEST_FILES } from './defaults.js';

const globs = (description: string) => z.array(z.string().min(1)).meta({ description });

const onOff = (description: string) => z.boolean().meta({ description: `${description} Default: true.` });

/** `guard` in goal.config.json / the user's config.json. */
export const guardSchema = z
  .strictObject({
    enabled: onOff('The tamper guard; `--no-guard` turns it off for one goal.').optional(),
    protect: globs(
      "Extra protected paths: any change a turn makes to them is tamper. goald's own files (GOALD_HOME inside the workspace, `.goald/`) are always protected. Glob-ish, as noisePaths.",
    ).optional(),
    testFiles: globs(
      `What counts as a test file; replaces the defaults (${DEFAULT_TEST_FILES.slice(0, 6).join(', ')}, ...).`,
    ).optional(),
    deletedTests: onOff('A deleted test file, or one renamed to a path that is not a test file, is tamper.').optional(),
    skipMarkers: onOff('An added skip/only marker in a test file (`.skip(`, `.only(`, `xit(`, `@pytest.mark.skip`, `t.Skip(`, `#[ignore]`, ...) is tamper.').optional(),
    checkScripts: onOff("A change to what a check runs is tamper: a package.json script it runs (`npm test`, `pnpm lint`, ...), or a workspace file its command runs (`./ci.sh`, `sh scripts/x.sh`, a program its PATH finds in the workspace).").optional(),
  })
  .meta({
    id: 'Guard',
    description:
      'The tamper guard: a turn that weakens its own grading (protected paths, deleted or skipped tests, a check script changed) can never achieve the goal.',
  });
