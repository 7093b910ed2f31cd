// run_command: a shell command in the workspace, in its own process group with a timeout, no stdin, the
// output's end kept, and no model vendor's credentials in its environment. It runs through the goal's check
// runner (src/workspace/checks.ts), which already does all of that for the checks.

import { z } from '../../../zod.js';
import { createCheckRunner } from '../../../workspace/checks.js';
import type { CheckGroup } from '../../../workspace/types.js';
import { commandRefusal } from './command-policy.js';
import { defineTool, toolError } from './tool.js';

const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 600;

/** The run_command tool. */
export const runCommandTool = defineTool({
  name: 'run_command',
  description: `Run a shell command (sh -c) in the workspace root, without input; returns its exit code and the end of its output. Times out after ${DEFAULT_TIMEOUT_S} s unless timeoutSeconds says otherwise (at most ${MAX_TIMEOUT_S}). Never start servers or watchers that do not exit.`,
  schema: z.object({
    command: z.string().min(1).describe('The command line, e.g. "npm test -- parser".'),
    timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_S).optional().describe('Kill the command after this many seconds.'),
  }),
  async run(args, context) {
    const report = { command: args.command };
    const refusal = commandRefusal(args.command, context.commands);
    if (refusal !== null) return toolError('run_command', refusal, report);
    const runner = createCheckRunner({
      workspace: context.workspace,
      checks: [{ name: 'run_command', run: args.command, timeoutMs: (args.timeoutSeconds ?? DEFAULT_TIMEOUT_S) * 1000 }],
      passEnv: context.passEnv,
    });
    const started: CheckGroup[] = [];
    let results;
    try {
      results = await runner.run(context.signal, (group) => {
        started.push(group);
        context.groups?.add(group);
      });
    } finally {
      for (const group of started) context.groups?.release(group);
    }
    const [result] = results;
    if (result === undefined) return toolError('run_command', 'the command did not run', report);
    const status = result.timedOut
      ? `timed out after ${args.timeoutSeconds ?? DEFAULT_TIMEOUT_S} s (killed)`
      : `exit code ${result.exitCode ?? 'none (killed by a signal)'}`;
    const output = result.outputTail.trim() === '' ? '(no output)' : result.outputTail;
    return { ok: result.passed, content: `${status}\n${output}`, report: { name: 'run_command', ...report } };
  },
});
