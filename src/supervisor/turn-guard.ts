// The tamper guard's look at one turn, as the pipeline takes it (supervisor.ts, after the snapshot): the
// guard (src/guard/) on everything changed since the goal started, so a weakening made in an earlier turn
// and never reverted still stands; then, when every check passed and the turn could achieve the goal, the
// files git ignores that changed while the agent ran. Both load on first use: never before the first agent.

import type { GoalSettings } from '../config/types.js';
import { cleanReport, type GoaldPaths, type GuardReport } from '../guard/types.js';
import type { TurnResult } from '../agents/types.js';
import type { CheckResult, FileChange, Snapshotter, TurnDelta } from '../workspace/types.js';
import type { AgentWindows } from './agent-windows.js';

/** What the guard works with: the goal's settings as they stand, git's reads, and the goal's abort. */
export interface TurnGuardContext {
  settings: GoalSettings;
  snapshotter: Snapshotter;
  goaldPaths: GoaldPaths | undefined;
  signal: AbortSignal;
  /** True once the goal was stopped or detached: a read it aborted is no finding. */
  isInterrupted: () => boolean;
}

/** The turn as the snapshot saw it. */
export interface ObservedTurn {
  previousTree: string;
  tree: string;
  delta: TurnDelta;
  initialTree: string | null;
  /** Every change since the goal started. */
  changes: FileChange[];
}

const NO_GOALD_PATHS: GoaldPaths = { protect: [], ignore: [] };

/** The guard's report on the turn (`prior`: the last turn's, whose findings still stand until reverted); null when the goal was stopped or detached meanwhile. */
export async function guardTurn(context: TurnGuardContext, observed: ObservedTurn, result: TurnResult, prior: GuardReport): Promise<GuardReport | null> {
  const { settings } = context;
  const { initialTree, changes } = observed;
  if (!settings.guard.enabled) return cleanReport();
  const fromTree = initialTree ?? observed.previousTree;
  const files = initialTree === null ? observed.delta.files : changes;
  try {
    const { inspectTurn } = await import('../guard/inspect-turn.js'); // after a turn, never before the first agent
    return await inspectTurn(
      {
        delta: { fromTree, toTree: observed.tree, files, patchId: null, empty: fromTree === observed.tree },
        toolCalls: result.toolCalls ?? [],
        turnFiles: observed.delta.files,
        prior,
        workspace: settings.workspace,
        checkCommands: settings.checks.map((check) => check.run),
        checkPath: process.env.PATH ?? '', // the checks' (workspace/checks.ts)
        settings: settings.guard,
        goaldPaths: context.goaldPaths ?? NO_GOALD_PATHS,
      },
      context.snapshotter,
      context.signal,
    );
  } catch (error) {
    if (context.isInterrupted()) return null;
    throw error;
  }
}

/**
 * The report with the files git ignores that changed during the agent's turns (guard/ignored-files.ts):
 * looked at only when the turn could achieve the goal (every check passed), since a failing check decides
 * on its own; null when the goal was stopped or detached meanwhile. A look that fails is a note, never a pass.
 */
export async function withIgnoredFiles(
  context: TurnGuardContext,
  report: GuardReport,
  checks: CheckResult[],
  agentWindows: AgentWindows,
  result: TurnResult,
): Promise<GuardReport | null> {
  const { settings, snapshotter } = context;
  if (!settings.guard.enabled || snapshotter.ignoredChanges === undefined || !checks.every((check) => check.passed)) return report;
  let found: GuardReport;
  try {
    const { judgeIgnoredChanges } = await import('../guard/ignored-files.js'); // off the way to the first agent
    const { protectionOf } = await import('../guard/inspect-turn.js');
    const goaldPaths = context.goaldPaths ?? NO_GOALD_PATHS;
    const protection = (file: string): ReturnType<typeof protectionOf> => protectionOf(file, { goaldPaths, protect: settings.guard.protect });
    const mustLook = (file: string): boolean => protection(file) !== null;
    const changes = await snapshotter.ignoredChanges(await agentWindows.soFar(result.window), { mustLook, signal: context.signal });
    found = judgeIgnoredChanges(changes, { protection, goaldPaths });
  } catch (error) {
    if (context.isInterrupted()) return null;
    const why = error instanceof Error ? error.message : String(error);
    found = { tamper: [], notes: [{ path: '.', kind: 'hidden-change', detail: `the files git ignores could not be looked at (${why}): a change the agent made to one would not be seen` }] };
  }
  return { tamper: [...report.tamper, ...found.tamper], notes: [...report.notes, ...found.notes] };
}
