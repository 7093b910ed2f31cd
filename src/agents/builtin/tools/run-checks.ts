// run_checks: the goal's own checks, as the supervisor will run them after the turn.

import { z } from '../../../zod.js';
import type { CheckGroup, CheckResult } from '../../../workspace/types.js';
import { createCheckRunner } from '../../../workspace/checks.js';
import type { ToolContext } from './tool.js';
import { defineTool } from './tool.js';

/** The run_checks tool. */
export const runChecksTool = defineTool({
  name: 'run_checks',
  description: "Run the goal's checks (the commands that decide whether the goal is met) and report which pass and the output of those that fail.",
  schema: z.object({}),
  async run(_args, context) {
    const results = await runGoalChecks(context);
    return { ok: results.every((result) => result.passed), content: describeCheckResults(results), report: { name: 'run_checks' } };
  },
});

/** Runs the goal's checks in the workspace (the agent's final verification runs them too). */
export async function runGoalChecks(context: ToolContext): Promise<CheckResult[]> {
  const started: CheckGroup[] = [];
  try {
    return await createCheckRunner({ workspace: context.workspace, checks: [...context.checks], passEnv: context.passEnv }).run(context.signal, (group) => {
      started.push(group);
      context.groups?.add(group);
    });
  } finally {
    for (const group of started) context.groups?.release(group);
  }
}

/** The check results as the model reads them: one line per check, the output's end for each that failed. */
export function describeCheckResults(results: readonly CheckResult[]): string {
  if (results.length === 0) return 'this goal has no checks';
  return results
    .map((result) => {
      if (result.passed) return `PASS ${result.name}`;
      const why = result.timedOut ? 'timed out' : `exit code ${result.exitCode ?? 'none'}`;
      return `FAIL ${result.name} (${result.command}): ${why}\n${result.outputTail.trim()}`;
    })
    .join('\n');
}
