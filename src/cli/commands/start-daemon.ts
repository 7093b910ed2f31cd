// `goald start` without --foreground: validate here (so a typo never starts a daemon), submit the goal to
// the per-user daemon (auto-started), print its id; with --wait, follow it and exit with its outcome.

import path from 'node:path';
import { ensureDaemon } from '../../daemon/auto-start.js';
import { DAEMON_ONLY_ENV_PATTERN, FORWARDED_ENV_PATTERN } from '../../daemon/request-schemas.js';
import { EXIT, GoaldError } from '../../errors.js';
import { prepareGoal } from '../../supervisor/launch.js';
import type { CliIO } from '../io.js';
import { followGoalEvents } from './follow.js';
import { toStartFlags, type StartOptions } from './start-request.js';

/** The non-secret environment the daemon needs for config precedence. */
export function forwardedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && FORWARDED_ENV_PATTERN.test(name) && !DAEMON_ONLY_ENV_PATTERN.test(name)) forwarded[name] = value;
  }
  return forwarded;
}

/** Submits the goal to the daemon; resolves with the exit code. */
export async function submitToDaemon(condition: string | undefined, options: StartOptions, io: CliIO): Promise<number> {
  const dir = path.resolve(io.cwd, options.dir ?? '.');
  const flags = toStartFlags(options);
  const prepared = await prepareGoal({ condition, dir, flags, env: io.env });
  for (const warning of prepared.warnings) io.err(`goald: warning: ${warning}`);
  const client = await ensureDaemon(io.env);
  const { goal, queued } = await client.startGoal({
    ...(condition === undefined ? {} : { condition }),
    dir,
    flags,
    env: forwardedEnv(io.env),
    queue: options.queue,
  });
  if (options.json) io.out(JSON.stringify({ type: 'goal.submitted', id: goal.id, queued, workspace: goal.workspace }));
  else io.out(queued ? `goal ${goal.id} queued in ${goal.workspace} (another goal is active there)` : `goal ${goal.id} started in ${goal.workspace}`);
  if (!options.wait) return EXIT.ok;
  const finished = await followGoalEvents(client, goal.id, { json: options.json, io });
  if (finished === null) {
    throw new GoaldError('daemon-unreachable', `the daemon ended the event stream of goal ${goal.id} before it finished`, 'see GOALD_HOME/daemon.log; goald status shows the goal');
  }
  return finished.status === 'achieved' ? EXIT.ok : EXIT.goalFailed;
}
