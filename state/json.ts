// Plain JSON values as goald persists them (settings, requests, machine snapshots): the schema that checks
// one read back, and the conversion that makes one from a live value.

import { z } from '../src/zod-mini.js';
import type { Json } from './types.js';

// Deeper than any value goald stores; a cycle (only a live value can have one) ends here instead of in a
// stack overflow.
const MAX_DEPTH = 256;

/** Whether `value` is a JSON value: null, a boolean, a finite number, a string, or arrays and plain objects of them. */
function isJsonValue(value: unknown, depth = 0): value is Json {
  if (value === null) return true;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      for (const item of Object.values(value)) if (!isJsonValue(item, depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * Any JSON value. A plain predicate rather than a recursive zod union: state.json holds several of these
 * (settings, machine snapshots) per goal, and the union made checking the file ~10× slower.
 */
export const jsonSchema: z.ZodMiniType<Json> = z.custom<Json>((value) => isJsonValue(value), { error: 'expected a JSON value' });

/** A value as it will read back from disk: JSON.stringify's rules (undefined dropped, NaN → null, dates → strings). */
export function toJson(value: unknown): Json {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('toJson: the value has no JSON form (undefined, a function or a symbol)');
  // JSON.parse of JSON.stringify's output is a JSON value by construction; nothing outside goald wrote it.
  return JSON.parse(text) as Json;
}
