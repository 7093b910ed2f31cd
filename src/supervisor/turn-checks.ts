// A turn's snapshot and its checks, side by side (the pre-check's too). The checks run as soon as the
// snapshot has read the work tree (its `git add`): they may change the work tree, and run beside the rest of
// the snapshot (write-tree, the diffs), which reads only the index and objects. The first check's process is
// started beside the snapshot and held until then, so its sandbox is set up meanwhile (workspace/checks.ts).
// Each check's process group is recorded as it starts, so a daemon that dies mid-check can kill what it left.

import { recordRunningChecks } from '../../state/running-checks.js';
import type { RunningCheck } from '../../state/types.js';
import type { SandboxWrap } from '../sandbox/types.js';
import type { CheckResult, CheckRunner } from '../workspace/types.js';

/** How one goal's checks run: its runner and sandbox as they stand now, and its abort. */
export interface ChecksContext {
  checks: CheckRunner;
  /** The checks' sandbox, asked for when they start (after the snapshot's process: its view is built then). */
  sandbox: () => SandboxWrap | null;
  /** The goal's directory, where running-checks.json lists the checks' groups. */
  goalDir: string;
  signal: AbortSignal;
  /** True once the goal was stopped or detached: the runner rejects on abort, which is no failure. */
  isInterrupted: () => boolean;
}

/**
 * Takes the snapshot and runs the checks once it has indexed the work tree (`onIndexed`) and `alsoAwait`
 * has resolved. A snapshot that fails before that moment ends the held check process, no check having
 * run; one that fails after it waits for the checks before it throws. `snapshotUnderWay`: the snapshot's
 * process was started earlier, so the first check's starts at once.
 */
export async function snapshotBesideChecks<T>(
  context: ChecksContext,
  snapshot: (onIndexed: () => void) => Promise<T>,
  alsoAwait: Promise<void> = Promise.resolve(),
  options: { snapshotUnderWay?: boolean } = {},
): Promise<{ snapshot: T; checks: Promise<CheckResult[] | null> }> {
  let markIndexed = (): void => undefined;
  let failBeforeIndexed: (error: unknown) => void = () => undefined;
  const indexed = new Promise<void>((resolve, reject) => {
    markIndexed = resolve;
    failBeforeIndexed = reject;
  });
  const taking = snapshot(markIndexed);
  taking.catch(() => undefined); // awaited below
  // The snapshot's process is started first (the longer path): each fork holds this thread ~2 ms.
  if (options.snapshotUnderWay !== true) await new Promise((resolve) => setImmediate(resolve));
  const checks = runChecks(context, Promise.all([indexed, alsoAwait]).then(() => undefined));
  checks.catch(() => undefined); // awaited by the caller, or below
  try {
    const taken = await taking;
    markIndexed(); // no marker was seen: the checks run now, after the whole snapshot
    return { snapshot: taken, checks };
  } catch (error) {
    failBeforeIndexed(error); // once indexed, this changes nothing
    await checks.catch(() => undefined);
    throw error;
  }
}

// The checks, or null when the goal was stopped or detached while they ran (the runner rejects on abort).
async function runChecks(context: ChecksContext, opened: Promise<void>): Promise<CheckResult[] | null> {
  try {
    // Each group goes to a small file of the goal's own (state/running-checks.ts), not a state.json write per check.
    const groups: RunningCheck[] = [];
    let unrecorded = null as Error | null; // (a cast: set in the callback, which narrowing cannot see)
    const checks = await context.checks.run(context.signal, (group) => {
      groups.push(group);
      try {
        recordRunningChecks(context.goalDir, groups);
      } catch (error) {
        unrecorded ??= error instanceof Error ? error : new Error(String(error)); // thrown once the checks are over, like any failed write of goald's files
      }
    }, context.sandbox(), opened);
    if (unrecorded !== null) throw unrecorded;
    return context.isInterrupted() ? null : checks;
  } catch (error) {
    if (context.isInterrupted()) return null;
    throw error;
  }
}
