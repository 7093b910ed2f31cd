// Commands whose start-up time users wait on skip commander (~10 ms to load and build the whole CLI) when
// their arguments take the plain forms recognised here: `goald status` and `watch --once`, polled by
// scripts, shell prompts and editors, and `goald start` (start-args.ts). Anything else (other flags,
// --help, extra arguments) returns null and goes through the full CLI, which parses it the same way or
// reports it.

import { processIO, type CliIO } from './io.js';
import { reportGoaldError } from './report-error.js';

/** A fast command's exit code; `exitNow`: it leaves nothing running, so the process may exit at once. */
export interface FastCommandResult {
  code: number;
  exitNow: boolean;
}

/** Runs `args` (argv after the script) on the fast path; resolves with its result, or null when it is not one. */
export async function runFastCommand(args: readonly string[], io: CliIO = processIO): Promise<FastCommandResult | null> {
  if (args[0] === 'start') {
    // `goald start` as well: its start-up is a target too (to its first agent, in the foreground). It may
    // leave work to finish (a daemon it started, a notification), so the process exits when that is done.
    const { parseStartArgs } = await import('./start-args.js');
    const start = parseStartArgs(args.slice(1));
    if (start === null) return null;
    try {
      const { runStartCommand } = await import('./commands/start.js');
      return { code: await runStartCommand(start.condition, start.options, io), exitNow: false };
    } catch (error) {
      return { code: reportGoaldError(error, io), exitNow: false };
    }
  }
  const code = await runReadOnlyCommand(args, io);
  return code === null ? null : { code, exitNow: true };
}

async function runReadOnlyCommand(args: readonly string[], io: CliIO): Promise<number | null> {
  const watchOnce = parseWatchOnceArgs(args);
  if (watchOnce !== null) {
    try {
      const { runWatchOnce } = await import('./commands/watch-once.js');
      return await runWatchOnce(watchOnce.ref, io);
    } catch (error) {
      return reportGoaldError(error, io);
    }
  }
  const status = parseStatusArgs(args);
  if (status === null) return null;
  try {
    const { runStatus } = await import('./commands/control.js');
    return await runStatus(status.ref, { json: status.json }, io);
  } catch (error) {
    return reportGoaldError(error, io);
  }
}

// `status`, `status <goal>`, each with or without one `--json` anywhere after `status`.
function parseStatusArgs(args: readonly string[]): { ref: string | undefined; json: boolean } | null {
  if (args[0] !== 'status') return null;
  let ref: string | undefined;
  let json = false;
  for (const arg of args.slice(1)) {
    if (arg === '--json' && !json) json = true;
    else if (ref === undefined && arg !== '' && !arg.startsWith('-')) ref = arg;
    else return null;
  }
  return { ref, json };
}

// `watch --once`, `watch <goal> --once` (--once anywhere after `watch`): scripts poll it like status.
// Without --once the view is interactive and goes through the full CLI.
function parseWatchOnceArgs(args: readonly string[]): { ref: string | undefined } | null {
  if (args[0] !== 'watch') return null;
  let ref: string | undefined;
  let once = false;
  for (const arg of args.slice(1)) {
    if (arg === '--once' && !once) once = true;
    else if (ref === undefined && arg !== '' && !arg.startsWith('-')) ref = arg;
    else return null;
  }
  return once ? { ref } : null;
}
