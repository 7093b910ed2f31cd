// `goald start` without --foreground: submit the goal to the per-user daemon.

import { GoaldError } from '../../errors.js';
import type { CliIO } from '../io.js';
import type { StartOptions } from './start.js';

/** Submits the goal to the daemon and prints its id. */
export async function submitToDaemon(_condition: string | undefined, _options: StartOptions, _io: CliIO): Promise<number> {
  throw new GoaldError('daemon-unreachable', 'the goald daemon is not available in this build', 'run the goal in this terminal with --foreground');
}
