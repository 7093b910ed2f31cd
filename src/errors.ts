// The one error type for mistakes and environment failures. Expected outcomes (an agent that fails, a
// verdict that says "not yet") are values, never GoaldErrors.

/** Stable error codes; they cross the socket and appear in `--json` output. */
export type ErrorCode =
  | 'usage'
  | 'config'
  | 'not-a-git-repo'
  | 'missing-api-key'
  | 'same-model'
  | 'state-corrupt'
  | 'state-locked'
  | 'not-found'
  | 'ambiguous'
  | 'conflict'
  | 'daemon-unreachable'
  | 'cluster-unreachable'
  | 'bad-request'
  | 'forbidden'
  | 'internal';

/** Documented process exit codes (README, CLI contract). */
export const EXIT = {
  ok: 0,
  goalFailed: 1,
  usage: 2,
  daemonUnreachable: 3,
  internal: 70,
} as const;

const EXIT_BY_CODE: Record<ErrorCode, number> = {
  usage: EXIT.usage,
  config: EXIT.usage,
  'not-a-git-repo': EXIT.usage,
  'missing-api-key': EXIT.usage,
  'same-model': EXIT.usage,
  'state-corrupt': EXIT.usage,
  'state-locked': EXIT.internal,
  'not-found': EXIT.usage,
  ambiguous: EXIT.usage,
  conflict: EXIT.usage,
  'bad-request': EXIT.usage,
  forbidden: EXIT.usage,
  'daemon-unreachable': EXIT.daemonUnreachable,
  'cluster-unreachable': EXIT.daemonUnreachable,
  internal: EXIT.internal,
};

export class GoaldError extends Error {
  override readonly name = 'GoaldError';
  readonly code: ErrorCode;
  /** What to run or change next; shown after the message. */
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, hint?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.hint = hint;
  }

  get exitCode(): number {
    return EXIT_BY_CODE[this.code];
  }

  toJSON(): { code: ErrorCode; message: string; hint?: string } {
    return this.hint === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, hint: this.hint };
  }
}

export function isGoaldError(value: unknown): value is GoaldError {
  return value instanceof GoaldError;
}
