// How a failed command ends: one line on stderr (`goald: message — hint`) and the documented exit code.
// Shared by the full CLI (main.ts) and the fast path (fast-command.ts), which loads no commander.

import { EXIT, GoaldError, isGoaldError } from '../errors.js';
import type { CliIO } from './io.js';

/** Prints a GoaldError (or an unexpected error, as internal) as one line; returns its exit code. */
export function reportGoaldError(error: unknown, io: CliIO): number {
  if (isGoaldError(error)) {
    io.err(`goald: ${error.message}${error.hint ? ` — ${error.hint}` : ''}`);
    return error.exitCode;
  }
  const wrapped = new GoaldError('internal', error instanceof Error ? error.message : String(error));
  io.err(`goald: internal error: ${wrapped.message}`);
  if (error instanceof Error && error.stack && io.env.GOALD_DEBUG) io.err(error.stack);
  return EXIT.internal;
}
