// The goal/loop machinery (goal-runtime.ts) is imported on first use, so an idle daemon never loads it.

type GoalRuntime = typeof import('./goal-runtime.js');

let runtimeModule: Promise<GoalRuntime> | null = null;

/** The goal/loop machinery, imported on the first call. */
export function loadGoalRuntime(): Promise<GoalRuntime> {
  runtimeModule ??= import('./goal-runtime.js');
  return runtimeModule;
}
