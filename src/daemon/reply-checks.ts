// Light shape checks for what the daemon sends back to the CLI. Hand-written type guards rather than zod:
// every CLI command that talks to the daemon loads the client, and importing zod alone costs ~100 ms of
// startup on a small machine — half of what `goald status` may cost in all (bench/daemon.bench.ts).
// The daemon is our own code, so a reply needs only look right; anything off means the two sides
// disagree (versions), which the client reports as such.

/** Narrows an unknown (parsed JSON) value to T, or says it is not one. */
export type Check<T> = (value: unknown) => value is T;

type Checked<S> = { [K in keyof S]: S[K] extends Check<infer T> ? T : never };

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export const isString: Check<string> = (value): value is string => typeof value === 'string';
export const isNumber: Check<number> = (value): value is number => typeof value === 'number';
export const isBoolean: Check<boolean> = (value): value is boolean => typeof value === 'boolean';

/** Exactly one of the given literal values. */
export function isOneOf<const T extends readonly (string | number | boolean)[]>(...values: T): Check<T[number]> {
  return (value): value is T[number] => values.includes(value as T[number]);
}

/** An object whose listed fields pass their checks (other fields are allowed). */
export function objectOf<S extends Record<string, Check<unknown>>>(shape: S): Check<Checked<S>> {
  return (value): value is Checked<S> => isRecord(value) && Object.entries(shape).every(([key, check]) => check(value[key]));
}

/** An array whose items all pass `check`. */
export function arrayOf<T>(check: Check<T>): Check<T[]> {
  return (value): value is T[] => Array.isArray(value) && value.every((item) => check(item));
}

/** A record that has at least these string fields; its type is taken on trust from the daemon. */
export function withStringFields<T>(...fields: readonly string[]): Check<T> {
  return (value): value is T => isRecord(value) && fields.every((field) => typeof value[field] === 'string');
}
