// Commands run so often that start-up time is most of their cost — `goald status` is polled by scripts,
// shell prompts and editors — skip commander (~25 ms to load as ESM, as long as the rest of the command)
// when their arguments take the plain forms recognised here. Anything else (other flags, --help, extra
// arguments) returns null and goes through the full CLI, which parses it the same way or reports it.
// (A plain `goald start` line has a path of its own: start-args.ts, routed by bin.ts.)

import { processIO, type CliIO } from './io.js';
import { reportGoaldError } from './report-error.js';

/** Runs `args` (argv after the script) on the fast path; resolves with the exit code, or null when it is not one. */
export async function runFastCommand(args: readonly string[], io: CliIO = processIO): Promise<number | null> {
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
  const parsed = parsePlainArgs(args, 'status', '--json');
  return parsed === null ? null : { ref: parsed.ref, json: parsed.flag };
}

// `watch --once`, `watch <goal> --once` (--once anywhere after `watch`): scripts poll it like status.
// Without --once the view is interactive and goes through the full CLI.
function parseWatchOnceArgs(args: readonly string[]): { ref: string | undefined } | null {
  const parsed = parsePlainArgs(args, 'watch', '--once');
  return parsed?.flag === true ? { ref: parsed.ref } : null;
}

// `<command> [goal]` with `flag` at most once anywhere after the command; null for any other form.
function parsePlainArgs(args: readonly string[], command: string, flag: string): { ref: string | undefined; flag: boolean } | null {
  if (args[0] !== command) return null;
  let ref: string | undefined;
  let seen = false;
  for (const arg of args.slice(1)) {
    if (arg === flag && !seen) seen = true;
    else if (ref === undefined && arg !== '' && !arg.startsWith('-')) ref = arg;
    else return null;
  }
  return { ref, flag: seen };
}
