// A last line of defence: secrets must never reach state.json. Settings are plain JSON built elsewhere,
// so before each write the serialized state is scanned for (1) keys named like a credential and (2) the
// value of any `*_API_KEY` environment variable. A hit refuses the write (a goald bug), naming the key
// or variable, never the value.

import { envEntriesNamed } from '../src/secrets/redact.js';

// Key names that only ever hold credentials. Deliberately narrow: `tokens`, `tokenBudget` and
// `turnTokenLimit` are counts, so a bare "token" is not on the list.
const SECRET_KEY_PATTERN = /^(?:.*api[-_]?key|.*secret|password|passwd|authorization|bearer|access[-_]?token)$/i;

// Real API keys are 30+ characters; shorter values (placeholders such as "changeme", "production")
// would match innocent text and refuse legitimate writes.
const MIN_SECRET_LENGTH = 16;

/** Returns the first credential-like key name in `value` (a JSON value), with its dot path, or null. */
function findSecretKey(value: unknown, path: string): string | null {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findSecretKey(item, `${path}.${index}`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const here = path === '' ? key : `${path}.${key}`;
      if (SECRET_KEY_PATTERN.test(key) && item !== null && item !== '') return here;
      const found = findSecretKey(item, here);
      if (found !== null) return found;
    }
  }
  return null;
}

// A key as JSON.stringify writes it: the name's last characters, its closing quote, a colon. Looser than
// SECRET_KEY_PATTERN (a key that only ends like one, a null or empty value): a JSON text it does not match
// holds no key the guard refuses.
const SECRET_KEY_IN_JSON = /(?:api[-_]?key|secret|password|passwd|authorization|bearer|access[-_]?token)":/i;

/** The `*_API_KEY` values of `env` long enough to be keys, with their names. */
function apiKeyValues(env: NodeJS.ProcessEnv): Array<[name: string, value: string]> {
  return envEntriesNamed(env, (name) => name.endsWith('_API_KEY')).filter(([, value]) => value.length >= MIN_SECRET_LENGTH);
}

// The first `*_API_KEY` variable whose value is in `serialized` (searched in its JSON-escaped form: that is
// how the value would appear inside any string of the file), or null.
function apiKeyIn(serialized: string, keys: ReadonlyArray<[name: string, value: string]>): string | null {
  return keys.find(([, value]) => serialized.includes(JSON.stringify(value).slice(1, -1)))?.[0] ?? null;
}

/**
 * Describes why `data` (about to be written as `serialized`) holds a secret, or returns null; `path`: where
 * `data` sits in the file (its dot path), for the field's name.
 */
export function findSecretInState(data: unknown, serialized: string, env: NodeJS.ProcessEnv, path = ''): string | null {
  const key = findSecretKey(data, path);
  if (key !== null) return `the field ${key} looks like a credential`;
  const variable = apiKeyIn(serialized, apiKeyValues(env));
  return variable === null ? null : `it contains the value of ${variable}`;
}

/**
 * A test for many compact JSON texts (`JSON.stringify(data)`) against `env`'s keys (looked up once): false
 * proves that findSecretInState finds nothing in that data, without walking it.
 */
export function stateSecretTest(env: NodeJS.ProcessEnv): (serialized: string) => boolean {
  const keys = apiKeyValues(env);
  return (serialized) => SECRET_KEY_IN_JSON.test(serialized) || apiKeyIn(serialized, keys) !== null;
}
