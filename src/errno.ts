// Node system errors (ENOENT, EEXIST, ...) told apart by their code. Imports nothing, so the hook's fast
// path and the state layer can both use it.

/** The `code` of a Node system error (`ENOENT`, `EEXIST`, ...); undefined for anything else. */
export function errnoCodeOf(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** Whether `error` is a Node system error with the given code. */
export function isErrnoCode(error: unknown, code: string): boolean {
  return errnoCodeOf(error) === code;
}
