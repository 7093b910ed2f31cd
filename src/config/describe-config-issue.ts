// Turns a zod issue of a config file into one line: `limits.maxTurn: unknown key (did you mean
// maxTurns?)`, `checks.0.run: is required`. The path is the dot path a user would look for in the file.

import type { z } from '../zod.js';

/** The dot path of an issue (`limits.repeatedDiff.count`, `checks.0.run`), or `(root)`. */
function dotPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/** One issue as `<dot.path>: <message>`, on one line. */
export function describeConfigIssue(issue: z.core.$ZodIssue, schema: z.ZodType): string {
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '?';
    const known = knownKeysAt(schema, issue.path);
    const suggestion = known === null ? null : closestKey(key, known);
    const more = issue.keys.length > 1 ? ` (and ${issue.keys.length - 1} more unknown keys)` : '';
    const hint = suggestion === null ? '' : ` (did you mean ${suggestion}?)`;
    return oneLine(`${dotPath([...issue.path, key])}: unknown key${hint}${more}`);
  }
  return oneLine(`${dotPath(issue.path)}: ${issue.message}`);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}

interface SchemaDef {
  type?: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
  options?: unknown[];
  in?: unknown;
}

function defOf(schema: unknown): SchemaDef | null {
  if (schema === null || typeof schema !== 'object' || !('_zod' in schema)) return null;
  const internals = (schema as { _zod: { def?: SchemaDef } })._zod;
  return internals.def ?? null;
}

/** Follows `path` through the schema (objects, arrays, optional/nullable wrappers) to an object's keys. */
function knownKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] | null {
  const def = defOf(schema);
  if (def === null) return null;
  if (def.innerType !== undefined) return knownKeysAt(def.innerType, path);
  if (def.type === 'pipe') return knownKeysAt(def.in, path);
  if (def.type === 'union' && def.options !== undefined) {
    for (const option of def.options) {
      const keys = knownKeysAt(option, path);
      if (keys !== null) return keys;
    }
    return null;
  }
  if (path.length === 0) return def.type === 'object' && def.shape !== undefined ? Object.keys(def.shape) : null;
  const [head, ...rest] = path;
  if (def.type === 'array') return knownKeysAt(def.element, rest);
  if (def.type === 'object' && def.shape !== undefined && typeof head === 'string') {
    return knownKeysAt(def.shape[head], rest);
  }
  return null;
}

/** The known key closest to a misspelt one (case-insensitive edit distance ≤ 2, or a prefix), or null. */
function closestKey(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const lowered = key.toLowerCase();
  if (bestDistance <= 2) return best;
  return known.find((candidate) => lowered.length >= 3 && candidate.toLowerCase().startsWith(lowered)) ?? null;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
