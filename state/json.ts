// Plain JSON values as goald persists them (settings, requests, machine snapshots): the schema that checks
// one read back, and the conversion that makes one from a live value.

import { z } from 'zod';
import type { Json } from './types.js';

/** Any JSON value. */
export const jsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonSchema), z.record(z.string(), jsonSchema)]),
);

/** A value as it will read back from disk: JSON.stringify's rules (undefined dropped, NaN → null, dates → strings). */
export function toJson(value: unknown): Json {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('toJson: the value has no JSON form (undefined, a function or a symbol)');
  // JSON.parse of JSON.stringify's output is a JSON value by construction; nothing outside goald wrote it.
  return JSON.parse(text) as Json;
}
