// `goald start`: validate, then run the goal in this process (--foreground, start-foreground.ts) or
// submit it to the daemon (start-daemon.ts). This module loads light: with --foreground the workspace's
// git lookup starts first and runs while the option schemas and the goal machinery load.

import { resolveWorkspace, type ResolvedWorkspace } from '../../workspace/find-workspace.js';
import type { CliIO } from '../io.js';
import { DEFAULT_SANDBOX } from '../../config/defaults.js';
import { resolveGoaldHome } from '../../../state/goald-home.js';

/** `goald start` — resolves with the process exit code. */
export async function runStartCommand(condition: string | undefined, rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const workspace = rawOptions.foreground === true ? lookUpWorkspaceEarly(rawOptions.dir, io.cwd) : undefined;
  if (rawOptions.foreground === true && rawOptions.sandbox !== false && io.env.GOALD_SANDBOX !== 'off') probeSandboxEarly(io.env);
  const { parseStartOptions } = await import('./start-request.js');
  const options = parseStartOptions(rawOptions);
  if (!options.foreground) {
    const { submitToDaemon } = await import('./start-daemon.js');
    return submitToDaemon(condition, options, io);
  }
  const { runInForeground } = await import('./start-foreground.js');
  return runInForeground(condition, options, io, workspace);
}

// The lookup prepareGoal would make first (it only reads); its failure is reported there, in order.
function lookUpWorkspaceEarly(dir: unknown, cwd: string): { dir: string; resolved: Promise<ResolvedWorkspace> } | undefined {
  if (dir !== undefined && typeof dir !== 'string') return undefined;
  const where = dir ?? cwd;
  const resolved = resolveWorkspace(where);
  resolved.catch(() => undefined); // awaited (and reported) by prepareGoal; not unhandled meanwhile
  return { dir: where, resolved };
}

// The bubblewrap probe (one `bwrap … true`, 10-20 ms, unless GOALD_HOME remembers its answer) that
// prepareGoal awaits, started now with the default settings so it runs while goald loads; prepareGoal gets
// the answer. When the settings turn out to differ (another bwrap, no network), prepareGoal probes those,
// and this one was only wasted work.
function probeSandboxEarly(env: NodeJS.ProcessEnv): void {
  void import('../../sandbox/probe.js')
    .then(({ probeBwrap }) => probeBwrap(null, DEFAULT_SANDBOX.network, env, { goaldHome: resolveGoaldHome(env) }))
    .catch(() => undefined);
}
